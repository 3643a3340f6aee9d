"""Chat models behind one protocol (:class:`ChatModel`)."""

from tansaku.agent.models.base import (
    ChatModel,
    ChatResponse,
    Message,
    ModelError,
    ModelRateLimited,
    ModelTimeout,
    ModelUnavailable,
    ToolCall,
)

__all__ = [
    "ChatModel",
    "ChatResponse",
    "Message",
    "ModelError",
    "ModelRateLimited",
    "ModelTimeout",
    "ModelUnavailable",
    "ToolCall",
]

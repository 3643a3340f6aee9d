"""Chat models behind one protocol (:class:`ChatModel`): OpenAI-compatible servers
(``openai_compat``), Gemini (``gemini``), a local GGUF model (``llamacpp``); which one is used
comes from ``config.load_model``. The SDKs are imported only when a model is built."""

from tansaku.agent.models.base import (
    ChatModel,
    ChatOptions,
    ChatResponse,
    Message,
    ModelError,
    ModelRateLimited,
    ModelTimeout,
    ModelUnavailable,
    ToolCall,
)
from tansaku.agent.models.config import ModelSettings, load_model, resolve_settings

__all__ = [
    "ChatModel",
    "ChatOptions",
    "ChatResponse",
    "Message",
    "ModelError",
    "ModelRateLimited",
    "ModelSettings",
    "ModelTimeout",
    "ModelUnavailable",
    "ToolCall",
    "load_model",
    "resolve_settings",
]

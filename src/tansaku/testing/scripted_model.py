"""An in-process chat model for tests: a real implementation of the
:class:`~tansaku.agent.models.base.ChatModel` protocol whose replies come from a script,
recording every request. For testing what calls a model (the agent loop, query expansion,
Q/A generation) without a provider; the providers themselves are tested against the fake
HTTP servers of this package.

>>> model = ScriptedChatModel(steps=[say("こんにちは")])
>>> model.chat([Message(role="user", content="やあ")]).content
'こんにちは'

A step is a :class:`ChatResponse`, an exception to raise, or a function of the
:class:`ChatRequest` returning the reply; with ``reply`` instead of ``steps`` every request is
answered by that function (a string reply is the content; a dict or list, JSON).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from tansaku.agent.models.base import BaseChatModel, ChatCall, ChatResponse, Message, ToolCall

__all__ = ["ChatRequest", "ScriptedChatModel", "Step", "call", "say"]


@dataclass(frozen=True)
class ChatRequest:
    """One ``chat()`` call as the model received it."""

    messages: tuple[Message, ...]
    tools: tuple[str, ...]
    timeout: float | None
    json_schema: dict[str, Any] | None

    @property
    def prompt(self) -> str:
        """The last message's text."""
        return self.messages[-1].content if self.messages else ""


Reply = ChatResponse | str | dict[str, Any] | list[Any]
Step = ChatResponse | Exception | Callable[[ChatRequest], Reply]


def say(text: str, **usage: int) -> ChatResponse:
    """A plain text reply."""
    return ChatResponse(content=text, model="scripted", usage=dict(usage))


def call(*calls: tuple[str, Any], thought: str = "", **usage: int) -> ChatResponse:
    """Tool calls; a dict argument becomes JSON, a string is sent as it is (malformed too)."""
    return ChatResponse(
        content=thought,
        tool_calls=tuple(
            ToolCall(
                id=f"call_{i}",
                name=name,
                arguments=args if isinstance(args, str) else json.dumps(args, ensure_ascii=False),
            )
            for i, (name, args) in enumerate(calls)
        ),
        finish_reason="tool_calls",
        model="scripted",
        usage=dict(usage),
    )


def _response(reply: Reply) -> ChatResponse:
    if isinstance(reply, ChatResponse):
        return reply
    if isinstance(reply, str):
        return ChatResponse(content=reply, model="scripted")
    return ChatResponse(content=json.dumps(reply, ensure_ascii=False), model="scripted")


@dataclass
class ScriptedChatModel(BaseChatModel):
    """Replies from ``steps`` in order (an exhausted script is an AssertionError naming the
    request), or from ``reply(request)`` for every request. Thread-safe."""

    steps: list[Step] = field(default_factory=list)
    reply: Callable[[ChatRequest], Reply] | None = None
    model_name: str = "scripted:test"
    requests: list[ChatRequest] = field(default_factory=list)
    on_chat: Callable[[], None] | None = None
    """Called on every request before it is answered (to block, count or fail from outside)."""
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    @property
    def name(self) -> str:
        return self.model_name

    def complete(self, call: ChatCall) -> ChatResponse:
        on_text = call.on_text
        request = ChatRequest(
            call.messages, tuple(t.name for t in call.tools), call.timeout, call.json_schema
        )
        with self._lock:
            self.requests.append(request)
            if self.reply is None and not self.steps:
                raise AssertionError(f"no scripted reply left for request {len(self.requests)}")
            step: Step | None = self.steps.pop(0) if self.steps else None
        if self.on_chat is not None:
            self.on_chat()
        if isinstance(step, Exception):
            raise step
        if step is None:
            assert self.reply is not None
            reply = _response(self.reply(request))
        elif isinstance(step, ChatResponse):
            reply = step
        else:
            reply = _response(step(request))
        if on_text is not None and reply.content:
            on_text(reply.content)
        return reply

    def failure(self, exc: Exception, call: ChatCall) -> Exception:
        return exc  # a scripted failure reaches the caller as it was written

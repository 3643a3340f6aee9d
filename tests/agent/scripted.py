"""A scripted chat model: a real implementation of the :class:`ChatModel` protocol whose replies
come from a queue (a reply, an exception to raise, or a function of the request), recording
every request — for testing the loop without a provider (the providers have their own tests
against the fake HTTP servers)."""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from tansaku.agent.models.base import ChatResponse, Message, TextCallback, ToolCall
from tansaku.tools.spec import ToolSpec


@dataclass(frozen=True)
class Request:
    messages: tuple[Message, ...]
    tools: tuple[str, ...]
    timeout: float | None
    json_schema: dict[str, Any] | None


Step = ChatResponse | Exception | Callable[[Request], ChatResponse]


def say(text: str, **usage: int) -> ChatResponse:
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


def review(answer: str, status: str = "answered", critique: str = "確認しました") -> ChatResponse:
    data = {"critique": critique, "status": status, "answer": answer}
    return say(json.dumps(data, ensure_ascii=False))


def refs(request: Request) -> list[str]:
    """The source markers the tools' results carry in ``request`` (in order)."""
    found: list[str] = []
    for m in request.messages:
        if m.role == "tool":
            found += [r for r in re.findall(r'"ref": "(\[\d+\])"', m.content) if r not in found]
    return found


@dataclass
class ScriptedModel:
    steps: list[Step]
    model_name: str = "scripted:test"
    requests: list[Request] = field(default_factory=list)
    on_chat: Callable[[], None] | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def name(self) -> str:
        return self.model_name

    def chat(
        self,
        messages: Sequence[Message],
        *,
        tools: Sequence[ToolSpec] = (),
        temperature: float | None = None,
        max_tokens: int | None = None,
        timeout: float | None = None,
        json_schema: dict[str, Any] | None = None,
        on_text: TextCallback | None = None,
    ) -> ChatResponse:
        request = Request(tuple(messages), tuple(t.name for t in tools), timeout, json_schema)
        with self._lock:
            self.requests.append(request)
            if not self.steps:
                raise AssertionError(f"no scripted reply left for request {len(self.requests)}")
            step = self.steps.pop(0)
        if self.on_chat is not None:
            self.on_chat()
        if isinstance(step, Exception):
            raise step
        reply = step if isinstance(step, ChatResponse) else step(request)
        if on_text is not None and reply.content:
            on_text(reply.content)
        return reply

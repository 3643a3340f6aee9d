"""What the fake chat-model servers share: the script (replies, in a provider-neutral form), the
recorded requests, and an HTTP server on 127.0.0.1 in a thread that can stream.

A protocol module (:mod:`~tansaku.testing.fake_openai_server`,
:mod:`~tansaku.testing.fake_gemini_server`) subclasses :class:`FakeChatServer` and implements
``_route``: parse and validate a request the way the real server does, then render the
:class:`Reply` the script gives for it.
"""

from __future__ import annotations

import json
from collections import deque
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from tansaku.testing._http_fake import HTTPFake, HTTPRequest, Response

FakeRole = Literal["system", "user", "assistant", "tool"]


@dataclass(frozen=True)
class ScriptedCall:
    """A tool call the fake model makes. ``arguments`` as a string is sent verbatim (it may be
    malformed JSON on purpose); a mapping is serialised."""

    name: str
    arguments: str | Mapping[str, Any] = "{}"
    id: str | None = None

    def arguments_text(self) -> str:
        if isinstance(self.arguments, str):
            return self.arguments
        return json.dumps(dict(self.arguments), ensure_ascii=False)


@dataclass(frozen=True, kw_only=True)
class Reply:
    """One scripted answer of the fake model (or one misbehaviour of the server)."""

    text: str = ""
    tool_calls: tuple[ScriptedCall, ...] = ()
    refusal: str | None = None
    """The model declines (OpenAI ``message.refusal``; Gemini ``finishReason: SAFETY``)."""
    status: int | None = None
    """Answer with this HTTP error instead (e.g. 429, 500, 401)."""
    error_message: str = ""
    retry_after: float | None = None
    """Seconds for the ``Retry-After`` header of an error."""
    delay_s: float = 0.0
    """Wait this long before answering (longer than the client's timeout: a timeout)."""
    chunk_delay_s: float = 0.0
    """Streamed replies: wait this long between chunks."""
    finish_reason: str | None = None
    """Override the protocol's finish reason (e.g. ``"length"`` / ``"MAX_TOKENS"``)."""

    @classmethod
    def say(cls, text: str, **kw: Any) -> Reply:
        return cls(text=text, **kw)

    @classmethod
    def call(
        cls, name: str, arguments: str | Mapping[str, Any] = "{}", *, id: str | None = None
    ) -> Reply:
        return cls(tool_calls=(ScriptedCall(name, arguments, id),))

    @classmethod
    def calls(cls, *calls: ScriptedCall | tuple[str, str | Mapping[str, Any]]) -> Reply:
        """Parallel tool calls in one reply."""
        out = tuple(c if isinstance(c, ScriptedCall) else ScriptedCall(*c) for c in calls)
        return cls(tool_calls=out)

    @classmethod
    def error(cls, status: int, message: str = "", *, retry_after: float | None = None) -> Reply:
        return cls(status=status, error_message=message, retry_after=retry_after)

    @classmethod
    def refuse(cls, text: str = "I'm sorry, but I can't help with that.") -> Reply:
        return cls(refusal=text)

    @classmethod
    def slow(cls, seconds: float, then: Reply | None = None) -> Reply:
        return replace(then or cls(text="遅れてすみません"), delay_s=seconds)


@dataclass(frozen=True, kw_only=True)
class FakeMessage:
    """A message of a request, the same for every protocol (for assertions and handlers)."""

    role: FakeRole
    content: str = ""
    tool_calls: tuple[ScriptedCall, ...] = ()
    name: str | None = None
    """Tool results: the tool's name."""
    tool_call_id: str | None = None


@dataclass(frozen=True, kw_only=True)
class ChatTurn:
    """A chat request the fake understood, in the same form for every protocol."""

    model: str
    messages: tuple[FakeMessage, ...]
    tools: tuple[str, ...] = ()
    json_schema: dict[str, Any] | None = None
    stream: bool = False
    temperature: float | None = None
    max_tokens: int | None = None

    @property
    def last(self) -> FakeMessage:
        return self.messages[-1]

    def tool_results(self) -> list[FakeMessage]:
        """The tool messages after the last assistant turn (the observations just returned)."""
        out: list[FakeMessage] = []
        for m in reversed(self.messages):
            if m.role != "tool":
                break
            out.append(m)
        return out[::-1]


Handler = Callable[[ChatTurn], Reply]


@dataclass(frozen=True)
class FakeRequest(HTTPRequest):
    """One HTTP request the fake received, recorded before any check (``headers`` lowercased;
    ``body``: the parsed JSON, or ``None`` when it was not JSON)."""

    turn: ChatTurn | None = field(default=None, compare=False)
    """The chat request as understood (None when it was rejected)."""


def fragments(text: str, size: int = 4) -> list[str]:
    """``text`` cut in pieces of ``size`` characters (how a streamed reply arrives)."""
    return [text[i : i + size] for i in range(0, len(text), size)] if text else []


def count_tokens(text: str) -> int:
    """A deterministic stand-in for a tokenizer: one token per two characters."""
    return (len(text) + 1) // 2


class FakeChatServer(HTTPFake[FakeRequest]):
    """A chat-model server on 127.0.0.1 (ephemeral port) in a background thread, answering from
    a script: a queue of :class:`Reply` (``script(...)``), else ``handler(turn)``."""

    server_name = "FakeChat/1.0"

    def __init__(
        self,
        replies: Iterable[Reply] = (),
        *,
        handler: Handler | None = None,
        api_key: str | None = None,
        model: str = "fake-model",
    ) -> None:
        super().__init__()
        self.handler = handler
        self.api_key = api_key
        self.model = model
        self._replies: deque[Reply] = deque(replies)

    # -- script ---------------------------------------------------------------------------------

    def script(self, *replies: Reply) -> None:
        """Queue replies; each chat request takes the next one."""
        with self._lock:
            self._replies.extend(replies)

    @property
    def pending(self) -> int:
        """Scripted replies not used yet."""
        with self._lock:
            return len(self._replies)

    def next_reply(self, turn: ChatTurn) -> Reply | None:
        with self._lock:
            if self._replies:
                return self._replies.popleft()
        return self.handler(turn) if self.handler is not None else None

    @property
    def turns(self) -> list[ChatTurn]:
        """The chat requests that were understood, oldest first."""
        return [r.turn for r in self.requests if r.turn is not None]

    def reset(self) -> None:
        with self._lock:
            self._requests.clear()
            self._replies.clear()

    # -- handling -------------------------------------------------------------------------------

    def _understood(self, index: int, turn: ChatTurn) -> None:
        with self._lock:
            self._requests[index] = replace(self._requests[index], turn=turn)

    def _reply_for(self, index: int, turn: ChatTurn) -> Reply | tuple[int, str]:
        """Record request ``index`` as understood; the scripted reply for it (after its delay),
        or the ``(status, message)`` to answer instead (no reply left; the server closing)."""
        self._understood(index, turn)
        reply = self.next_reply(turn)
        if reply is None:
            return 400, (
                f"{type(self).__name__}: no scripted reply left for request "
                f"#{index + 1} (script more replies or set a handler)"
            )
        if self.wait(reply.delay_s):
            return 503, "server shutting down"
        return reply

    def _route(self, method: str, request: FakeRequest, index: int) -> Response:
        raise NotImplementedError

    def handle(self, request: HTTPRequest) -> Response:
        lowered = {k.lower(): v for k, v in request.headers.items()}
        record = FakeRequest(request.method, request.path, request.query, lowered, request.raw)
        return self._route(request.method, record, self._record(record))

"""Any OpenAI-compatible chat-completions server — OpenAI, Ollama, vLLM, llama.cpp's server,
LM Studio — through the official ``openai`` SDK (extra ``llm``).

>>> model = OpenAIChatModel(model="qwen2.5:7b", base_url="http://localhost:11434/v1")
>>> model.chat([Message.user("先月のクレーム傾向を教えて")], tools=specs).tool_calls

The SDK does the HTTP: retries on 408/409/429/5xx with exponential backoff (honouring
``Retry-After``), timeouts, connection reuse. This module converts messages and tools, assembles
streamed ``tool_calls`` deltas, and turns every SDK exception into a
:class:`~tansaku.agent.models.base.ModelError` with a Japanese message.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

from tansaku.agent.models._errors import Endpoint, forward_text
from tansaku.agent.models._remote import RemoteChatModel
from tansaku.agent.models.base import (
    ChatCall,
    ChatResponse,
    FinishReason,
    Message,
    ModelError,
    TextCallback,
    ToolCall,
)
from tansaku.errors import MissingExtra

DEFAULT_TIMEOUT = 60.0
DEFAULT_RETRIES = 2
_NO_KEY = "no-key-required"  # local servers ignore the key; the SDK insists on one
_FINISH: dict[str, FinishReason] = {
    "stop": "stop",
    "tool_calls": "tool_calls",
    "function_call": "tool_calls",
    "length": "length",
    "content_filter": "refusal",
}


def to_openai_messages(messages: Sequence[Message]) -> list[dict[str, Any]]:
    """Our messages as chat-completions ``messages``."""
    out: list[dict[str, Any]] = []
    for m in messages:
        if m.role == "tool":
            out.append({"role": "tool", "tool_call_id": m.tool_call_id or "", "content": m.content})
        elif m.role == "assistant" and m.tool_calls:
            calls = [
                {
                    "id": c.id,
                    "type": "function",
                    "function": {"name": c.name, "arguments": c.arguments or "{}"},
                }
                for c in m.tool_calls
            ]
            out.append({"role": "assistant", "content": m.content or None, "tool_calls": calls})
        else:
            out.append({"role": m.role, "content": m.content})
    return out


def response_format(schema: dict[str, Any]) -> dict[str, Any]:
    """Structured output: ``response_format`` of type ``json_schema`` (non-strict, so any JSON
    schema is accepted; vLLM, Ollama and llama.cpp enforce it by grammar)."""
    title = re.sub(r"[^a-zA-Z0-9_-]", "_", str(schema.get("title") or "response"))[:64]
    return {"type": "json_schema", "json_schema": {"name": title, "schema": schema}}


class _Assembler:
    """Streamed chunks → one reply: text, refusal and tool calls from their deltas."""

    def __init__(self, on_text: TextCallback | None) -> None:
        self.on_text = on_text
        self.text: list[str] = []
        self.refusal: list[str] = []
        self.calls: dict[int, dict[str, Any]] = {}
        self.finish: str | None = None
        self.model = ""
        self.usage: dict[str, int] = {}

    def add(self, chunk: Any) -> None:
        self.model = chunk.model or self.model
        if chunk.usage is not None:
            self.usage = _usage(chunk.usage)
        for choice in chunk.choices or []:
            self.finish = choice.finish_reason or self.finish
            delta = choice.delta
            if delta is None:
                continue
            if delta.content:
                self.text.append(delta.content)
                forward_text(self.on_text, delta.content)
            if getattr(delta, "refusal", None):
                self.refusal.append(delta.refusal)
            for tc in delta.tool_calls or []:
                self._call_delta(tc)

    def _call_delta(self, tc: Any) -> None:
        index = tc.index if isinstance(tc.index, int) else len(self.calls)
        slot = self.calls.get(index)
        if slot is not None and tc.id and slot["id"] and tc.id != slot["id"]:
            index = max(self.calls) + 1  # a server that numbers every call 0 (early Ollama)
            slot = None
        if slot is None:
            slot = self.calls[index] = {"id": "", "name": "", "arguments": []}
        slot["id"] = tc.id or slot["id"]
        fn = tc.function
        if fn is not None:
            if fn.name and fn.name != slot["name"]:
                slot["name"] = fn.name if not slot["name"] else slot["name"] + fn.name
            if fn.arguments:
                slot["arguments"].append(_text(fn.arguments))

    def response(self) -> ChatResponse:
        calls = tuple(
            ToolCall(
                id=s["id"] or f"call_{i}", name=s["name"], arguments="".join(s["arguments"]) or "{}"
            )
            for i, s in (sorted(self.calls.items()))
        )
        return _reply(
            "".join(self.text), "".join(self.refusal), calls, self.finish, self.model, self.usage
        )


def _text(arguments: Any) -> str:
    """Arguments as JSON text (a few servers send an object where OpenAI sends a string)."""
    if arguments is None or isinstance(arguments, str):
        return arguments or ""
    return json.dumps(arguments, ensure_ascii=False)


def _usage(usage: Any) -> dict[str, int]:
    if usage is None:
        return {}
    return {
        "prompt_tokens": int(usage.prompt_tokens or 0),
        "completion_tokens": int(usage.completion_tokens or 0),
    }


def _reply(
    text: str,
    refusal: str,
    calls: tuple[ToolCall, ...],
    finish: str | None,
    model: str,
    usage: dict[str, int],
) -> ChatResponse:
    reason: FinishReason = _FINISH.get(finish or "stop", "stop")
    if calls:
        reason = "tool_calls"  # some servers (Ollama) say "stop" beside their calls
    elif refusal:
        reason, text = "refusal", text or refusal
    elif reason == "tool_calls":
        reason = "stop"
    return ChatResponse(
        content=text, tool_calls=calls, finish_reason=reason, model=model, usage=usage
    )


class OpenAIChatModel(RemoteChatModel):
    """A chat model behind an OpenAI-compatible ``/v1/chat/completions`` endpoint."""

    def __init__(
        self,
        *,
        model: str,
        base_url: str | None = None,
        api_key: str | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        max_retries: int = DEFAULT_RETRIES,
        temperature: float | None = None,
        provider: str = "openai",
    ) -> None:
        try:
            import openai
        except ImportError:
            raise MissingExtra("openai", "llm", "OpenAI 互換のチャットモデル") from None
        super().__init__(model=model, timeout=timeout, temperature=temperature)
        self.provider = provider
        self._official = base_url is None or "api.openai.com" in base_url
        self._client = openai.OpenAI(
            base_url=base_url,
            api_key=api_key or _NO_KEY,
            timeout=timeout,
            max_retries=max_retries,
        )
        url = str(self._client.base_url)
        self._endpoint = Endpoint(provider, model, url, max_retries, api_key)

    def complete(self, call: ChatCall) -> ChatResponse:
        kwargs: dict[str, Any] = {
            "model": self.model,
            "messages": to_openai_messages(call.messages),
        }
        if call.tools:
            kwargs["tools"] = [t.to_openai() for t in call.tools]
        temp = call.temperature if call.temperature is not None else self.temperature
        if temp is not None:
            kwargs["temperature"] = temp
        if call.max_tokens is not None:
            key = "max_completion_tokens" if self._official else "max_tokens"
            kwargs[key] = call.max_tokens
        if call.json_schema is not None:
            kwargs["response_format"] = response_format(call.json_schema)
        limit = self._limit(call)
        if call.on_text is None:
            return self._complete(kwargs, limit)
        return self._streamed(kwargs, limit, call.on_text)

    def failure(self, exc: Exception, call: ChatCall) -> Exception:
        return self._error(exc, self._limit(call))

    def _complete(self, kwargs: dict[str, Any], limit: float) -> ChatResponse:
        completion = self._client.chat.completions.create(**kwargs, timeout=limit)
        if not completion.choices:
            raise self._endpoint.bad_response("choices が空です")
        choice = completion.choices[0]
        msg = choice.message
        calls = tuple(
            ToolCall(
                id=c.id or f"call_{i}",
                name=c.function.name,
                arguments=_text(c.function.arguments) or "{}",
            )
            for i, c in enumerate(msg.tool_calls or [])
            if getattr(c, "function", None) is not None
        )
        return _reply(
            msg.content or "",
            getattr(msg, "refusal", None) or "",
            calls,
            choice.finish_reason,
            completion.model,
            _usage(completion.usage),
        )

    def _streamed(
        self, kwargs: dict[str, Any], limit: float, on_text: TextCallback
    ) -> ChatResponse:
        assembler = _Assembler(on_text)
        self._stream(
            limit,
            lambda: self._client.chat.completions.create(
                **kwargs, stream=True, stream_options={"include_usage": True}, timeout=limit
            ),
            assembler.add,
        )
        return assembler.response()

    def _error(self, exc: Exception, limit: float) -> ModelError:
        import openai

        ep = self._endpoint
        if isinstance(exc, openai.APITimeoutError):
            return ep.timeout(limit)
        if isinstance(exc, openai.APIConnectionError):
            cause = exc.__cause__ or exc
            return ep.unreachable(f"{type(cause).__name__}: {cause}")
        if isinstance(exc, openai.APIStatusError):
            return ep.status(exc.status_code, _detail(exc))
        if isinstance(exc, openai.APIError):
            return ep.bad_response(exc.message)
        return ep.bad_response(f"{type(exc).__name__}: {exc}")


def _detail(exc: Any) -> str:
    body = getattr(exc, "body", None)
    if isinstance(body, dict):
        error = body.get("error", body)
        message = error.get("message") if isinstance(error, dict) else error
        if isinstance(message, str) and message:
            return message
    return str(getattr(exc, "message", "") or "")

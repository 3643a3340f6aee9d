"""A local fake OpenAI chat-completions server: real HTTP on 127.0.0.1, scripted replies.

It ships with the library (like the rerank fake) so that code using any OpenAI-compatible
server (OpenAI, Ollama, vLLM, llama.cpp server, LM Studio) is tested without a model::

    with FakeOpenAIServer([Reply.call("search_past_cases", {"query": "冷蔵庫"}),
                           Reply.say("冷蔵庫の故障は3件です。")]) as srv:
        model = OpenAIChatModel(base_url=srv.base_url, model="gpt-4o-mini", api_key="k")
        ...
        assert srv.turns[-1].tool_results()[0].name == "search_past_cases"

``POST /v1/chat/completions`` answers non-streamed (``chat.completion``) or streamed (SSE
``data: {chat.completion.chunk}`` lines, then ``data: [DONE]``), with ``tool_calls`` streamed as
deltas the way OpenAI does (``index``; ``id``, ``type`` and ``name`` in the first delta; the
``arguments`` in fragments), ``refusal``, ``usage`` (and the final usage chunk of
``stream_options.include_usage``). Requests are validated as OpenAI does (400
``{"error": {"message", "type", "param", "code"}}``; a ``tool`` message must answer a preceding
``tool_calls`` entry, and every call must be answered), the ``Authorization: Bearer`` header is
checked when ``api_key`` is set (401). ``GET /v1/models`` lists ``model``.

Replies come from a queue (:meth:`script` or the constructor) and then from ``handler(turn)``;
see :class:`~tansaku.testing._fake_llm.Reply` for text, tool calls, refusals, HTTP errors with
``Retry-After`` and delays.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any

from tansaku.testing._fake_llm import (
    ChatTurn,
    FakeChatServer,
    FakeMessage,
    FakeRequest,
    Reply,
    ScriptedCall,
    count_tokens,
    fragments,
)
from tansaku.testing._http_fake import Response, json_response, openai_error_body, sse

_ROLES = {
    "system": "system",
    "developer": "system",
    "user": "user",
    "assistant": "assistant",
    "tool": "tool",
    "function": "tool",
}
_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
_CREATED = 1_767_225_600


class _Bad(Exception):
    def __init__(self, message: str, param: str | None = None, status: int = 400) -> None:
        super().__init__(message)
        self.message, self.param, self.status = message, param, status


def _error(
    status: int,
    message: str,
    *,
    param: str | None = None,
    code: str | None = None,
    kind: str = "invalid_request_error",
    headers: Mapping[str, str] | None = None,
) -> Response:
    return json_response(status, openai_error_body(message, kind, param, code), headers)


def _text(content: Any, where: str) -> str:
    if content is None or isinstance(content, str):
        return content or ""
    if isinstance(content, list):
        parts = [p.get("text", "") for p in content if isinstance(p, dict)]
        if len(parts) == len(content) and all(isinstance(p, str) for p in parts):
            return "".join(parts)
    raise _Bad(f"Invalid type for '{where}': expected a string or an array of parts.", where)


def _calls(raw: Any, where: str) -> tuple[ScriptedCall, ...]:
    if raw is None:
        return ()
    if not isinstance(raw, list):
        raise _Bad(f"Invalid type for '{where}': expected an array.", where)
    out = []
    for j, c in enumerate(raw):
        fn = c.get("function") if isinstance(c, dict) else None
        if not isinstance(fn, dict) or not isinstance(c.get("id"), str):
            raise _Bad(f"Missing required parameter: '{where}[{j}].id' or 'function'.", where)
        args = fn.get("arguments")
        if not isinstance(fn.get("name"), str) or not isinstance(args, str):
            raise _Bad(f"Invalid '{where}[{j}].function': name and arguments must be strings.")
        out.append(ScriptedCall(fn["name"], args, c["id"]))
    return tuple(out)


def _messages(raw: Any) -> tuple[FakeMessage, ...]:
    if not isinstance(raw, list) or not raw:
        raise _Bad(
            "[] is too short - 'messages'" if raw == [] else "Missing 'messages'.", "messages"
        )
    out: list[FakeMessage] = []
    open_calls: dict[str, str] = {}
    for i, m in enumerate(raw):
        where = f"messages[{i}]"
        if not isinstance(m, dict):
            raise _Bad(f"Invalid type for '{where}': expected an object.", where)
        role = _ROLES.get(str(m.get("role")))
        if role is None:
            raise _Bad(
                f"Invalid value: '{m.get('role')}'. Supported values are: 'system', "
                "'assistant', 'user', 'function', 'tool', and 'developer'.",
                f"{where}.role",
            )
        if role != "tool" and open_calls:
            raise _Bad(
                "An assistant message with 'tool_calls' must be followed by tool messages"
                " responding to each 'tool_call_id'. The following tool_call_ids did not "
                f"have response messages: {', '.join(open_calls)}",
                "messages",
            )
        content = _text(m.get("content"), f"{where}.content")
        if role == "tool":
            call_id = m.get("tool_call_id")
            if call_id not in open_calls:
                raise _Bad(
                    "Invalid parameter: messages with role 'tool' must be a response to a "
                    "preceeding message with 'tool_calls'.",
                    f"{where}.role",
                )
            name = open_calls.pop(call_id)
            out.append(FakeMessage(role="tool", content=content, name=name, tool_call_id=call_id))
            continue
        calls = _calls(m.get("tool_calls"), f"{where}.tool_calls") if role == "assistant" else ()
        open_calls = {c.id or "": c.name for c in calls}
        out.append(FakeMessage(role=role, content=content, tool_calls=calls))  # type: ignore[arg-type]
    if open_calls:
        raise _Bad(
            "An assistant message with 'tool_calls' must be followed by tool messages "
            f"responding to each 'tool_call_id'. Missing: {', '.join(open_calls)}",
            "messages",
        )
    return tuple(out)


def _tools(raw: Any) -> tuple[str, ...]:
    if raw is None:
        return ()
    if not isinstance(raw, list):
        raise _Bad("Invalid type for 'tools': expected an array.", "tools")
    names = []
    for i, t in enumerate(raw):
        fn = t.get("function") if isinstance(t, dict) else None
        if not isinstance(fn, dict) or t.get("type") != "function":
            raise _Bad(f"Missing required parameter: 'tools[{i}].function'.", f"tools[{i}]")
        name = fn.get("name")
        if not isinstance(name, str) or not _NAME.match(name):
            raise _Bad(
                f"Invalid 'tools[{i}].function.name': string does not match pattern. "
                "Expected a string that matches the pattern '^[a-zA-Z0-9_-]+$'.",
                f"tools[{i}].function.name",
            )
        params = fn.get("parameters")
        if params is not None and not (isinstance(params, dict) and params.get("type") == "object"):
            raise _Bad(
                f"Invalid schema for function '{name}': schema must be a JSON Schema of "
                "'type: \"object\"'.",
                f"tools[{i}].function.parameters",
            )
        names.append(name)
    return tuple(names)


def _schema(raw: Any) -> dict[str, Any] | None:
    if raw is None:
        return None
    kind = raw.get("type") if isinstance(raw, dict) else None
    if kind in ("text", "json_object"):
        return None
    if kind != "json_schema":
        raise _Bad(
            f"Invalid value: '{kind}'. Supported values are: 'json_object', "
            "'json_schema', and 'text'.",
            "response_format.type",
        )
    js = raw.get("json_schema")
    if not isinstance(js, dict) or not isinstance(js.get("name"), str):
        raise _Bad(
            "Missing required parameter: 'response_format.json_schema.name'.",
            "response_format.json_schema.name",
        )
    schema = js.get("schema")
    if not isinstance(schema, dict):
        raise _Bad("Invalid 'response_format.json_schema.schema': expected an object.")
    return schema


def parse_chat_request(body: Any) -> ChatTurn:
    """The request as OpenAI would accept it (or :class:`_Bad` with OpenAI's wording)."""
    if not isinstance(body, dict):
        raise _Bad(
            "We could not parse the JSON body of your request. (HINT: This likely means "
            "you aren't using your HTTP library correctly.)"
        )
    if not isinstance(body.get("model"), str) or not body["model"]:
        raise _Bad("you must provide a model parameter", "model")
    stream = body.get("stream") or False
    if body.get("stream_options") is not None and not stream:
        raise _Bad(
            "The 'stream_options' parameter is only allowed when 'stream' is enabled.",
            "stream_options",
        )
    temperature = body.get("temperature")
    if temperature is not None and not (
        isinstance(temperature, int | float) and 0 <= temperature <= 2
    ):
        raise _Bad(
            f"Invalid 'temperature': {temperature!r}; expected a number in [0, 2].", "temperature"
        )
    max_tokens = body.get("max_completion_tokens", body.get("max_tokens"))
    if max_tokens is not None and (not isinstance(max_tokens, int) or max_tokens < 1):
        raise _Bad(
            f"Invalid 'max_tokens': integer below minimum value ({max_tokens!r}).", "max_tokens"
        )
    return ChatTurn(
        model=body["model"],
        messages=_messages(body.get("messages")),
        tools=_tools(body.get("tools")),
        json_schema=_schema(body.get("response_format")),
        stream=bool(stream),
        temperature=temperature,
        max_tokens=max_tokens,
    )


class FakeOpenAIServer(FakeChatServer):
    """An OpenAI chat-completions server on 127.0.0.1; ``base_url`` is what a client needs."""

    server_name = "FakeOpenAI/1.0"

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:PORT/v1``."""
        return f"{self.url}/v1"

    def _route(self, method: str, request: FakeRequest, index: int) -> Response:
        path = request.path.rstrip("/")
        if method == "GET" and path == "/v1/models":
            models = [{"id": self.model, "object": "model", "created": _CREATED, "owned_by": "me"}]
            return json_response(200, {"object": "list", "data": models})
        if path != "/v1/chat/completions":
            return _error(404, f"Unknown request URL: {method} {path}.", code="unknown_url")
        if method != "POST":
            return _error(405, f"Method {method} not allowed.")
        auth = request.headers.get("authorization", "")
        if self.api_key is not None and auth != f"Bearer {self.api_key}":
            given = auth.removeprefix("Bearer ")
            masked = f"{given[:3]}***{given[-4:]}" if len(given) > 8 else "***"
            return _error(401, f"Incorrect API key provided: {masked}.", code="invalid_api_key")
        try:
            turn = parse_chat_request(request.body)
        except _Bad as bad:
            return _error(bad.status, bad.message, param=bad.param)
        reply = self._reply_for(index, turn)
        if not isinstance(reply, Reply):
            status, message = reply
            kind = "server_error" if status >= 500 else "invalid_request_error"
            return _error(status, message, kind=kind)
        if reply.status is not None:
            return self._failure(reply)
        usage = self._usage(turn, reply)
        if not turn.stream:
            return json_response(200, self._completion(turn, reply, index, usage))
        body = request.body if isinstance(request.body, dict) else {}
        with_usage = bool((body.get("stream_options") or {}).get("include_usage"))
        chunks = self._chunks(turn, reply, index, usage if with_usage else None)
        return 200, {"Content-Type": "text/event-stream", "Cache-Control": "no-cache"}, chunks

    def _failure(self, reply: Reply) -> Response:
        status = reply.status or 500
        headers = {}
        if reply.retry_after is not None:
            headers["Retry-After"] = f"{reply.retry_after:g}"
        if status == 429:
            message = reply.error_message or "Rate limit reached for requests. Please try again."
            return _error(
                429, message, kind="requests", code="rate_limit_exceeded", headers=headers
            )
        kind = "server_error" if status >= 500 else "invalid_request_error"
        return _error(
            status, reply.error_message or f"fake error {status}", kind=kind, headers=headers
        )

    @staticmethod
    def _usage(turn: ChatTurn, reply: Reply) -> dict[str, int]:
        prompt = sum(count_tokens(m.content) + 4 for m in turn.messages)
        completion = count_tokens(reply.text + (reply.refusal or "")) + sum(
            count_tokens(c.name + c.arguments_text()) for c in reply.tool_calls
        )
        return {
            "prompt_tokens": prompt,
            "completion_tokens": completion,
            "total_tokens": prompt + completion,
        }

    @staticmethod
    def _call_ids(reply: Reply, index: int) -> list[str]:
        return [c.id or f"call_fake{index + 1}_{i}" for i, c in enumerate(reply.tool_calls)]

    def _finish(self, reply: Reply) -> str:
        return reply.finish_reason or ("tool_calls" if reply.tool_calls else "stop")

    def _completion(
        self, turn: ChatTurn, reply: Reply, index: int, usage: dict[str, int]
    ) -> dict[str, Any]:
        message: dict[str, Any] = {
            "role": "assistant",
            "content": reply.text
            if reply.text or not (reply.tool_calls or reply.refusal)
            else None,
            "refusal": reply.refusal,
        }
        if reply.tool_calls:
            message["tool_calls"] = [
                {
                    "id": cid,
                    "type": "function",
                    "function": {"name": c.name, "arguments": c.arguments_text()},
                }
                for cid, c in zip(self._call_ids(reply, index), reply.tool_calls, strict=True)
            ]
        choice = {
            "index": 0,
            "message": message,
            "logprobs": None,
            "finish_reason": self._finish(reply),
        }
        return {**self._head(turn, index, "chat.completion"), "choices": [choice], "usage": usage}

    def _head(self, turn: ChatTurn, index: int, kind: str) -> dict[str, Any]:
        return {
            "id": f"chatcmpl-fake{index + 1}",
            "object": kind,
            "created": _CREATED,
            "model": turn.model,
            "system_fingerprint": "fp_fake",
        }

    def _chunks(
        self, turn: ChatTurn, reply: Reply, index: int, usage: dict[str, int] | None
    ) -> Iterator[bytes]:
        head = self._head(turn, index, "chat.completion.chunk")
        extra = {"usage": None} if usage is not None else {}

        def chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
            choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}
            return sse({**head, "choices": [choice], **extra})

        deltas: list[dict[str, Any]] = [{"role": "assistant", "content": "", "refusal": None}]
        deltas += [{"content": piece} for piece in fragments(reply.text)]
        deltas += [{"refusal": piece} for piece in fragments(reply.refusal or "")]
        for i, (cid, call) in enumerate(
            zip(self._call_ids(reply, index), reply.tool_calls, strict=True)
        ):
            first = {
                "index": i,
                "id": cid,
                "type": "function",
                "function": {"name": call.name, "arguments": ""},
            }
            deltas.append({"tool_calls": [first]})
            deltas += [
                {"tool_calls": [{"index": i, "function": {"arguments": piece}}]}
                for piece in fragments(call.arguments_text(), 7)
            ]
        for n, delta in enumerate(deltas):
            if n and self.wait(reply.chunk_delay_s):
                return
            yield chunk(delta)
        yield chunk({}, self._finish(reply))
        if usage is not None:
            yield sse({**head, "choices": [], "usage": usage})
        yield b"data: [DONE]\n\n"


__all__ = ["ChatTurn", "FakeMessage", "FakeOpenAIServer", "Reply", "ScriptedCall"]

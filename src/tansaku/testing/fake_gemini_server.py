"""A local fake Gemini API server: real HTTP on 127.0.0.1, scripted replies.

It speaks what the official ``google-genai`` SDK sends and expects, so code using
:class:`~tansaku.agent.models.gemini.GeminiChatModel` is tested without a network::

    with FakeGeminiServer([Reply.calls(("search_manual", {"query": "食中毒"}),
                                       ("get_current_time", {}))]) as srv:
        model = GeminiChatModel(model="gemini-2.5-flash", api_key="k", base_url=srv.url)

``POST /{v1,v1beta}/models/{model}:generateContent`` and ``:streamGenerateContent?alt=sse``
(SSE ``data: {GenerateContentResponse}`` chunks: text in fragments, function calls whole, the
finish reason and ``usageMetadata`` on the last chunk). Replies carry ``functionCall`` parts
(several: parallel calls) with a ``thoughtSignature`` on the first, as Gemini's thinking models
do; ``functionResponse`` parts coming back are checked as Gemini checks them (they follow the
call turn, one per call, with an object ``response``; with ``require_signatures`` the call turn
must send its signature back). ``systemInstruction``, ``tools[].functionDeclarations``
(``parameters`` or ``parametersJsonSchema``), ``generationConfig`` (``responseMimeType`` with
``responseSchema``/``responseJsonSchema``) are validated; errors are Google's ``{"error": {code,
message, status}}``; ``x-goog-api-key`` (or ``?key=``) is checked when ``api_key`` is set.

A refusal is ``finishReason: SAFETY`` with no content; a scripted call whose arguments are not a
JSON object is ``finishReason: MALFORMED_FUNCTION_CALL``, as Gemini reports it.
"""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Iterable, Iterator, Mapping
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
from tansaku.testing._http_fake import Response, google_error_body, json_response, sse

_PATH = re.compile(
    r"^/(v1|v1beta|v1alpha)/models/([^/:]+):(generateContent|streamGenerateContent)$"
)
_NAME = re.compile(r"^[a-zA-Z_][a-zA-Z0-9_.:-]{0,127}$")


class _Bad(Exception):
    def __init__(self, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.message, self.status = message, status


def _error(
    status: int, message: str, headers: Mapping[str, str] | None = None, **extra: Any
) -> Response:
    return json_response(status, google_error_body(status, message, **extra), headers)


def _get(d: Mapping[str, Any], camel: str) -> Any:
    """A field in camelCase or snake_case (Google's JSON parser accepts both)."""
    snake = re.sub(r"([A-Z])", lambda m: "_" + m.group(1).lower(), camel)
    return d.get(camel, d.get(snake))


def _parts(content: Any, where: str) -> list[dict[str, Any]]:
    parts = content.get("parts") if isinstance(content, dict) else None
    if not isinstance(parts, list) or not parts or not all(isinstance(p, dict) for p in parts):
        raise _Bad(f"* GenerateContentRequest.{where}.parts: contents.parts must not be empty.")
    return parts


def _model_turn(parts: list[dict[str, Any]], where: str) -> FakeMessage:
    texts, calls = [], []
    for p in parts:
        fc = _get(p, "functionCall")
        if fc is None:
            texts.append(str(p.get("text") or ""))
            continue
        if not isinstance(fc, dict) or not isinstance(fc.get("name"), str):
            raise _Bad(f"* GenerateContentRequest.{where}: function_call.name is required.")
        args = fc.get("args") or {}
        calls.append(ScriptedCall(fc["name"], json.dumps(args, ensure_ascii=False), fc.get("id")))
    return FakeMessage(role="assistant", content="".join(texts), tool_calls=tuple(calls))


def _responses(parts: list[dict[str, Any]], where: str) -> list[FakeMessage]:
    out = []
    for p in parts:
        fr = _get(p, "functionResponse")
        if not isinstance(fr, dict) or not isinstance(fr.get("name"), str):
            raise _Bad(
                f"* GenerateContentRequest.{where}: mixing function responses with "
                "other parts is not supported."
            )
        if not isinstance(fr.get("response"), dict):
            raise _Bad(
                f"* GenerateContentRequest.{where}.function_response.response: "
                "must be an object (google.protobuf.Struct)."
            )
        content = json.dumps(fr["response"], ensure_ascii=False)
        out.append(
            FakeMessage(role="tool", content=content, name=fr["name"], tool_call_id=fr.get("id"))
        )
    return out


def _contents(raw: Any, require_signatures: bool) -> list[FakeMessage]:
    if not isinstance(raw, list) or not raw:
        raise _Bad("* GenerateContentRequest.contents: contents is not specified")
    out: list[FakeMessage] = []
    pending: tuple[ScriptedCall, ...] = ()
    signed: list[bool] = []  # the call turns since the last user text (the current turn)
    for i, content in enumerate(raw):
        where = f"contents[{i}]"
        parts = _parts(content, where)
        role = content.get("role") or "user"
        if role not in ("user", "model"):
            raise _Bad(
                f"* GenerateContentRequest.{where}.role: Please use a valid role: user, model."
            )
        is_response = any(_get(p, "functionResponse") is not None for p in parts)
        if pending and not is_response:
            raise _Bad(
                "Please ensure that function response turn comes immediately after a "
                "function call turn."
            )
        if is_response:
            answers = _responses(parts, where)
            if len(answers) != len(pending):
                raise _Bad(
                    "Please ensure that the number of function response parts is equal "
                    "to the number of function call parts of the function call turn."
                )
            out += answers
            pending = ()
        elif role == "model":
            message = _model_turn(parts, where)
            pending = message.tool_calls
            if pending:
                first = next(p for p in parts if _get(p, "functionCall") is not None)
                signed.append(bool(_get(first, "thoughtSignature")))
            out.append(message)
        else:
            texts = [str(p.get("text") or "") for p in parts]
            out.append(FakeMessage(role="user", content="".join(texts)))
            signed.clear()
    if pending:
        raise _Bad(
            "Please ensure that function response turn comes immediately after a "
            "function call turn."
        )
    if require_signatures and not all(signed):
        raise _Bad(
            "Function call is missing a thought_signature in functionCall parts. This is "
            "required for tools to work correctly, and missing thought_signature may "
            "lead to degraded model performance."
        )
    return out


def _tools(raw: Any) -> tuple[str, ...]:
    names: list[str] = []
    for i, tool in enumerate(raw or []):
        for j, fd in enumerate(_get(tool, "functionDeclarations") or []):
            name = fd.get("name") if isinstance(fd, dict) else None
            if not isinstance(name, str) or not _NAME.match(name):
                raise _Bad(
                    f"* GenerateContentRequest.tools[{i}].function_declarations[{j}].name:"
                    " Invalid function name. Must start with a letter or an underscore "
                    "and contain only a-z, A-Z, 0-9, underscores, dots, colons and "
                    "dashes, with a maximum length of 128."
                )
            params = _get(fd, "parameters") or _get(fd, "parametersJsonSchema")
            if params is not None and not isinstance(params, dict):
                raise _Bad(f"* tools[{i}].function_declarations[{j}].parameters: not an object")
            names.append(name)
    return tuple(names)


def parse_generate_request(
    body: Any, model: str, stream: bool, require_signatures: bool = False
) -> ChatTurn:
    """The request as the Gemini API would accept it (or :class:`_Bad` with its wording)."""
    if not isinstance(body, dict):
        raise _Bad("Invalid JSON payload received.")
    messages = _contents(_get(body, "contents"), require_signatures)
    system = _get(body, "systemInstruction")
    if system is not None:
        text = "".join(str(p.get("text") or "") for p in _parts(system, "system_instruction"))
        messages.insert(0, FakeMessage(role="system", content=text))
    config = _get(body, "generationConfig") or {}
    schema = _get(config, "responseJsonSchema") or _get(config, "responseSchema")
    if schema is not None and _get(config, "responseMimeType") != "application/json":
        raise _Bad(
            "* GenerateContentRequest.generation_config.response_mime_type: "
            "response_mime_type must be application/json when a response schema is set."
        )
    temperature = _get(config, "temperature")
    if temperature is not None and not 0 <= temperature <= 2:
        raise _Bad("* GenerateContentRequest.generation_config.temperature: must be in [0, 2].")
    return ChatTurn(
        model=model,
        messages=tuple(messages),
        tools=_tools(_get(body, "tools")),
        json_schema=schema,
        stream=stream,
        temperature=temperature,
        max_tokens=_get(config, "maxOutputTokens"),
    )


def _signature(index: int) -> str:
    return base64.b64encode(f"fake-signature-{index + 1}".encode()).decode("ascii")


class FakeGeminiServer(FakeChatServer):
    """A Gemini API server on 127.0.0.1; pass ``url`` as the SDK's ``base_url``."""

    server_name = "FakeGemini/1.0"

    def __init__(
        self, replies: Iterable[Reply] = (), *, require_signatures: bool = True, **kw: Any
    ) -> None:
        super().__init__(replies, **kw)
        self.require_signatures = require_signatures

    def _route(self, method: str, request: FakeRequest, index: int) -> Response:
        match = _PATH.match(request.path)
        if match is None:
            return _error(404, f"The requested URL {request.path} was not found on this server.")
        if method != "POST":
            return _error(405, f"Method {method} not allowed.")
        key = request.headers.get("x-goog-api-key") or request.query.get("key")
        if self.api_key is not None and not key:
            return _error(
                403,
                "Method doesn't allow unregistered callers (callers without "
                "established identity). Please use API Key or other form of API "
                "consumer identity to call this API.",
            )
        if self.api_key is not None and key != self.api_key:
            return _error(
                400,
                "API key not valid. Please pass a valid API key.",
                details=[
                    {
                        "@type": "type.googleapis.com/google.rpc.ErrorInfo",
                        "reason": "API_KEY_INVALID",
                    }
                ],
            )
        stream = match.group(3) == "streamGenerateContent"
        try:
            turn = parse_generate_request(
                request.body, match.group(2), stream, self.require_signatures
            )
        except _Bad as bad:
            return _error(bad.status, bad.message)
        reply = self._reply_for(index, turn)
        if not isinstance(reply, Reply):
            return _error(*reply)
        if reply.status is not None:
            headers = {"Retry-After": f"{reply.retry_after:g}"} if reply.retry_after else {}
            default = (
                "Resource has been exhausted (e.g. check quota)."
                if reply.status == 429
                else f"fake error {reply.status}"
            )
            return _error(reply.status, reply.error_message or default, headers)
        chunks = self._chunks(turn, reply, index)
        if not stream:
            return json_response(200, _merge(chunks))
        return 200, {"Content-Type": "text/event-stream"}, self._sse(chunks, reply)

    def _sse(self, chunks: list[dict[str, Any]], reply: Reply) -> Iterator[bytes]:
        for n, chunk in enumerate(chunks):
            if n and self.wait(reply.chunk_delay_s):
                return
            yield sse(chunk)

    def _chunks(self, turn: ChatTurn, reply: Reply, index: int) -> list[dict[str, Any]]:
        """The reply as the stream of GenerateContentResponse chunks Gemini would send."""
        head = {"modelVersion": turn.model, "responseId": f"fake-response-{index + 1}"}
        prompt = sum(count_tokens(m.content) for m in turn.messages)
        parts: list[list[dict[str, Any]]] = [[{"text": t}] for t in fragments(reply.text, 6)]
        finish, message = reply.finish_reason or "STOP", ""
        calls: list[dict[str, Any]] = []
        for call in reply.tool_calls:
            try:
                args = json.loads(call.arguments_text())
            except ValueError:
                args = None
            if not isinstance(args, dict):
                finish = "MALFORMED_FUNCTION_CALL"
                message = f"Malformed function call: {call.name}({call.arguments_text()})"
                calls = []
                break
            fc: dict[str, Any] = {"name": call.name, "args": args}
            if call.id:
                fc["id"] = call.id
            calls.append({"functionCall": fc})
        if calls:
            calls[0]["thoughtSignature"] = _signature(index)
            parts.append(calls)
        if reply.refusal is not None:
            parts, finish, message = [], "SAFETY", reply.refusal
        completion = count_tokens(reply.text) + sum(count_tokens(json.dumps(c)) for c in calls)
        usage = {
            "promptTokenCount": prompt,
            "candidatesTokenCount": completion,
            "totalTokenCount": prompt + completion,
        }
        out: list[dict[str, Any]] = [
            {"candidates": [{"content": {"role": "model", "parts": p}, "index": 0}], **head}
            for p in parts
        ] or [{"candidates": [{"index": 0}], **head}]
        last = out[-1]["candidates"][0]
        last["finishReason"] = finish
        if message:
            last["finishMessage"] = message
        if finish == "SAFETY":
            last["safetyRatings"] = [
                {
                    "category": "HARM_CATEGORY_DANGEROUS_CONTENT",
                    "probability": "HIGH",
                    "blocked": True,
                }
            ]
        out[-1]["usageMetadata"] = usage
        return out


def _merge(chunks: list[dict[str, Any]]) -> dict[str, Any]:
    """A non-streamed response: the chunks' parts in one candidate."""
    merged = dict(chunks[-1])
    candidate = dict(merged["candidates"][0])
    parts: list[dict[str, Any]] = []
    for chunk in chunks:
        for part in chunk["candidates"][0].get("content", {}).get("parts", []):
            if "text" in part and parts and "text" in parts[-1]:
                parts[-1] = {"text": parts[-1]["text"] + part["text"]}
            else:
                parts.append(part)
    if parts:
        candidate["content"] = {"role": "model", "parts": parts}
    merged["candidates"] = [candidate]
    return merged


__all__ = ["ChatTurn", "FakeGeminiServer", "FakeMessage", "Reply", "ScriptedCall"]

"""Gemini through the official ``google-genai`` SDK (extra ``llm``).

>>> model = GeminiChatModel(model="gemini-2.5-flash", api_key=os.environ["GEMINI_API_KEY"])
>>> model.chat([Message.user("食中毒の予防方法を教えて")], tools=specs).tool_calls

Tools become ``functionDeclarations`` (their JSON schema as ``parametersJsonSchema``),
function calls come back as ``functionCall`` parts (several: parallel calls) and tool results go
back as ``functionResponse`` parts, all the results of one turn in one content. Automatic
function calling is off: the agent loop runs the tools. A call's thought signature is kept in
``ToolCall.signature`` and sent back with it. The SDK retries 408/429/5xx and transient
connection errors with exponential backoff.
"""

from __future__ import annotations

import base64
import binascii
import json
import uuid
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

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
from tansaku.errors import ConfigError, MissingExtra

if TYPE_CHECKING:
    from tansaku.tools.spec import ToolSpec

DEFAULT_URL = "https://generativelanguage.googleapis.com"
DEFAULT_TIMEOUT = 60.0
DEFAULT_RETRIES = 2
_OUR_IDS = "tansaku-call-"  # ids we made up for calls Gemini sent without one: never sent back
_SKIP_SIGNATURE = b"skip_thought_signature_validator"  # Google's documented stand-in
_FINISH: dict[str, FinishReason] = {
    "STOP": "stop",
    "MAX_TOKENS": "length",
    "SAFETY": "refusal",
    "RECITATION": "refusal",
    "BLOCKLIST": "refusal",
    "PROHIBITED_CONTENT": "refusal",
    "SPII": "refusal",
    "IMAGE_SAFETY": "refusal",
    "MALFORMED_FUNCTION_CALL": "error",
    "UNEXPECTED_TOOL_CALL": "error",
}


def _arguments(text: str) -> dict[str, Any]:
    try:
        value = json.loads(text or "{}")
    except ValueError:
        return {"_unparsed": text}
    return value if isinstance(value, dict) else {"_value": value}


def _result(text: str) -> dict[str, Any]:
    """A tool's JSON-string result as a ``functionResponse.response`` object."""
    try:
        value = json.loads(text)
    except ValueError:
        return {"output": text}
    return value if isinstance(value, dict) else {"output": value}


def to_gemini_contents(messages: Sequence[Message]) -> tuple[str, list[Any]]:
    """(system instruction, contents): our messages as Gemini ``Content`` objects."""
    from google.genai import types

    system = "\n\n".join(m.content for m in messages if m.role == "system" and m.content)
    contents: list[types.Content] = []
    for m in messages:
        if m.role == "system":
            continue
        if m.role == "tool":
            response = types.FunctionResponse(
                name=m.name or "", response=_result(m.content), id=_sendable(m.tool_call_id)
            )
            part = types.Part(function_response=response)
            last = contents[-1] if contents else None
            if last is not None and last.parts and last.parts[0].function_response is not None:
                last.parts.append(part)  # every result of a turn in one content
            else:
                contents.append(types.Content(role="user", parts=[part]))
            continue
        if m.role == "user":
            contents.append(types.Content(role="user", parts=[types.Part(text=m.content)]))
            continue
        parts = [types.Part(text=m.content)] if m.content else []
        for i, call in enumerate(m.tool_calls):
            fc = types.FunctionCall(
                name=call.name, args=_arguments(call.arguments), id=_sendable(call.id)
            )
            parts.append(types.Part(function_call=fc, thought_signature=_signature(call, i)))
        contents.append(types.Content(role="model", parts=parts or [types.Part(text="")]))
    return system, contents


def _sendable(call_id: str | None) -> str | None:
    return None if not call_id or call_id.startswith(_OUR_IDS) else call_id


def _signature(call: ToolCall, index: int) -> bytes | None:
    if call.signature:
        try:
            return base64.b64decode(call.signature, validate=True)
        except (binascii.Error, ValueError):
            pass
    return _SKIP_SIGNATURE if index == 0 else None


class _Collector:
    """Response chunks (one when not streamed) → one reply."""

    def __init__(self, on_text: TextCallback | None) -> None:
        self.on_text = on_text
        self.text: list[str] = []
        self.calls: list[ToolCall] = []
        self.finish = ""
        self.blocked = ""
        self.model = ""
        self.usage: dict[str, int] = {}

    def add(self, response: Any) -> None:
        self.model = response.model_version or self.model
        meta = response.usage_metadata
        if meta is not None:
            self.usage = {
                "prompt_tokens": int(meta.prompt_token_count or 0),
                "completion_tokens": int(meta.candidates_token_count or 0),
            }
        feedback = response.prompt_feedback
        if feedback is not None and feedback.block_reason is not None:
            self.blocked = str(feedback.block_reason_message or feedback.block_reason)
        for candidate in (response.candidates or [])[:1]:
            if candidate.finish_reason is not None:
                self.finish = str(
                    getattr(candidate.finish_reason, "value", candidate.finish_reason)
                )
            content = candidate.content
            for part in (content.parts if content is not None else None) or []:
                self._part(part)

    def _part(self, part: Any) -> None:
        if part.function_call is not None:
            fc = part.function_call
            signature = part.thought_signature
            self.calls.append(
                ToolCall(
                    id=fc.id or f"{_OUR_IDS}{uuid.uuid4().hex[:12]}",
                    name=fc.name or "",
                    arguments=json.dumps(fc.args or {}, ensure_ascii=False),
                    signature=base64.b64encode(signature).decode("ascii") if signature else "",
                )
            )
        elif part.text and not part.thought:
            self.text.append(part.text)
            forward_text(self.on_text, part.text)

    def response(self, model: str) -> ChatResponse:
        reason: FinishReason = _FINISH.get(self.finish, "stop")
        if self.calls:
            reason = "tool_calls"
        elif self.blocked:
            reason = "refusal"
        return ChatResponse(
            content="".join(self.text),
            tool_calls=tuple(self.calls),
            finish_reason=reason,
            model=self.model or model,
            usage=self.usage,
        )


def _transient() -> tuple[type[BaseException], ...]:
    """The HTTP libraries' connection and timeout errors the SDK lets through."""
    out: list[type[BaseException]] = []
    for module in ("httpx", "httpx2"):
        try:
            lib = __import__(module)
        except ImportError:
            continue
        out += [lib.TimeoutException, lib.HTTPError]
    return tuple(out)


class GeminiChatModel(RemoteChatModel):
    """A Gemini model (Gemini API; ``base_url`` for a proxy or the fake server)."""

    def __init__(
        self,
        *,
        model: str,
        api_key: str | None = None,
        base_url: str | None = None,
        api_version: str | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        max_retries: int = DEFAULT_RETRIES,
        retry_delay: float = 1.0,
        temperature: float | None = None,
    ) -> None:
        try:
            from google import genai
            from google.genai import types
        except ImportError:
            raise MissingExtra("google-genai", "llm", "Gemini のチャットモデル") from None
        super().__init__(model=model, timeout=timeout, temperature=temperature)
        if not api_key:
            raise ConfigError(
                "Gemini の API キーがありません。GEMINI_API_KEY(または TANSAKU_LLM_API_KEY)を"
                "設定してください"
            )
        retry = types.HttpRetryOptions(
            attempts=max_retries + 1,
            initial_delay=retry_delay,
            max_delay=30.0,
            jitter=min(1.0, retry_delay),
        )
        options = types.HttpOptions(
            base_url=base_url,
            api_version=api_version,
            timeout=int(timeout * 1000),
            retry_options=retry,
        )
        self._client = genai.Client(api_key=api_key, http_options=options)
        self._endpoint = Endpoint("gemini", model, base_url or DEFAULT_URL, max_retries, api_key)

    def complete(self, call: ChatCall) -> ChatResponse:
        limit = self._limit(call)
        system, contents = to_gemini_contents(call.messages)
        config = self._config(
            system, call.tools, call.temperature, call.max_tokens, call.json_schema, limit
        )
        collector = _Collector(call.on_text)
        if call.on_text is None:
            collector.add(
                self._client.models.generate_content(
                    model=self.model, contents=contents, config=config
                )
            )
        else:
            self._stream(
                limit,
                lambda: self._client.models.generate_content_stream(
                    model=self.model, contents=contents, config=config
                ),
                collector.add,
            )
        return collector.response(self.model)

    def failure(self, exc: Exception, call: ChatCall) -> Exception:
        from google.genai import errors

        if isinstance(exc, errors.APIError):
            return self._api_error(exc)
        if isinstance(exc, _transient()):
            if "Timeout" in type(exc).__name__:
                return self._endpoint.timeout(self._limit(call))
            return self._endpoint.unreachable(f"{type(exc).__name__}: {exc}")
        return self._endpoint.bad_response(f"{type(exc).__name__}: {exc}")

    def _config(
        self,
        system: str,
        tools: Sequence[ToolSpec],
        temperature: float | None,
        max_tokens: int | None,
        json_schema: dict[str, Any] | None,
        limit: float,
    ) -> Any:
        from google.genai import types

        declarations = [
            types.FunctionDeclaration(
                name=t.name, description=t.description, parameters_json_schema=t.parameters
            )
            for t in tools
        ]
        temp = temperature if temperature is not None else self.temperature
        return types.GenerateContentConfig(
            system_instruction=system or None,
            tools=[types.Tool(function_declarations=declarations)] if declarations else None,
            automatic_function_calling=types.AutomaticFunctionCallingConfig(disable=True),
            temperature=temp,
            max_output_tokens=max_tokens,
            response_mime_type="application/json" if json_schema is not None else None,
            response_json_schema=json_schema,
            http_options=types.HttpOptions(timeout=int(limit * 1000)),
        )

    def _api_error(self, exc: Any) -> ModelError:
        code = int(exc.code or 0)
        detail = str(exc.message or exc.status or "")
        if code == 400 and "API key" in detail:
            code = 401  # Gemini answers a wrong key with 400 API_KEY_INVALID
        return self._endpoint.status(code, detail)

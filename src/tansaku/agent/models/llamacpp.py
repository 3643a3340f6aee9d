"""A local GGUF model with no server, through ``llama-cpp-python`` (extra ``local``).

Small models (Qwen2.5 0.5B/1.5B) do not call tools reliably in free text, and after an
observation they tend to call a tool again instead of answering. So with tools, every step is
constrained by a JSON schema built from the tools (llama.cpp turns it into a grammar)::

    {"action": "<a tool's name>", "arguments": {<that tool's arguments schema>}}
  | {"action": "final_answer", "answer": "<the answer>"}

and the reply is mapped back to a :class:`ChatResponse`: one tool call, or the answer as
content. Tool results go back as a user turn that asks for ``final_answer`` when they suffice.

>>> model = LlamaCppChatModel(resolve_gguf("qwen2.5-0.5b", home))   # or a .gguf path
"""

from __future__ import annotations

import importlib.util
import json
import os
import threading
import time
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tansaku.agent.models._errors import Endpoint
from tansaku.agent.models.base import (
    BaseChatModel,
    ChatCall,
    ChatResponse,
    FinishReason,
    Message,
    ToolCall,
)
from tansaku.errors import ConfigError, MissingExtra

if TYPE_CHECKING:
    from tansaku.tools.spec import ToolSpec

FINAL = "final_answer"
_DESCRIPTION_CHARS = 200


def action_schema(tools: Sequence[ToolSpec], *, final: bool = True) -> dict[str, Any]:
    """One step's JSON schema: a call of one of ``tools`` with its arguments, or (``final``)
    the answer."""
    options: list[dict[str, Any]] = [
        {
            "type": "object",
            "properties": {"action": {"const": t.name}, "arguments": t.parameters},
            "required": ["action", "arguments"],
            "additionalProperties": False,
        }
        for t in tools
    ]
    if final:
        options.append(
            {
                "type": "object",
                "properties": {"action": {"const": FINAL}, "answer": {"type": "string"}},
                "required": ["action", "answer"],
                "additionalProperties": False,
            }
        )
    return {"anyOf": options}


def observed(messages: Sequence[Message]) -> bool:
    """Whether a tool result follows the last user message (the turn has something to answer
    from)."""
    for m in reversed(messages):
        if m.role == "tool":
            return True
        if m.role == "user":
            return False
    return False


def _short(text: str) -> str:
    """What the tool does and when to use it: the first two lines of its description."""
    head = " ".join(text.strip().split("\n")[:2])
    return head if len(head) <= _DESCRIPTION_CHARS else head[: _DESCRIPTION_CHARS - 1] + "…"


def _argument(name: str, schema: dict[str, Any], required: bool) -> str:
    """``name(type、必須: what it takes)``: a small model given only the type invents values
    (source_types=["日報"] where the tool takes daily_report)."""
    kind = schema.get("type", "")
    what = str(schema.get("description") or "")
    options = schema.get("enum") or (schema.get("items") or {}).get("enum")
    if options:
        what = f"{what} 値: {' / '.join(map(str, options))}".strip()
    parts = [p for p in (kind, "必須" if required else "", what[:60]) if p]
    return f"{name}({'、'.join(parts)})"


def tool_instructions(tools: Sequence[ToolSpec]) -> str:
    """The tools and the answer format, for the system prompt."""
    lines = ["使えるツール:"]
    for t in tools:
        props = t.parameters.get("properties", {})
        required = set(t.parameters.get("required", []))
        args = ", ".join(_argument(k, v, k in required) for k, v in props.items())
        lines.append(f"- {t.name}: {_short(t.description)} 引数: {args or 'なし'}")
    lines += [
        "",
        "毎回 JSON だけで答えてください。ツールを使うときは "
        '{"action": "ツール名", "arguments": {...}}、'
        f'答えるときは {{"action": "{FINAL}", "answer": "日本語の回答"}}。',
        "ツールの結果で答えられるなら、もうツールを呼ばずに final_answer を選んでください。",
    ]
    return "\n".join(lines)


def to_llama_messages(messages: Sequence[Message], tools: Sequence[ToolSpec]) -> list[dict]:
    """Our messages for a chat template with no tool support: calls rendered as the JSON
    actions the model produced, results as user turns."""
    out: list[dict[str, Any]] = []
    system = "\n\n".join(m.content for m in messages if m.role == "system" and m.content)
    if tools:
        system = f"{system}\n\n{tool_instructions(tools)}".strip()
    if system:
        out.append({"role": "system", "content": system})
    for m in messages:
        if m.role == "system":
            continue
        if m.role == "assistant" and m.tool_calls:
            for call in m.tool_calls:
                try:
                    args = json.loads(call.arguments or "{}")
                except ValueError:
                    args = {}
                action = {"action": call.name, "arguments": args}
                out.append({"role": "assistant", "content": json.dumps(action, ensure_ascii=False)})
        elif m.role == "assistant":
            content = m.content
            if tools:
                content = json.dumps({"action": FINAL, "answer": m.content}, ensure_ascii=False)
            out.append({"role": "assistant", "content": content})
        elif m.role == "tool":
            out.append(
                {
                    "role": "user",
                    "content": f"ツール {m.name or ''} の結果:\n{m.content}\n\n"
                    f"この結果で答えられるなら {FINAL} で答えてください。",
                }
            )
        else:
            out.append({"role": "user", "content": m.content})
    return out


def parse_action(text: str, finish: FinishReason) -> ChatResponse:
    """A step's JSON output as a tool call or the final answer."""
    try:
        data = json.loads(text)
    except ValueError:
        return ChatResponse(content="", finish_reason="length" if finish == "length" else "error")
    if not isinstance(data, dict):
        return ChatResponse(content="", finish_reason="error")
    action = data.get("action")
    if action == FINAL or not isinstance(action, str):
        return ChatResponse(content=str(data.get("answer", "")), finish_reason="stop")
    raw = data.get("arguments")
    # small models fill every optional argument: an empty one means "not given"
    args = (
        {k: v for k, v in raw.items() if v not in ("", [], {}, None)}
        if isinstance(raw, dict)
        else {}
    )
    call = ToolCall(
        id=f"call_{uuid.uuid4().hex[:12]}",
        name=action,
        arguments=json.dumps(args, ensure_ascii=False),
    )
    return ChatResponse(tool_calls=(call,), finish_reason="tool_calls")


class LlamaCppChatModel(BaseChatModel):
    """A GGUF model in this process. Loaded on first use (:meth:`warm_up` to load earlier);
    one generation at a time (a lock), so it is safe to share between threads."""

    def __init__(
        self,
        model_path: str | Path,
        *,
        n_ctx: int = 4096,
        n_threads: int | None = None,
        temperature: float | None = None,
        max_tokens: int = 512,
        timeout: float = 300.0,
        seed: int = 0,
        tool_first: bool = True,
    ) -> None:
        if importlib.util.find_spec("llama_cpp") is None:
            raise MissingExtra("llama-cpp-python", "local", "ローカルの GGUF モデル")
        self.path = Path(model_path).expanduser()
        if not self.path.is_file():
            raise ConfigError(f"GGUF ファイル {self.path} がありません")
        self.n_ctx = n_ctx
        self.n_threads = n_threads or max(1, os.cpu_count() or 1)
        self.temperature = temperature
        self.max_tokens = max_tokens
        self.timeout = timeout
        self.seed = seed
        self.tool_first = tool_first
        """With tools, the first step of a turn must call one (no ``final_answer`` before an
        observation): a small model otherwise answers from nothing and invents."""
        self._llm: Any = None
        self._lock = threading.Lock()
        self._endpoint = Endpoint("llamacpp", self.path.stem, str(self.path), 0)

    @property
    def name(self) -> str:
        return f"llamacpp:{self.path.stem}"

    def warm_up(self) -> None:
        with self._lock:
            self._load()

    def failure(self, exc: Exception, call: ChatCall) -> Exception:
        return self._endpoint.bad_response(f"{type(exc).__name__}: {exc}")

    def _load(self) -> Any:
        if self._llm is None:
            from llama_cpp import Llama

            try:
                self._llm = Llama(
                    model_path=str(self.path),
                    n_ctx=self.n_ctx,
                    n_threads=self.n_threads,
                    seed=self.seed,
                    verbose=False,
                )
            except (ValueError, RuntimeError, OSError) as exc:
                raise self._endpoint.unreachable(f"読み込めません: {exc}") from None
        return self._llm

    def complete(self, call: ChatCall) -> ChatResponse:
        messages, tools, on_text = call.messages, call.tools, call.on_text
        temperature, max_tokens, timeout = call.temperature, call.max_tokens, call.timeout
        json_schema = call.json_schema
        final = not self.tool_first or observed(messages)
        schema = action_schema(tools, final=final) if tools else json_schema
        fmt = {"type": "json_object", "schema": schema} if schema is not None else None
        temp = temperature if temperature is not None else self.temperature
        limit = timeout if timeout is not None else self.timeout
        with self._lock:
            llm = self._load()
            deadline = time.monotonic() + limit
            try:
                stream = llm.create_chat_completion(
                    messages=to_llama_messages(messages, tools),
                    response_format=fmt,
                    temperature=0.1 if temp is None else temp,
                    max_tokens=max_tokens or self.max_tokens,
                    stream=True,
                    seed=self.seed,
                )
                pieces: list[str] = []
                finish: str | None = None
                for chunk in stream:
                    choice = chunk["choices"][0]
                    delta = choice.get("delta", {}).get("content")
                    if delta:
                        pieces.append(delta)
                        if on_text is not None and not tools:
                            on_text(delta)
                    finish = choice.get("finish_reason") or finish
                    if time.monotonic() > deadline:
                        raise self._endpoint.timeout(limit)
            except ValueError as exc:  # e.g. the prompt is longer than the context window
                raise self._endpoint.bad_response(str(exc)) from None
        reason: FinishReason = "length" if finish == "length" else "stop"
        usage = {"completion_tokens": len(pieces)}
        if not tools:
            return ChatResponse(
                content="".join(pieces), finish_reason=reason, model=self.name, usage=usage
            )
        reply = parse_action("".join(pieces), reason)
        if on_text is not None and reply.content:
            on_text(reply.content)
        return ChatResponse(
            content=reply.content,
            tool_calls=reply.tool_calls,
            finish_reason=reply.finish_reason,
            model=self.name,
            usage=usage,
        )

"""The ReAct agent with reflection (``003_…txt`` §9): thought → tool calls → observations,
repeated within limits, then a draft, then a reflection pass that produces the final answer.

- Tool calls go through :meth:`Toolset.call` (scope bound, Japanese ``{"error"}`` on any
  failure); parallel calls run concurrently, each within the per-tool timeout.
- Limits: steps, a total time budget, the context size in characters and the tokens the
  provider reports. A model still calling tools at a limit is asked once more, without tools.
- Every source a tool returns gets a marker (:mod:`tansaku.agent.citations`); the answer cites
  only those. No supporting source → the answer says so and the question is logged unanswered.
- A reply cut off or garbled by the provider (``finish_reason == "error"`` with no content:
  Gemini's ``MALFORMED_FUNCTION_CALL``, a local model's broken tool-call JSON) is asked again
  once; a second such reply counts as an empty answer.
- A model that times out, is rate limited or unavailable (after the provider's retries) hands
  the turn to the offline router, with an ``error`` event saying why.
"""

from __future__ import annotations

import json
import queue
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from tansaku.agent.citations import Sources
from tansaku.agent.events import Answer, Event, EventCallback, EventLog
from tansaku.agent.models.base import ChatModel, ChatResponse, Message, ModelError, ToolCall
from tansaku.agent.offline import NOT_FOUND, answer_offline
from tansaku.agent.prompts import FINAL_REQUEST, split_thought, system_prompt
from tansaku.agent.reflection import Reflection, reflect
from tansaku.agent.result_text import summarize
from tansaku.agent.unanswered import UnansweredLog
from tansaku.text.dates import now_tokyo
from tansaku.tools.registry import Toolset

MAX_PARALLEL_CALLS = 8
UNSUPPORTED = "申し訳ありません。検索結果から裏付けのある回答を作れませんでした。"
REFUSED = "言語モデルが回答を断りました"
GARBLED = "言語モデルの応答が壊れていたため、もう一度尋ねます"


@dataclass(frozen=True, kw_only=True)
class AgentLimits:
    max_steps: int = 6
    """Model calls that may use tools; the next one must answer."""
    tool_timeout: float = 20.0
    """Seconds one tool call may take (a late call answers the model with an error)."""
    total_seconds: float = 120.0
    """The whole turn's budget; past it, no more tools and no reflection."""
    model_timeout: float = 60.0
    """Seconds one model call may take."""
    max_context_chars: int = 48_000
    """Characters of messages sent to the model; past it, no more tools."""
    max_tokens: int = 60_000
    """Tokens (prompt + completion, as reported) over the turn; past it, no more tools."""
    answer_tokens: int = 1_024
    """``max_tokens`` of each model call."""
    reflect: bool = True
    clock: Callable[[], float] = field(default=time.monotonic, compare=False, repr=False)

    def __post_init__(self) -> None:
        for name in ("max_steps", "max_context_chars", "max_tokens", "answer_tokens"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be at least 1, got {getattr(self, name)}")
        for name in ("tool_timeout", "total_seconds", "model_timeout"):
            if getattr(self, name) <= 0:
                raise ValueError(f"{name} must be positive, got {getattr(self, name)}")


class _Budget:
    def __init__(self, limits: AgentLimits) -> None:
        self.limits = limits
        self.start = limits.clock()
        self.tokens = 0

    def remaining(self) -> float:
        return self.limits.total_seconds - (self.limits.clock() - self.start)

    def spent(self, messages: Sequence[Message]) -> str | None:
        """Why no more tools may be called (Japanese), or None."""
        if self.remaining() <= 0:
            return f"時間の上限({self.limits.total_seconds:g}秒)に達しました"
        if self.tokens >= self.limits.max_tokens:
            return f"トークンの上限({self.limits.max_tokens})に達しました"
        if _chars(messages) >= self.limits.max_context_chars:
            return f"文脈の上限({self.limits.max_context_chars}文字)に達しました"
        return None

    def timeout(self, *, final: bool = False) -> float:
        left = self.remaining()
        if final:  # the last call always gets a fair chance: a user always gets an answer
            left = max(left, min(self.limits.model_timeout, 15.0))
        return max(0.1, min(self.limits.model_timeout, left))


def _chars(messages: Sequence[Message]) -> int:
    return sum(len(m.content) + sum(len(c.arguments) for c in m.tool_calls) for m in messages)


def _fit(messages: list[Message], limit: int) -> list[Message]:
    """Halve the longest tool results until the messages fit ``limit`` characters."""
    out = list(messages)
    while _chars(out) > limit:
        i, longest = max(enumerate(out), key=lambda x: len(x[1].content) * (x[1].role == "tool"))
        if longest.role != "tool" or len(longest.content) < 400:
            break
        out[i] = replace(longest, content=longest.content[: len(longest.content) // 2] + "…(省略)")
    return out


def _arguments(call: ToolCall) -> dict[str, Any] | None:
    try:
        value = json.loads(call.arguments) if call.arguments.strip() else {}
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def _error(text: str) -> str:
    return json.dumps({"error": text}, ensure_ascii=False)


class _Turn:
    """One question's loop: the messages, the events, the sources and the tools tried."""

    def __init__(
        self, tools: Toolset, model: ChatModel, limits: AgentLimits, log: EventLog
    ) -> None:
        self.tools, self.model, self.limits, self.log = tools, model, limits, log
        self.sources = Sources(collections=tools.scope.collections)
        self.budget = _Budget(limits)
        self.tried: list[str] = []
        self.refused = False
        self.observations: list[tuple[str, str]] = []

    def chat(self, messages: list[Message], *, final: bool = False) -> ChatResponse:
        """One model call; a garbled reply (an ``error`` finish with nothing in it) is asked
        again once."""
        reply = self._call(messages, final=final)
        if reply.finish_reason == "error" and not reply.content.strip() and not reply.tool_calls:
            self.log.emit(Event(type="thought", text=GARBLED))
            reply = self._call(messages, final=final)
        return reply

    def _call(self, messages: list[Message], *, final: bool) -> ChatResponse:
        reply = self.model.chat(
            _fit(messages, self.limits.max_context_chars) if final else messages,
            tools=() if final else self.tools.offered,
            max_tokens=self.limits.answer_tokens,
            timeout=self.budget.timeout(final=final),
        )
        self.budget.tokens += sum(
            reply.usage.get(k, 0) for k in ("prompt_tokens", "completion_tokens")
        )
        return reply

    def run_calls(self, calls: Sequence[ToolCall]) -> list[Message]:
        """Run ``calls`` concurrently; their results (annotated with source markers) as tool
        messages in call order."""
        for call in calls:
            args = _arguments(call)
            self.log.emit(
                Event(
                    type="tool_call",
                    tool=call.name,
                    call_id=call.id,
                    arguments=args,
                    text="" if args is not None else call.arguments,
                )
            )
            self.tried.append(call.name)
        results: dict[int, str] = {}
        done: queue.SimpleQueue[tuple[int, str]] = queue.SimpleQueue()
        for i, call in enumerate(calls):
            if i >= MAX_PARALLEL_CALLS:
                too_many = f"一度に呼べるツールは {MAX_PARALLEL_CALLS} 件までです"
                self._observe(results, calls, i, _error(too_many))
                continue
            # daemon threads: a tool that never returns cannot keep the process alive
            threading.Thread(
                target=lambda i=i, c=call: done.put((i, self.tools.call(c.name, c.arguments))),
                name=f"tool-{call.name}",
                daemon=True,
            ).start()
        wait = max(0.1, min(self.limits.tool_timeout, self.budget.remaining()))
        deadline = time.monotonic() + wait
        while len(results) < len(calls):
            try:
                i, raw = done.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                break
            self._observe(results, calls, i, raw)
        for i in range(len(calls)):
            if i not in results:
                late = f"ツール「{calls[i].name}」が {wait:.0f} 秒以内に終わりませんでした"
                self._observe(results, calls, i, _error(late))
        return [Message.tool(call, results[i]) for i, call in enumerate(calls)]

    def _observe(
        self, results: dict[int, str], calls: Sequence[ToolCall], i: int, raw: str
    ) -> None:
        call = calls[i]
        result = self.sources.annotate(call.name, raw)
        results[i] = result
        self.observations.append((call.name, result))
        self.log.emit(
            Event(type="tool_result", tool=call.name, call_id=call.id, text=summarize(result))
        )

    def draft(self, messages: list[Message]) -> str:
        """The loop: tool calls until the model answers or a limit is reached."""
        for _ in range(self.limits.max_steps):
            stop = self.budget.spent(messages)
            if stop:
                self.log.emit(Event(type="thought", text=f"{stop}。これまでの結果で答えます"))
                break
            reply = self.chat(messages)
            thought, text = split_thought(reply.content)
            self.refused = reply.finish_reason == "refusal"
            if not reply.tool_calls:
                if thought:
                    self.log.emit(Event(type="thought", text=thought))
                return text
            if thought or text:
                self.log.emit(Event(type="thought", text=thought or text))
            messages.append(Message.assistant(reply.content, reply.tool_calls))
            messages.extend(self.run_calls(reply.tool_calls))
        else:
            self.log.emit(
                Event(
                    type="thought",
                    text=f"ツールの利用が上限({self.limits.max_steps}回)に達しました",
                )
            )
        messages.append(Message.user(FINAL_REQUEST))
        reply = self.chat(messages, final=True)
        self.refused = reply.finish_reason == "refusal"
        thought, text = split_thought(reply.content)
        if thought:
            self.log.emit(Event(type="thought", text=thought))
        return text

    def review(self, question: str, draft: str) -> Reflection:
        if self.refused:  # a refusal is no answer: said plainly, in Japanese
            return Reflection(critique=REFUSED, status="not_found", answer="")
        if not self.limits.reflect or self.budget.remaining() <= 0:
            return Reflection(critique="", status="answered", answer=draft)
        try:
            return reflect(
                self.model,
                question,
                draft,
                self.observations,
                timeout=self.budget.timeout(final=True),
                max_tokens=self.limits.answer_tokens,
            )
        except ModelError as exc:
            self.log.emit(
                Event(type="error", text=f"推敲できませんでした(回答案を使います): {exc}")
            )
            return Reflection(critique="", status="answered", answer=draft)


def _collection(tools: Toolset, tried: Sequence[str]) -> str:
    role = "manuals" if tried and tried[0] == "search_manual" else "reports"
    return tools.scope.collections.get(role, "")


def run_agent(
    question: str,
    tools: Toolset,
    model: ChatModel,
    *,
    history: Sequence[Message] = (),
    limits: AgentLimits | None = None,
    on_event: EventCallback | None = None,
    unanswered: UnansweredLog | None = None,
    offline_question: str | None = None,
) -> Answer:
    """Answer ``question`` with ``model`` and ``tools`` after the prior turns ``history``.

    ``offline_question`` is what the offline router answers if the model fails (a follow-up
    resolved without the model: 「その店舗」 → the store named before)."""
    limits = limits or AgentLimits()
    log = EventLog(on_event)
    turn = _Turn(tools, model, limits, log)
    system = system_prompt(
        (s.name for s in tools.offered),
        now=tools.scope.now or now_tokyo(),
        max_steps=limits.max_steps,
        store=tools.scope.store,
        user=tools.scope.user,
    )
    messages = [Message.system(system), *history, Message.user(question)]
    try:
        draft = turn.draft(messages)
        if not draft.strip():
            raise ModelError("言語モデルが回答を返しませんでした")
        log.emit(Event(type="draft", text=draft))
        revised = turn.review(question, draft)
    except ModelError as exc:
        log.emit(
            Event(
                type="error",
                text=f"言語モデル({model.name})で回答できないため、"
                f"言語モデルなしで回答します: {exc}",
            )
        )
        fallback = answer_offline(offline_question or question, tools, unanswered=unanswered)
        log.extend(fallback.events)
        return replace(fallback, question=question, events=log.events)
    if revised.critique:
        log.emit(Event(type="critique", text=revised.critique))
    text, cites = turn.sources.resolve(revised.answer)
    reason = ""
    if revised.status == "not_found":
        reason = REFUSED if turn.refused else "裏付けとなる記述が見つかりません"
        text = text or NOT_FOUND
    elif revised.status == "answered" and not cites:
        reason = (
            "回答の裏付けとなる出典がありません" if turn.tried else "ツールで調べずに答えました"
        )
        text = UNSUPPORTED
    if reason and unanswered is not None:
        unanswered.add(
            team=tools.scope.team,
            collection=_collection(tools, turn.tried),
            question=question,
            reason=reason,
            tools=list(dict.fromkeys(turn.tried)),
        )
    log.emit(Event(type="answer", text=text))
    return Answer(
        question=question,
        text=text,
        citations=cites,
        events=log.events,
        unanswered=bool(reason),
        model=model.name,
    )

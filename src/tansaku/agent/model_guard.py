"""A chat model asked for JSON under guard: a hard timeout (on a daemon thread, so a hung provider
holds neither the caller nor the process at exit), a pause after repeated failures, a small cache
of answers, and the caller's rules answering whenever the model does not."""

from __future__ import annotations

import json
import logging
import re
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from typing import Any, TypedDict, TypeVar, Unpack, cast

from tansaku.agent.models.base import ChatModel, ChatResponse, Message
from tansaku.errors import check_keywords

log = logging.getLogger(__name__)
T = TypeVar("T")
_FENCE = re.compile(r"^```[a-zA-Z]*\s*|\s*```$")


class MalformedOutput(ValueError):
    """The model answered, but not in the asked format."""


class ModelPaused(RuntimeError):
    """The model failed repeatedly and is skipped for a while."""


def parse_json(text: str) -> Any:
    """The JSON in a model's answer: bare, in a ``` fence, or the outermost {…} / […] of it."""
    body = _FENCE.sub("", text.strip())
    try:
        return json.loads(body)
    except json.JSONDecodeError:
        pass
    for open_, close in (("{", "}"), ("[", "]")):
        start, end = body.find(open_), body.rfind(close)
        if 0 <= start < end:
            try:
                return json.loads(body[start : end + 1])
            except json.JSONDecodeError:
                continue
    raise MalformedOutput(f"not JSON: {text[:80]!r}")


class PauseOptions(TypedDict, total=False):
    """When a failing model is skipped (the caller's rules answer meanwhile), each optional."""

    failures_before_pause: int
    """Failures in a row that pause the model (default 3)."""
    pause_s: float
    """Seconds the paused model is skipped (default 60)."""


class ModelGuard:
    """A model call under a hard timeout (on a daemon thread), with a pause after repeated
    failures and a small cache of answers."""

    def __init__(
        self, model: ChatModel, *, timeout: float, cache_size: int, **pause: Unpack[PauseOptions]
    ) -> None:
        check_keywords(type(self).__name__, pause, PauseOptions)
        if timeout <= 0:
            raise ValueError(f"timeout must be > 0, got {timeout}")
        self.model = model
        self.timeout = timeout
        self.failures_before_pause = pause.get("failures_before_pause", 3)
        self.pause_s = pause.get("pause_s", 60.0)
        self.cache_size = cache_size
        self._cache: OrderedDict[Any, Any] = OrderedDict()
        self._failures = 0
        self._paused_until = 0.0
        self._lock = threading.Lock()

    def ask(
        self, key: Any, prompt: str, schema: dict[str, Any], parse: Callable[[Any], Any]
    ) -> Any:
        """``parse(json)`` of the model's answer to ``prompt``; raises on any failure."""
        with self._lock:
            if key in self._cache:
                self._cache.move_to_end(key)
                return self._cache[key]
            if time.monotonic() < self._paused_until:
                raise ModelPaused("model paused after repeated failures")
        try:
            reply = _with_deadline(
                lambda: self.model.chat(
                    [Message.user(prompt)], json_schema=schema, max_tokens=512, timeout=self.timeout
                ),
                self.timeout,
            )
            if reply.finish_reason in ("refusal", "error", "length"):
                raise MalformedOutput(f"finish_reason={reply.finish_reason}")
            value = parse(parse_json(reply.content))
        except Exception:
            with self._lock:
                self._failures += 1
                if self._failures >= self.failures_before_pause:
                    self._paused_until = time.monotonic() + self.pause_s
                    self._failures = 0
            raise
        with self._lock:
            self._failures = 0
            self._cache[key] = value
            while len(self._cache) > self.cache_size:
                self._cache.popitem(last=False)
        return value

    def answer(
        self,
        what: str,
        key: Any,
        prompt: str,
        schema: dict[str, Any],
        parse: Callable[[Any], T],
        rules: Callable[[], T],
    ) -> tuple[T, str]:
        """(:meth:`ask`'s answer, ``"model"``), or on any failure (``rules()``,
        ``"rules(<why>)"``): a search never fails because of the model."""
        try:
            return self.ask(key, prompt, schema, parse), "model"
        except Exception as exc:
            log.warning("LLM %s fell back to rules: %s", what, exc)
            return rules(), f"rules({_failure(exc)})"


def _with_deadline(fn: Callable[[], ChatResponse], timeout: float) -> ChatResponse:
    """``fn()`` on a daemon thread, abandoned after ``timeout`` seconds (a hung provider can
    neither hold the search nor the process at exit)."""
    box: dict[str, Any] = {}
    done = threading.Event()

    def run() -> None:
        try:
            box["reply"] = fn()
        except BaseException as exc:  # handed to the caller
            box["error"] = exc
        finally:
            done.set()

    threading.Thread(target=run, name="llm-search", daemon=True).start()
    if not done.wait(timeout):
        raise TimeoutError(f"no answer within {timeout} s")
    if "error" in box:
        raise box["error"]
    return cast(ChatResponse, box["reply"])


def _failure(exc: BaseException) -> str:
    if isinstance(exc, ModelPaused):
        return "paused"
    return "timeout" if isinstance(exc, TimeoutError) else type(exc).__name__

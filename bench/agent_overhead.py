"""The agent's own cost per step, with a fake model server: what tansaku adds to a turn beyond
the model's answers and the tools' work.

    python bench/agent_overhead.py            # 30 turns on the routing demo workspace
    python bench/agent_overhead.py --turns 100 --json

Each turn goes through the real ``OpenAIChatModel`` (openai SDK, HTTP on 127.0.0.1) against
``tansaku.testing.FakeOpenAIServer`` scripted as: one tool call → a draft citing [1] → the
reflection's JSON. A delegating ``ChatModel`` times every model call; ``on_event`` times every
tool call (tool_call → tool_result). Overhead = turn − model calls − tools, per step (model calls
+ tool calls). Offline answers of the same question are timed beside it.
"""

from __future__ import annotations

import argparse
import itertools
import json
import statistics
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import tansaku
from tansaku.agent import ask
from tansaku.agent.events import Event
from tansaku.agent.models.base import ChatModel, ChatResponse, Message
from tansaku.agent.models.openai_compat import OpenAIChatModel
from tansaku.testing import FakeOpenAIServer, Reply
from tansaku.text.dates import parse_now

ROOT = Path(__file__).resolve().parents[1]
HOME = ROOT / ".tansaku-bench-demo"
QUESTION = "冷蔵庫の故障はありましたか?"
ANSWER = "冷蔵庫の故障が報告されています[1]。"


class TimedModel:
    """A ChatModel that times the model it wraps."""

    def __init__(self, inner: ChatModel) -> None:
        self.inner = inner
        self.seconds: list[float] = []

    @property
    def name(self) -> str:
        return self.inner.name

    def chat(self, messages: Sequence[Message], **kw: Any) -> ChatResponse:
        start = time.perf_counter()
        try:
            return self.inner.chat(messages, **kw)
        finally:
            self.seconds.append(time.perf_counter() - start)


def _script(srv: FakeOpenAIServer) -> None:
    review = {"critique": "確認済み", "status": "answered", "answer": ANSWER}
    srv.script(
        Reply.call("search_past_cases", {"query": "冷蔵庫の故障"}),
        Reply.say("思考: 日報に記録があります。\n回答: " + ANSWER),
        Reply.say(json.dumps(review, ensure_ascii=False)),
    )


def run(home: Path, turns: int) -> dict[str, Any]:
    now = parse_now("2025-12-11T10:00")
    rows: list[dict[str, float]] = []
    offline: list[float] = []
    with (
        FakeOpenAIServer(api_key="sk-bench", model="bench-model") as srv,
        tansaku.connect(home, create=False) as ts,
    ):
        inner = OpenAIChatModel(model="bench-model", base_url=srv.base_url, api_key="sk-bench")
        for i in range(turns + 1):  # the first turn warms the SDK, the engine and the embedder
            model = TimedModel(inner)
            marks: list[tuple[str, float]] = []

            def on_event(event: Event, marks: list[tuple[str, float]] = marks) -> None:
                marks.append((event.type, time.perf_counter()))

            _script(srv)
            start = time.perf_counter()
            answer = ask(ts, QUESTION, now=now, model=model, on_event=on_event)
            total = time.perf_counter() - start
            assert answer.citations, answer.text
            tools = sum(
                t2 - t1
                for (k1, t1), (k2, t2) in itertools.pairwise(marks)
                if k1 == "tool_call" and k2 == "tool_result"
            )
            steps = len(model.seconds) + sum(1 for k, _ in marks if k == "tool_call")
            start = time.perf_counter()
            ask(ts, QUESTION, now=now, offline=True)
            if i:
                offline.append(time.perf_counter() - start)
                rows.append(
                    {
                        "total": total,
                        "model": sum(model.seconds),
                        "model_calls": len(model.seconds),
                        "tools": tools,
                        "overhead_per_step": (total - sum(model.seconds) - tools) / steps,
                    }
                )

    def med(key: str) -> float:
        return round(statistics.median(r[key] for r in rows) * 1000, 2)

    return {
        "turns": len(rows),
        "turn_ms": med("total"),
        "model_ms": med("model"),
        "model_calls": rows[0]["model_calls"],
        "tools_ms": med("tools"),
        "overhead_per_step_ms": med("overhead_per_step"),
        "offline_answer_ms": round(statistics.median(offline) * 1000, 2),
    }


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--home", type=Path, default=HOME)
    parser.add_argument("--turns", type=int, default=30)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    report = run(args.home, args.turns)
    if args.json:
        sys.stdout.write(json.dumps(report, indent=2) + "\n")
        return
    sys.stdout.write(
        f"{report['turns']} turns (medians): turn {report['turn_ms']} ms = model "
        f"{report['model_ms']} ms ({report['model_calls']} calls over HTTP) + tools "
        f"{report['tools_ms']} ms + agent {report['overhead_per_step_ms']} ms per step; "
        f"the offline router: {report['offline_answer_ms']} ms\n"
    )


if __name__ == "__main__":
    main(sys.argv[1:])

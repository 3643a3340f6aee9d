"""The local GGUF model (llama.cpp, no server): speed and tool choice on Japanese routing
questions, with the built-in search and statistics tools and the per-step action schema.

    .venv/bin/python bench/local_model.py --model ~/.tansaku/models/qwen2.5-0.5b/*.gguf

Prints one line per question (question → chosen action → right or wrong, seconds) and a
summary: tool-choice accuracy, seconds per step, generated tokens per second, load time.
Needs ``pip install 'tansaku[local]'`` and a model (``tansaku models install qwen2.5-0.5b``).
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path

from tansaku.agent.models import Message
from tansaku.agent.models.llamacpp import LlamaCppChatModel
from tansaku.tools.analytics import ANALYTICS_TOOLS
from tansaku.tools.search import SEARCH_TOOLS

# question → the tools that are a right first step (the designs' examples and their kind)
ROUTING: list[tuple[str, set[str]]] = [
    ("昨日の問題を教えて", {"expand_and_search_cases", "search_past_cases"}),
    ("最近の状況はどう?", {"expand_and_search_cases"}),
    ("先月のクレーム傾向を教えて", {"get_claim_statistics"}),
    ("食中毒の予防方法を教えて", {"search_manual"}),
    ("2025年12月9日のクレーム内容", {"search_past_cases"}),
    ("新宿店の冷蔵庫の故障の事例", {"search_past_cases"}),
    ("先週の売上の推移を見せて", {"get_sales_trend"}),
    ("レジの違算が多い日は?", {"get_cash_difference_analysis"}),
    ("今月と先月の売上を比べて", {"compare_periods"}),
    ("アレルギーのお客様への対応手順は?", {"search_manual"}),
    ("今日は何曜日?", {"get_current_time"}),
    ("どんなデータを検索できますか?", {"list_rag_collections"}),
]
SYSTEM = (
    "あなたは飲食チェーンの店舗運営を支えるアシスタントです。質問に答えるために、"
    "最初にどのツールを使うかを選んでください。"
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", type=Path, required=True, help="a .gguf file")
    parser.add_argument("--threads", type=int, default=None)
    parser.add_argument("--json", action="store_true", help="print the summary as JSON")
    args = parser.parse_args()
    tools = [*SEARCH_TOOLS, *ANALYTICS_TOOLS]
    model = LlamaCppChatModel(args.model, n_ctx=4096, n_threads=args.threads)
    started = time.perf_counter()
    model.warm_up()
    load_s = time.perf_counter() - started
    right, seconds, tokens = 0, [], 0
    for question, expected in ROUTING:
        t0 = time.perf_counter()
        reply = model.chat(
            [Message.system(SYSTEM), Message.user(question)],
            tools=tools,
            max_tokens=96,
            temperature=0.0,
        )
        dt = time.perf_counter() - t0
        seconds.append(dt)
        tokens += reply.usage.get("completion_tokens", 0)
        chosen = reply.tool_calls[0].name if reply.tool_calls else "final_answer"
        arguments = reply.tool_calls[0].arguments if reply.tool_calls else reply.content[:40]
        ok = chosen in expected
        right += ok
        print(f"{'○' if ok else '×'} {question} → {chosen} {arguments} ({dt:.1f} s)")
    stamps: list[float] = []
    t0 = time.perf_counter()
    text = model.chat(
        [Message.user("冷蔵庫が故障したときに店舗でまずすべきことを3行で説明してください。")],
        max_tokens=128,
        temperature=0.0,
        on_text=lambda _: stamps.append(time.perf_counter()),
    ).content
    first_token_s = stamps[0] - t0 if stamps else float("nan")
    decode = (len(stamps) - 1) / (stamps[-1] - stamps[0]) if len(stamps) > 1 else float("nan")
    print(f"自由文: {text[:80]!r}…")
    summary = {
        "model": args.model.name,
        "questions": len(ROUTING),
        "tool_choice_accuracy": round(right / len(ROUTING), 3),
        "seconds_per_step_median": round(statistics.median(seconds), 2),
        "seconds_per_step_max": round(max(seconds), 2),
        "routing_tokens_per_second_incl_prompt": round(tokens / sum(seconds), 2),
        "decode_tokens_per_second": round(decode, 2),
        "first_token_seconds": round(first_token_s, 2),
        "load_seconds": round(load_s, 2),
        "threads": model.n_threads,
    }
    print(json.dumps(summary, ensure_ascii=False, indent=None if not args.json else 2))


if __name__ == "__main__":
    main()

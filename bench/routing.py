"""Routing with no language model: the design documents' example questions on the demo workspace
— which tools each reaches, and the first line of its answer.

    python bench/routing.py            # builds .tansaku-bench-demo for 2025-12-11 when missing
    python bench/routing.py --json

The demo is built for a fixed day (2025-12-11) so that 昨日, 先月 and 2025年12月9日 name days the
bundled reports cover, and 今週末 a weekend of the bundled events.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import tansaku
from tansaku.agent.offline import answer_offline
from tansaku.tables import TableDatabase, load_tables_config
from tansaku.text.dates import parse_now
from tansaku.tools import toolset

ROOT = Path(__file__).resolve().parents[1]
HOME = ROOT / ".tansaku-bench-demo"
DAY = "2025-12-11T10:00"

# question → the tools the offline router should call (design document in the comment)
EXPECTED: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("昨日の問題を教えて", ("expand_and_search_cases",)),  # 000
    ("先月のクレーム傾向を教えて", ("get_claim_statistics",)),  # 000
    ("食中毒の予防方法を教えて", ("search_manual",)),  # 000
    ("2025年12月9日のクレーム内容を教えて", ("search_past_cases",)),  # 000
    ("先週の売上はどうだった?", ("get_sales_trend",)),  # 000
    ("レジの現金が合わないことはどれくらいある?", ("get_cash_difference_analysis",)),  # 000
    ("来年の売上予測は?", ()),  # 012: honest refusal, logged as unanswered
    ("ファミリー向けの店舗を探して", ("search_stores",)),  # 002
    ("駐車場がある店舗を教えて", ("search_stores",)),  # 002
    ("個室がある店舗は?", ("search_stores",)),  # 002
    ("ビジネスで使える店舗は?", ("search_stores",)),  # 002
    ("カフェを探して", ("search_stores",)),  # 002
    ("喫煙できる店舗は?", ("search_stores",)),  # 012
    ("今週末のイベントは?", ("search_events",)),  # 002 (events)
    ("相手のリーダーにダメージを与えるカード", ("search_card_effects",)),  # 004
    ("手札をドローできるカード", ("search_card_effects",)),  # 004
    ("回復効果のあるカード", ("search_card_effects",)),  # 012
    ("トレハロースを保護剤にした実験", ("search_lab_notes",)),  # 001
    ("シリカ膜の成膜条件", ("search_lab_notes",)),  # 001
    ("こんにちは", ()),  # greeting
)


def _ensure_demo(home: Path) -> None:
    if (home / "tables.toml").is_file():
        return
    cmd = [sys.executable, "-m", "tansaku.cli.main", "demo", "build", "--home", str(home)]
    subprocess.run([*cmd, "--now", DAY], check=True)


def run(home: Path) -> dict[str, Any]:
    now = parse_now(DAY)
    rows: list[dict[str, Any]] = []
    with (
        TableDatabase(load_tables_config(home / "tables.toml")) as db,
        tansaku.connect(home, create=False) as ts,
    ):
        tools = toolset(ts, now=now, tables=db)
        answer_offline("ウォームアップ", tools)
        for question, expected in EXPECTED:
            start = time.perf_counter()
            answer = answer_offline(question, tools)
            seconds = time.perf_counter() - start
            called = tuple(e.tool or "" for e in answer.events if e.type == "tool_call")
            rows.append(
                {
                    "question": question,
                    "expected": list(expected),
                    "tools": list(called),
                    "right": called == expected,
                    "answered": not answer.unanswered,
                    "citations": len(answer.citations),
                    "answer": answer.text.splitlines()[0][:70],
                    "seconds": round(seconds, 3),
                }
            )
    return {
        "day": DAY,
        "right": sum(r["right"] for r in rows),
        "n": len(rows),
        "p50_ms": round(statistics.median(r["seconds"] for r in rows) * 1000, 1),
        "rows": rows,
    }


def markdown(report: dict[str, Any]) -> str:
    lines = [
        "| question | tools | right | answered | cites | answer (first line) |",
        "|---|---|:-:|:-:|---:|---|",
    ]
    for r in report["rows"]:
        tools = ", ".join(r["tools"]) or "—"
        mark = "✓" if r["right"] else f"✗ (want {', '.join(r['expected']) or '—'})"
        answered = "yes" if r["answered"] else "no"
        text = r["answer"].replace("|", "\\|")
        lines.append(
            f"| {r['question']} | {tools} | {mark} | {answered} | {r['citations']} | {text} |"
        )
    lines.append("")
    lines.append(
        f"{report['right']} / {report['n']} routed as expected; answer p50 {report['p50_ms']} ms."
    )
    return "\n".join(lines)


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--home", type=Path, default=HOME)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    _ensure_demo(args.home)
    report = run(args.home)
    out = json.dumps(report, ensure_ascii=False, indent=2) if args.json else markdown(report)
    sys.stdout.write(out + "\n")


if __name__ == "__main__":
    main(sys.argv[1:])

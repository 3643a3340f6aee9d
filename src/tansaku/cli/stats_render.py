"""How ``tansaku stats`` and ``tansaku sql`` print their results on a terminal."""

from __future__ import annotations

import json
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from tansaku.cli import render


def cell(value: Any, width: int = 60) -> str:
    """One table cell: on one line, cut, control characters and markup made harmless (the
    values are the data's, not ours)."""
    text = json.dumps(value, ensure_ascii=False) if isinstance(value, dict | list) else str(value)
    flat = " ".join(render.plain(text).split())
    return escape(flat if len(flat) <= width else flat[: width - 1] + "…")


# --- tables / sql --------------------------------------------------------------------------------


def _summary(out: Console, title: str, data: dict[str, Any], labels: dict[str, str]) -> None:
    period = data["period"]
    out.print(
        f"[bold]{title}[/] {data['store']} {period['start_date']}〜{period['end_date']}"
        f"({period['days']}日)"
    )
    table = Table(show_header=False)
    for key, label in labels.items():
        value = data["summary"][key]
        table.add_row(label, f"{value:,}" if isinstance(value, int) else str(value or "-"))
    out.print(table)
    if data.get("message"):
        out.print(data["message"])


def _rows(out: Console, heads: list[str], rows: list[list[Any]]) -> None:
    if not rows:
        return
    table = Table()
    for head in heads:
        table.add_column(head, overflow="fold")
    for row in rows:
        table.add_row(*(f"{v:,}" if isinstance(v, int) else cell(v, 80) for v in row))
    out.print(table)


def render_claims(out: Console, d: dict[str, Any]) -> None:
    _summary(
        out,
        "クレーム統計",
        d,
        {"total_reports": "日報数", "claim_count": "クレーム件数", "claim_rate": "クレーム率"},
    )
    _rows(
        out,
        ["日付", "店舗", "記入者", "内容"],
        [[c["date"], c["store"], c["author"], c["content"]] for c in d["recent_claims"]],
    )


def render_sales(out: Console, d: dict[str, Any]) -> None:
    _summary(
        out,
        "売上トレンド",
        d,
        {
            "total_sales": "売上合計(円)",
            "avg_sales": "日報1件あたり平均(円)",
            "report_count": "日報数",
        },
    )
    _rows(
        out,
        ["週", "平均売上(円)", "日報数"],
        [[w["week"], w["avg_sales"], w["report_count"]] for w in d["weekly_avg"]],
    )


def render_cash(out: Console, d: dict[str, Any]) -> None:
    _summary(
        out,
        "現金過不足",
        d,
        {
            "total_reports": "日報数",
            "diff_count": "発生件数",
            "diff_rate": "発生率",
            "total_diff": "合計(円)",
            "avg_diff": "平均(円)",
        },
    )
    b = d["breakdown"]
    out.print(
        f"過剰 {b['plus']['count']}件 {b['plus']['total']:,}円 / "
        f"不足 {b['minus']['count']}件 {b['minus']['total']:,}円"
    )
    _rows(
        out,
        ["日付", "店舗", "記入者", "過不足(円)"],
        [[c["date"], c["store"], c["author"], c["diff"]] for c in d["recent_cases"]],
    )


def render_compare(out: Console, d: dict[str, Any]) -> None:
    cur, prev, comp = d["current_period"], d["previous_period"], d["comparison"]
    out.print(f"[bold]期間比較[/] {d['description']}({d['unit']}) {d['store']}")
    _rows(
        out,
        ["期間", "開始", "終了", "値", "日報数"],
        [
            ["今期", cur["start"], cur["end"], cur["value"], cur["report_count"]],
            ["前期", prev["start"], prev["end"], prev["value"], prev["report_count"]],
        ],
    )
    rate = comp["change_rate"] or "-"
    out.print(f"差: {comp['diff']:,}{d['unit']} / 変化率: {rate} / 傾向: {comp['trend']}")
    if comp.get("note"):
        out.print(comp["note"])

"""A tool's JSON result as a few lines of Japanese for a person (the chat page, SSE and
``--show-thoughts``): the first results as a numbered list, a statistic's figures, an error's
message. The model still receives the JSON; only what people read changes."""

from __future__ import annotations

import json
from typing import Any

MAX_ITEMS = 5
TOOL_LABELS = {
    "search_collections": "コレクションを検索",
    "search_past_cases": "日報・掲示板を検索",
    "expand_and_search_cases": "言い換えて日報・掲示板を検索",
    "search_manual": "マニュアルを検索",
    "search_rag_knowledge_base": "ナレッジを検索",
    "search_lab_notes": "実験ノートを検索",
    "search_card_effects": "カードを検索",
    "list_rag_collections": "コレクションの一覧",
    "get_current_time": "現在の日時",
    "get_claim_statistics": "クレームの集計",
    "get_claim_breakdown": "クレームの内訳",
    "get_sales_trend": "売上の推移",
    "get_cash_difference_analysis": "現金過不足の集計",
    "compare_periods": "期間の比較",
    "search_stores": "店舗の表を検索",
    "search_events": "イベントの表を検索",
    "answer_question": "質問に回答",
}
"""What a person reads for a tool's name (the chat page has the same list)."""


_FIGURE_LABELS = {
    "total_reports": "日報",
    "report_count": "日報",
    "claim_count": "クレーム",
    "claim_rate": "発生率",
    "previous_claim_count": "前の期間のクレーム",
    "change": "増減",
    "total_sales": "売上合計",
    "avg_sales": "平均売上",
    "diff_count": "過不足のあった日",
    "diff_rate": "発生率",
    "total_diff": "過不足の合計",
    "avg_diff": "平均過不足",
}


def tool_label(name: str | None) -> str:
    return TOOL_LABELS.get(name or "", name or "")


def call_text(arguments: dict[str, Any] | None) -> str:
    """A call's arguments for a person: the query (and the collections) in words, the rest as
    ``key=value``."""
    args = dict(arguments or {})
    parts = []
    if "query" in args:
        parts.append(f"「{args.pop('query')}」")
    if isinstance(args.get("collections"), list):
        parts.append("(" + "、".join(map(str, args.pop("collections"))) + ")")
    if "sql_query" in args:
        parts.append(str(args.pop("sql_query")))
    parts.extend(f"{k}={v}" for k, v in args.items())
    return " ".join(parts)


_NAME_KEYS = ("title", "document", "store_name", "event_name", "name", "doc_id")
_WHERE_KEYS = ("date", "store", "collection", "category", "section", "start_date")


def _item(i: int, row: Any) -> str:
    if not isinstance(row, dict):
        return f"{i}. {row}"
    name = next((str(row[k]) for k in _NAME_KEYS if row.get(k)), "")
    where = "・".join(str(row[k]) for k in _WHERE_KEYS if row.get(k) and str(row[k]) != name)
    if not name and not where:  # a row of an aggregate (count_star(): 28): its values
        values = " / ".join(str(v) for v in row.values() if v is not None and v != "")
        return f"{i}. {values[:79] + '…' if len(values) > 80 else values}"
    return f"{i}. {name}" + (f"({where})" if where else "")


def _figures(data: dict[str, Any]) -> str:
    summary = data.get("summary")
    if not isinstance(summary, dict):
        return ""
    parts = [
        f"{_FIGURE_LABELS[k]} {v:,}" if isinstance(v, int) else f"{_FIGURE_LABELS[k]} {v}"
        for k, v in summary.items()
        if k in _FIGURE_LABELS and isinstance(v, int | float | str)
    ]
    period = data.get("period") or {}
    span = (
        f"{period.get('start_date')}〜{period.get('end_date')} " if isinstance(period, dict) else ""
    )
    return span + "、".join(parts[:8])


def summarize(text: str) -> str:
    """``text`` (a tool's JSON result) for a person; text that is not JSON is returned cut."""
    try:
        data = json.loads(text)
    except (json.JSONDecodeError, TypeError):
        return text[:400]
    if isinstance(data, dict) and data.get("error"):
        return f"エラー: {data['error']}"
    rows = data.get("results") if isinstance(data, dict) else data
    if isinstance(rows, list):
        if not rows:
            message = data.get("message") if isinstance(data, dict) else None
            return str(message or "該当するものはありませんでした")
        lines = [_item(i, r) for i, r in enumerate(rows[:MAX_ITEMS], 1)]
        if len(rows) > MAX_ITEMS:
            lines.append(f"ほか {len(rows) - MAX_ITEMS} 件")
        return "\n".join(lines)
    if isinstance(data, dict):
        figures = _figures(data)
        if figures:
            return figures
        if "datetime" in data:
            return f"{data.get('date')} {data.get('weekday', '')}".strip()
        if isinstance(data.get("collections"), list):
            return "、".join(str(c.get("name")) for c in data["collections"] if isinstance(c, dict))
    return text[:400]

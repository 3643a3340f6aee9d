"""A tool's JSON result as a few lines of Japanese for a person (the chat page, SSE and
``--show-thoughts``): the first results as a numbered list, a statistic's figures, an error's
message. The model still receives the JSON; only what people read changes."""

from __future__ import annotations

import json
from typing import Any

MAX_ITEMS = 5
_NAME_KEYS = ("title", "document", "store_name", "event_name", "name", "doc_id")
_WHERE_KEYS = ("date", "store", "collection", "category", "section", "start_date")


def _item(i: int, row: Any) -> str:
    if not isinstance(row, dict):
        return f"{i}. {row}"
    name = next((str(row[k]) for k in _NAME_KEYS if row.get(k)), "")
    where = "・".join(str(row[k]) for k in _WHERE_KEYS if row.get(k) and str(row[k]) != name)
    return f"{i}. {name}" + (f"({where})" if where else "")


def _figures(data: dict[str, Any]) -> str:
    summary = data.get("summary")
    if not isinstance(summary, dict):
        return ""
    parts = [f"{k}: {v}" for k, v in summary.items() if isinstance(v, int | float | str)]
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

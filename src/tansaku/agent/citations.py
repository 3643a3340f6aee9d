"""Citations the model cannot invent: every source a tool returns gets a short marker
(``[1]``, ``[2]`` …) written into the result the model reads; the answer's citations are
resolved from the markers it writes, and a marker no tool returned is dropped.

>>> sources = Sources(collections={"reports": "reports"})
>>> observed = sources.annotate("search_past_cases", '[{"doc_id": "r1", "title": "日報"}]')
>>> observed
'[{"doc_id": "r1", "title": "日報", "ref": "[1]"}]'
>>> sources.resolve("冷蔵庫が故障しました[1]。売上は倍増しました[7]。")
('冷蔵庫が故障しました[1]。', (Citation(doc_id='r1', …),))

A sentence whose only markers name sources no tool returned is an unsupported claim and is
removed; the kept markers are renumbered in order of first use, so ``[n]`` in the text is the
n-th citation.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from tansaku.agent.events import Citation

MARKER = re.compile(r"[\[［【]\s*([0-9０-９]{1,3})\s*[\]］】]")
_SENTENCE = re.compile(r"[^。！？!?\n]*(?:[。！？!?]+|\n|$)")
# the collection role each document tool searches (other tools name it in their items)
_ROLES = {
    "search_past_cases": "reports",
    "expand_and_search_cases": "reports",
    "search_manual": "manuals",
    "search_lab_notes": "notes",
    "search_card_effects": "cards",
}
_TABLES = {"search_stores": "stores", "search_events": "events"}
_DATA_TITLES = {
    "get_claim_statistics": "クレーム統計",
    "get_sales_trend": "売上推移",
    "get_cash_difference_analysis": "現金過不足の分析",
    "compare_periods": "期間比較",
    "get_current_time": "現在日時",
    "list_rag_collections": "コレクション一覧",
}


def _text(value: Any) -> str:
    return "" if value is None else str(value)


def _period(data: Mapping[str, Any]) -> str:
    period = data.get("period")
    if isinstance(period, Mapping):
        start = period.get("start_date") or period.get("start")
        end = period.get("end_date") or period.get("end")
        if start and end:
            return f"{start}〜{end}"
    return ""


def _row_key(item: dict[str, Any]) -> str | None:
    return next((k for k in item if k.endswith("_id") and item[k] is not None), None)


class Sources:
    """The sources of one answer, numbered as the tools return them."""

    def __init__(self, *, collections: Mapping[str, str] | None = None) -> None:
        self._collections = dict(collections or {})
        self._by_key: dict[str, int] = {}
        self._cites: list[Citation] = []

    def __len__(self) -> int:
        return len(self._cites)

    def _add(self, key: str, citation: Citation) -> str:
        n = self._by_key.get(key)
        if n is None:
            self._cites.append(citation)
            n = self._by_key[key] = len(self._cites)
        return f"[{n}]"

    def _document(self, tool: str, item: dict[str, Any]) -> None:
        role = _ROLES.get(tool, "")
        collection = _text(item.get("collection")) or self._collections.get(role, "")
        title = _text(item.get("title") or item.get("document"))
        citation = Citation(
            doc_id=_text(item["doc_id"]),
            collection=collection,
            title=title,
            date=_text(item.get("date")),
            store=_text(item.get("store")),
            section=_text(item.get("section") or item.get("chapter")),
            tool=tool,
        )
        item["ref"] = self._add(f"doc\0{collection}\0{citation.doc_id}", citation)

    def _row(self, tool: str, item: dict[str, Any]) -> None:
        """A table row (``store_id``, ``event_id`` …) as a source."""
        key = _row_key(item)
        if key is None:
            return
        name = next((k for k in item if k.endswith("_name") or k == "name"), None)
        citation = Citation(
            doc_id=_text(item[key]),
            collection=_TABLES.get(tool, key.removesuffix("_id")),
            title=_text(item.get(name)) if name else "",
            tool=tool,
        )
        item["ref"] = self._add(f"row\0{tool}\0{key}\0{citation.doc_id}", citation)

    def annotate(self, tool: str, result: str) -> str:
        """``result`` (a tool's JSON text) with a ``ref`` marker on each source it returns: on
        each item that has a ``doc_id`` (a document) or an ``…_id`` (a table row), else on the
        whole result of a data tool (statistics, the current time). Errors, empty results and
        text that is not JSON come back unchanged."""
        try:
            data = json.loads(result)
        except (ValueError, TypeError):
            return result
        if isinstance(data, dict) and "error" in data:
            return result
        items = data.get("results") if isinstance(data, dict) else data
        rows = [i for i in items if isinstance(i, dict)] if isinstance(items, list) else []
        if rows and all(r.get("doc_id") for r in rows):
            for item in rows:
                self._document(tool, item)
        elif rows and all(_row_key(r) for r in rows):
            for item in rows:
                self._row(tool, item)
        elif isinstance(data, dict) and data and not isinstance(items, list):
            citation = Citation(
                doc_id=tool,
                collection="",
                title=_DATA_TITLES.get(tool, tool),
                date=_period(data),
                store=_text(data.get("store")),
                tool=tool,
            )
            data["ref"] = self._add(f"data\0{result}", citation)
        else:
            return result
        return json.dumps(data, ensure_ascii=False)

    def resolve(self, text: str) -> tuple[str, tuple[Citation, ...]]:
        """The answer with unsupported sentences removed and markers renumbered, and its
        citations in marker order."""
        known = len(self._cites)
        renumber: dict[int, int] = {}
        kept: list[str] = []
        for sentence in _SENTENCE.findall(text):
            numbers = [int(m) for m in MARKER.findall(sentence)]
            if numbers and not any(1 <= n <= known for n in numbers):
                continue  # cites only sources no tool returned
            for n in numbers:
                if 1 <= n <= known and n not in renumber:
                    renumber[n] = len(renumber) + 1

            def mark(m: re.Match[str]) -> str:
                n = int(m.group(1))
                return f"[{renumber[n]}]" if n in renumber else ""

            kept.append(MARKER.sub(mark, sentence))
        cites = tuple(self._cites[n - 1] for n in renumber)
        return "".join(kept).strip(), cites


def strip_markers(text: str) -> str:
    """``text`` without source markers (an earlier turn's, whose numbers mean nothing now)."""
    return MARKER.sub("", text)

"""Judgement candidates from feedback: a 👎 with the correct result chosen
(「正しい結果はこれ」) says which document a query should have found. Written in the judgement
format ``tansaku eval`` and ``tansaku tune`` read (YAML: ``collection``, ``queries`` with
``query`` and ``relevant``), so a team's ratings improve its own ranking."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from tansaku.appdb.feedback import FeedbackRecord


@dataclass(frozen=True)
class Judgement:
    collection: str
    query: str
    relevant: tuple[str, ...]
    """The documents users chose as correct for this query (newest choice first)."""
    last: datetime


def judgements(records: Sequence[FeedbackRecord], collection: str | None = None) -> list[Judgement]:
    """One judgement per (collection, query) from the records that chose a correct result."""
    found: dict[tuple[str, str], list[FeedbackRecord]] = {}
    for fb in records:
        correct = fb.meta.get("correct")
        query = str(fb.meta.get("query") or "").strip()
        if not isinstance(correct, dict) or not query:
            continue
        name = str(correct.get("collection") or "")
        if collection is not None and name != collection:
            continue
        found.setdefault((name, query), []).append(fb)
    out = []
    for (name, query), rows in found.items():
        rows.sort(key=lambda r: (r.created_at, r.id), reverse=True)
        docs = tuple(dict.fromkeys(str(r.meta["correct"]["doc_id"]) for r in rows))
        out.append(Judgement(name, query, docs, rows[0].created_at))
    out.sort(key=lambda j: (j.collection, j.last), reverse=False)
    return out


def judgement_file(items: Sequence[Judgement], collection: str, team: str) -> dict[str, Any]:
    """The judgement file (as data for YAML) of one collection."""
    return {
        "name": f"{collection}-feedback",
        "collection": collection,
        "queries": [
            {
                "query": j.query,
                "relevant": list(j.relevant),
                "note": f"👎 で選ばれた正しい結果(チーム {team}、最新 {j.last.date().isoformat()})",
            }
            for j in items
            if j.collection == collection
        ],
    }

"""SEARCH_EVENT: one structured JSON line per search, plus process-wide counters.

The event carries what is needed to explain and replay a ranking (normalised and expanded
queries, axes and namespaces, retry stage, thresholds, top-5 scores, timings). It is appended to
``<workspace>/logs/search_events.jsonl`` and logged on the ``tansaku.search`` logger; feedback
later refers to its ``query_id``.
"""

from __future__ import annotations

import json
import logging
import threading
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TextIO

from tansaku.search.types import SearchResult

log = logging.getLogger("tansaku.search")


@dataclass
class SearchCounters:
    total: int = 0
    zero_hit: int = 0

    def snapshot(self) -> dict[str, int]:
        return {"searches_total": self.total, "zero_hit_total": self.zero_hit}


def build_event(result: SearchResult) -> dict[str, Any]:
    """The SEARCH_EVENT of ``result``: the plan's parts in their JSON form (as ``--json``)."""
    plan = result.plan
    form = plan.to_dict()
    return {
        "event": "SEARCH_EVENT",
        "query_id": result.query_id,
        "ts": datetime.now(UTC).isoformat(timespec="milliseconds"),
        "collection": plan.collection,
        "tenant": plan.tenant,
        "query": result.query,
        "normalized_query": plan.normalized_query,
        "classification": form["classification"],
        "expanded_queries": form["expanded_queries"],
        "synonyms": form["synonyms"],
        "date_range": form["date_range"],
        "date_filter": form["date_filter"],
        "filter": form["filter"],
        "axes": [
            {"name": a.name, "mode": a.mode.value, "weight": a.weight} for a in plan.stage.axes
        ],
        "namespaces": list(plan.namespaces) or ["*"],
        "retry_stage": plan.stage.retry_stage,
        "min_score": form["min_score"],
        "top_k": plan.stage.top_k,
        "top5_scores": [round(h.score, 6) for h in result.hits[:5]],
        "top5_doc_ids": [h.doc_id for h in result.hits[:5]],
        "hit_count": len(result.hits),
        "zero_hit": not result.hits,
        "rerank": form["rerank"],
        "timings_ms": {k: round(v, 3) for k, v in result.timings_ms.items()},
    }


class SearchEventLog:
    """Append-only JSON-lines sink (thread-safe) with counters for the metrics endpoint."""

    def __init__(self, path: str | Path | None) -> None:
        self.path = Path(path) if path is not None else None
        self.counters = SearchCounters()
        self._lock = threading.Lock()
        self._fh: TextIO | None = None  # opened at the first event, kept open (0.3 ms a search)

    def emit(self, result: SearchResult) -> dict[str, Any]:
        event = build_event(result)
        line = json.dumps(event, ensure_ascii=False, default=str)
        with self._lock:
            self.counters.total += 1
            if event["zero_hit"]:
                self.counters.zero_hit += 1
            if self.path is not None:
                if self._fh is None or self._fh.closed:
                    self.path.parent.mkdir(parents=True, exist_ok=True)
                    self._fh = self.path.open("a", encoding="utf-8")
                self._fh.write(line + "\n")
                self._fh.flush()  # one line, one append: readers see whole events
        log.info("%s", line)
        return event

    def close(self) -> None:
        with self._lock:
            if self._fh is not None:
                self._fh.close()
                self._fh = None


def read_events(path: str | Path) -> list[dict[str, Any]]:
    p = Path(path)
    if not p.is_file():
        return []
    return [json.loads(x) for x in p.read_text(encoding="utf-8").splitlines() if x.strip()]

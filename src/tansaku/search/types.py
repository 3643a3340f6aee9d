"""Search requests and results: frozen, JSON-serialisable, enough to explain every ranking."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from tansaku.config import Axis, FusionConfig
from tansaku.records import Record
from tansaku.store.base import Filter


@dataclass(frozen=True, kw_only=True)
class SearchRequest:
    """What to search. ``None`` options fall back to the collection's config."""

    query: str
    collection: str
    tenant: str = "default"
    axes: tuple[Axis, ...] | None = None
    fusion: FusionConfig | None = None
    filter: Filter = field(default_factory=Filter)
    top_k: int | None = None
    min_score: float | None = None
    group_by_doc: bool | None = None
    candidates: int | None = None

    def __post_init__(self) -> None:
        if self.top_k is not None and self.top_k <= 0:
            raise ValueError(f"top_k は 1 以上にしてください(現在: {self.top_k})")


@dataclass(frozen=True)
class AxisScore:
    rank: int
    score: float


@dataclass(frozen=True)
class Hit:
    doc_id: str
    score: float
    record: Record
    axes: Mapping[str, AxisScore]

    def to_dict(self) -> dict[str, Any]:
        return {
            "doc_id": self.doc_id,
            "id": self.record.id,
            "field": self.record.field,
            "score": round(self.score, 6),
            "text": self.record.text,
            "metadata": dict(self.record.metadata),
            "axes": {
                name: {"rank": a.rank, "score": round(a.score, 6)} for name, a in self.axes.items()
            },
        }


@dataclass(frozen=True)
class SearchResult:
    query_id: str
    query: str
    hits: tuple[Hit, ...]
    plan: Mapping[str, Any]
    timings_ms: Mapping[str, float]

    def to_dict(self) -> dict[str, Any]:
        return {
            "query_id": self.query_id,
            "query": self.query,
            "hits": [h.to_dict() for h in self.hits],
            "plan": dict(self.plan),
            "timings_ms": {k: round(v, 3) for k, v in self.timings_ms.items()},
        }

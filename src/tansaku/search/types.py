"""Search requests and results: frozen, JSON-serialisable, enough to explain every ranking."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

from tansaku.config import Axis, FusionConfig
from tansaku.errors import InvalidRequest
from tansaku.records import Record
from tansaku.search.filters import parse_where
from tansaku.search.limits import (
    MAX_QUERY_CHARS,
    check_candidates,
    check_min_score,
    check_query,
    check_team,
    check_top_k,
)
from tansaku.search.plan import SearchPlan
from tansaku.store.base import Filter

if TYPE_CHECKING:
    from tansaku.search.suggest import Suggestion


@dataclass(frozen=True, kw_only=True)
class SearchRequest:
    """What to search. ``None`` options fall back to the collection's config.

    Checked when built (``tansaku.search.limits``): the query (at most ``max_query_chars``
    characters, no control characters), the team name, ``top_k`` (1–1000), ``candidates``,
    a finite ``min_score`` and the syntax of ``where``; the fields and metadata keys of the
    filters are checked against the collection when the search runs. Every violation raises
    :class:`~tansaku.errors.InvalidRequest`.
    """

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
    now: datetime | None = None  # clock for 昨日/先週…; default: now in Asia/Tokyo
    expand: bool | None = None  # None: the collection's [query] expand mode (auto = vague only)
    synonyms: bool | None = None  # None: on when the collection configures synonyms
    dates: bool | None = None  # None: the collection's [query] dates setting
    rerank: bool | None = None  # None: the collection's [rerank] enabled setting
    retry: bool | None = None  # None: the collection's [query] retry setting
    # metadata conditions typed as stored: "cost<=3", "store=新宿店,渋谷店" (search/filters.py)
    where: tuple[str, ...] = ()
    max_query_chars: int = MAX_QUERY_CHARS  # longer queries raise QueryTooLong
    # (axis name, text): that axis searches for its own text instead of ``query`` (the lab
    # notes' material query on the BM25 axis, the method query on the dense one); checked
    # against the collection's axes when the search runs
    axis_queries: tuple[tuple[str, str], ...] = ()
    # None: the collection's [query] functional_weight (the weight of the query's question
    # endings and request phrases in its BM25 terms and bigrams; 1.0 weighs nothing down)
    functional_weight: float | None = None

    def __post_init__(self) -> None:
        check_query(self.query, self.max_query_chars)
        check_team(self.tenant)
        check_top_k(self.top_k)
        check_candidates(self.candidates)
        check_min_score(self.min_score)
        if isinstance(self.where, str):
            raise InvalidRequest(f"where は式の並び(タプル)で指定してください: {self.where!r}")
        object.__setattr__(self, "where", tuple(self.where))  # a list is accepted too
        for expr in self.where:
            if not isinstance(expr, str):
                raise InvalidRequest(f"where の各条件は文字列で指定してください: {expr!r}")
            parse_where(expr)
        if isinstance(self.axis_queries, Mapping):
            object.__setattr__(self, "axis_queries", tuple(self.axis_queries.items()))
        object.__setattr__(self, "axis_queries", tuple(tuple(p) for p in self.axis_queries))
        for pair in self.axis_queries:
            if len(pair) != 2 or not all(isinstance(x, str) for x in pair):
                raise InvalidRequest(
                    f"axis_queries は(軸の名前, 検索文)の組で指定してください: {pair!r}"
                )
            check_query(pair[1], self.max_query_chars)
        w = self.functional_weight
        if w is not None and (
            isinstance(w, bool) or not isinstance(w, int | float) or not 0.0 <= w <= 1.0
        ):
            raise InvalidRequest(f"functional_weight は 0〜1 の数にしてください: {w!r}")


@dataclass(frozen=True, slots=True)
class AxisScore:
    rank: int
    score: float
    length: int = 0
    """The BM25 length in terms of the record this axis found (0: unknown), which the
    fusion's length weight read (``[fusion] dense_length``)."""

    def __reduce__(self) -> tuple[Any, ...]:  # by its fields, as Record
        return (AxisScore, (self.rank, self.score, self.length))


@dataclass(frozen=True, slots=True)
class Hit:
    doc_id: str
    score: float
    record: Record
    axes: Mapping[str, AxisScore]
    matched_queries: tuple[str, ...] = ()
    max_similarity: float | None = None
    avg_similarity: float | None = None
    rerank_score: float | None = None

    def __reduce__(self) -> tuple[Any, ...]:  # by its fields, as Record
        return (
            Hit,
            (
                self.doc_id,
                self.score,
                self.record,
                self.axes,
                self.matched_queries,
                self.max_similarity,
                self.avg_similarity,
                self.rerank_score,
            ),
        )

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
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
        if self.matched_queries:
            out["matched_queries"] = list(self.matched_queries)
            out["hit_count"] = len(self.matched_queries)
        if self.max_similarity is not None:
            out["max_similarity"] = round(self.max_similarity, 6)
        if self.avg_similarity is not None:
            out["avg_similarity"] = round(self.avg_similarity, 6)
        if self.rerank_score is not None:
            out["rerank_score"] = round(self.rerank_score, 6)
        return out

    def evolve(self, *, score: float | None = None, record: Record | None = None) -> Hit:
        """This hit with another ``score`` or ``record``: ``dataclasses.replace`` without its
        per-call look at the fields (a search changes up to a hundred candidates)."""
        return Hit(
            self.doc_id,
            self.score if score is None else score,
            self.record if record is None else record,
            self.axes,
            self.matched_queries,
            self.max_similarity,
            self.avg_similarity,
            self.rerank_score,
        )


@dataclass(frozen=True)
class SearchResult:
    """The hits of one search and its :class:`~tansaku.search.plan.SearchPlan` (every decision
    that ranked them); :meth:`to_dict` is the JSON of ``search --json`` and ``/api/search``."""

    query_id: str
    query: str
    hits: tuple[Hit, ...]
    plan: SearchPlan
    timings_ms: Mapping[str, float]
    suggestion: Suggestion | None = None
    """When nothing was found: what the search tried and what to try (``search.suggest``)."""
    versions: Mapping[str, str] = field(default_factory=dict)
    """The collection's ``index_version`` / ``embedding_version`` the search read (its event
    row's; not part of :meth:`to_dict`)."""

    def to_dict(self) -> dict[str, Any]:
        out = {
            "query_id": self.query_id,
            "query": self.query,
            "hits": [h.to_dict() for h in self.hits],
            "plan": self.plan.to_dict(),
            "timings_ms": {k: round(v, 3) for k, v in self.timings_ms.items()},
        }
        if self.suggestion is not None:
            out["suggestion"] = self.suggestion.to_dict()
        return out

"""What a search decided, as a typed, frozen object: :class:`SearchPlan`.

A :class:`~tansaku.search.types.SearchResult` carries one; a server shares results between
threads, so every part is immutable (frozen dataclasses, tuples, enums, dates). The engine builds
the plan once per search, from a frozen :class:`StagePlan` per retry stage.
:meth:`SearchPlan.to_dict` is the JSON of ``tansaku search --json``, ``POST /api/search`` and the
SEARCH_EVENT line (keys and their order are a format: ``tests/search/test_plan_json.py``).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from datetime import date, datetime
from typing import Any, Literal

from tansaku.config import AxisMode, FusionConfig, FusionMethod, MergeMethod
from tansaku.search.classify import Classification
from tansaku.search.filters import describe
from tansaku.store.base import Filter
from tansaku.text.dates import DateRange

UnusedReason = Literal["filter", "no_dates"]
"""``filter``: the caller's date filter wins; ``no_dates``: no record of the team has a date."""


def _day(value: date | None) -> str | None:
    return value.isoformat() if value else None


@dataclass(frozen=True, slots=True)
class SynonymPlan:
    """A term of a query and the words of its synonym group searched with it."""

    term: str
    others: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class AxisPlan:
    """An axis as it ran: ``candidates`` is what it found for the original query."""

    name: str
    mode: AxisMode
    fields: tuple[str, ...]
    weight: float
    candidates: int
    query: str = ""
    """The axis's own text (``axis_queries``), when it did not search for the query."""

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "name": self.name,
            "mode": self.mode.value,
            "fields": list(self.fields),
            "weight": self.weight,
            "candidates": self.candidates,
        }
        if self.query:
            out["query"] = self.query
        return out


@dataclass(frozen=True, slots=True)
class FilterPlan:
    """The filter as it ran: the caller's, ``where`` typed as stored, a date of the query
    folded into ``date_from``/``date_to``. ``where`` holds the conditions as expressions."""

    fields: tuple[str, ...] = ()
    equals: tuple[tuple[str, str | int | bool], ...] = ()
    any_of: tuple[tuple[str, tuple[str, ...]], ...] = ()
    where: tuple[str, ...] = ()
    date_from: date | None = None
    date_to: date | None = None
    doc_ids: tuple[str, ...] = ()

    @classmethod
    def of(cls, f: Filter) -> FilterPlan:
        return cls(
            fields=tuple(f.fields),
            equals=tuple(f.equals.items()),
            any_of=tuple((k, tuple(v)) for k, v in f.any_of.items()),
            where=tuple(text for c in f.where for text in describe(c)),
            date_from=f.date_from,
            date_to=f.date_to,
            doc_ids=tuple(f.doc_ids),
        )

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if self.fields:
            out["fields"] = list(self.fields)
        if self.equals:
            out["equals"] = dict(self.equals)
        if self.any_of:
            out["any_of"] = {k: list(v) for k, v in self.any_of}
        if self.where:
            out["where"] = list(self.where)
        if self.date_from:
            out["date_from"] = self.date_from.isoformat()
        if self.date_to:
            out["date_to"] = self.date_to.isoformat()
        if self.doc_ids:
            out["doc_ids"] = list(self.doc_ids)
        return out


@dataclass(frozen=True, slots=True)
class DateFilterPlan:
    """The date range the search ran with, inclusive, and where it came from: ``query`` (a date
    expression of the query, in ``expression``) or ``filter`` (the caller's ``date_from``/
    ``date_to`` or a ``date`` condition; either end may be open)."""

    start: date | None
    end: date | None
    source: Literal["query", "filter"]
    expression: str | None = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"from": _day(self.start), "to": _day(self.end)}
        out["source"] = self.source
        if self.source == "query":
            out["expression"] = self.expression
        return out


@dataclass(frozen=True, slots=True)
class UnusedDatePlan:
    """A date expression of the query that did not filter, and why."""

    range: DateRange
    reason: UnusedReason

    def to_dict(self) -> dict[str, Any]:
        return {**self.range.to_dict(), "expression": self.range.expression, "reason": self.reason}


@dataclass(frozen=True, slots=True)
class RerankPlan:
    """The reranker's part: ``model`` and ``elapsed_ms`` are ``None`` when no reranker is
    configured (then ``reason`` says so); ``reason`` is Japanese when it did not apply."""

    applied: bool
    reason: str
    model: str | None = None
    elapsed_ms: float | None = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"applied": self.applied, "reason": self.reason}
        if self.model is not None:
            out["model"] = self.model
            out["elapsed_ms"] = self.elapsed_ms
        return out


@dataclass(frozen=True, slots=True, kw_only=True)
class StagePlan:
    """What one retry stage ran: stage 0 as configured, 1 and 2 wider (``search.engine``)."""

    retry_stage: int = 0
    expanded_queries: tuple[str, ...] = ()  # empty: not expanded; else the original first
    timed_out_queries: tuple[str, ...] = ()  # expanded queries cut by the time budget
    synonyms: tuple[SynonymPlan, ...] = ()
    query_terms: tuple[str, ...] = ()  # the original query's analyzer terms, synonyms added
    axes: tuple[AxisPlan, ...] = ()
    # the share of the original query's terms in the best BM25 hit (``[fusion] dense_gate``)
    lexical_coverage: float | None = None
    min_score: float = 0.0
    top_k: int = 10
    merge: MergeMethod | None = None  # how the hits of several queries merged


@dataclass(frozen=True, slots=True, kw_only=True)
class SearchPlan:
    """Every decision of one search: scope, understanding of the query, dates, the retry stage
    that answered (its :class:`StagePlan`), fusion, filter and reranking.

    Read it by attribute (``result.plan.expanded_queries``, ``result.plan.stage.retry_stage``);
    :meth:`to_dict` gives its JSON."""

    collection: str
    tenant: str
    normalized_query: str
    classification: Classification
    now: datetime  # the clock dates of the query were read with
    date_range: DateRange | None = None  # a date expression of the query that filtered
    date_unused: UnusedDatePlan | None = None
    stage: StagePlan = field(default_factory=StagePlan)
    fusion: FusionConfig = field(default_factory=FusionConfig)
    filter: FilterPlan = field(default_factory=FilterPlan)
    group_by_doc: bool = True
    candidates: int = 100
    rerank: RerankPlan | None = None
    filter_empty: bool = False
    """No record of the team passes the filter: the retries were skipped (they relax the score
    and the words, never the filter, so they could not find anything either)."""

    @property
    def date_filter(self) -> DateFilterPlan | None:
        """The date range the search ran with (from the query or the caller's filter)."""
        if self.date_range is not None:
            r = self.date_range
            return DateFilterPlan(r.start, r.end, "query", r.expression)
        if self.filter.date_from or self.filter.date_to:
            return DateFilterPlan(self.filter.date_from, self.filter.date_to, "filter")
        return None

    @property
    def namespaces(self) -> tuple[str, ...]:
        """The fields the axes were restricted to, sorted (empty: every field)."""
        return tuple(sorted({f for a in self.stage.axes for f in a.fields}))

    def to_dict(self) -> dict[str, Any]:
        stage = self.stage
        fusion: dict[str, Any] = {"method": self.fusion.method.value}
        if self.fusion.method is FusionMethod.RRF:
            fusion["k"] = self.fusion.k
        else:
            fusion["normalization"] = self.fusion.normalization
        if self.fusion.method is FusionMethod.LINEAR and self.fusion.dense_gate > 0:
            fusion["dense_gate"] = self.fusion.dense_gate
            if stage.lexical_coverage is not None:
                fusion["lexical_coverage"] = round(stage.lexical_coverage, 4)
        if self.fusion.method is FusionMethod.LINEAR and self.fusion.dense_length > 0:
            fusion["dense_length"] = self.fusion.dense_length
        date_filter = self.date_filter
        return {
            "collection": self.collection,
            "tenant": self.tenant,
            "normalized_query": self.normalized_query,
            "classification": {
                "label": self.classification.label.value,
                "confidence": round(self.classification.confidence, 2),
            },
            "date_range": self.date_range.to_dict() if self.date_range else None,
            "date_filter": date_filter.to_dict() if date_filter else None,
            "date_unused": self.date_unused.to_dict() if self.date_unused else None,
            "now": self.now.isoformat(timespec="minutes"),
            "retry_stage": stage.retry_stage,
            "expanded_queries": list(stage.expanded_queries),
            "timed_out_queries": list(stage.timed_out_queries),
            "synonyms": {s.term: list(s.others) for s in stage.synonyms},
            "query_terms": list(stage.query_terms),
            "axes": [a.to_dict() for a in stage.axes],
            "min_score": round(stage.min_score, 6),
            "top_k": stage.top_k,
            "merge": stage.merge.value if stage.merge else None,
            "fusion": fusion,
            "filter": self.filter.to_dict(),
            "group_by_doc": self.group_by_doc,
            "candidates": self.candidates,
            "rerank": self.rerank.to_dict() if self.rerank else None,
            "filter_empty": self.filter_empty,
        }

    # not a mapping nor a sequence: without this, __getitem__ would make it "iterable" by index
    __iter__ = None

    def __getitem__(self, key: str) -> Any:
        """Deprecated: ``plan["expanded_queries"]`` reads the JSON form (a new dict each
        time); read attributes instead (``plan.stage.expanded_queries``)."""
        warnings.warn(
            f'SearchResult.plan["{key}"] is deprecated; read the SearchPlan attributes '
            "(or plan.to_dict())",
            DeprecationWarning,
            stacklevel=2,
        )
        return self.to_dict()[key]

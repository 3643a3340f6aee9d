"""Hybrid search: query understanding, per-axis retrieval, fusion, merging, retry, events.

The names below are imported on first use (``tansaku.search.limits`` alone costs nothing of the
engine's imports)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from tansaku.lazy import lazy_names

if TYPE_CHECKING:
    from tansaku.search.classify import Classification, QueryLabel, RuleClassifier, classify
    from tansaku.search.engine import search
    from tansaku.search.events import SearchEventLog, build_event, read_events
    from tansaku.search.expand import ExpandContext, Expander, RuleExpander
    from tansaku.search.filters import parse_where, resolve_filter
    from tansaku.search.fusion import linear_fusion, maxnorm, minmax, rrf_fusion
    from tansaku.search.limits import MAX_CANDIDATES, MAX_QUERY_CHARS, MAX_TOP_K
    from tansaku.search.merge import (
        QueryHits,
        enhance_with_metadata,
        filter_by_threshold,
        group_by_source_type,
        merge_hits,
        merge_rrf,
        merge_simple,
        rerank_with_weights,
    )
    from tansaku.search.plan import SearchPlan, StagePlan
    from tansaku.search.services import SearchServices
    from tansaku.search.types import AxisScore, Hit, SearchRequest, SearchResult

_LAZY = {
    "Classification": "tansaku.search.classify",
    "QueryLabel": "tansaku.search.classify",
    "RuleClassifier": "tansaku.search.classify",
    "classify": "tansaku.search.classify",
    "SearchServices": "tansaku.search.services",
    "search": "tansaku.search.engine",
    "SearchEventLog": "tansaku.search.events",
    "build_event": "tansaku.search.events",
    "read_events": "tansaku.search.events",
    "ExpandContext": "tansaku.search.expand",
    "Expander": "tansaku.search.expand",
    "RuleExpander": "tansaku.search.expand",
    "parse_where": "tansaku.search.filters",
    "resolve_filter": "tansaku.search.filters",
    "linear_fusion": "tansaku.search.fusion",
    "maxnorm": "tansaku.search.fusion",
    "minmax": "tansaku.search.fusion",
    "rrf_fusion": "tansaku.search.fusion",
    "MAX_CANDIDATES": "tansaku.search.limits",
    "MAX_QUERY_CHARS": "tansaku.search.limits",
    "MAX_TOP_K": "tansaku.search.limits",
    "QueryHits": "tansaku.search.merge",
    "enhance_with_metadata": "tansaku.search.merge",
    "filter_by_threshold": "tansaku.search.merge",
    "group_by_source_type": "tansaku.search.merge",
    "merge_hits": "tansaku.search.merge",
    "merge_rrf": "tansaku.search.merge",
    "merge_simple": "tansaku.search.merge",
    "rerank_with_weights": "tansaku.search.merge",
    "SearchPlan": "tansaku.search.plan",
    "StagePlan": "tansaku.search.plan",
    "AxisScore": "tansaku.search.types",
    "Hit": "tansaku.search.types",
    "SearchRequest": "tansaku.search.types",
    "SearchResult": "tansaku.search.types",
}

__getattr__, __dir__ = lazy_names(__name__, _LAZY, globals())


__all__ = [
    "MAX_CANDIDATES",
    "MAX_QUERY_CHARS",
    "MAX_TOP_K",
    "AxisScore",
    "Classification",
    "ExpandContext",
    "Expander",
    "Hit",
    "QueryHits",
    "QueryLabel",
    "RuleClassifier",
    "RuleExpander",
    "SearchEventLog",
    "SearchPlan",
    "SearchRequest",
    "SearchResult",
    "SearchServices",
    "StagePlan",
    "build_event",
    "classify",
    "enhance_with_metadata",
    "filter_by_threshold",
    "group_by_source_type",
    "linear_fusion",
    "maxnorm",
    "merge_hits",
    "merge_rrf",
    "merge_simple",
    "minmax",
    "parse_where",
    "read_events",
    "rerank_with_weights",
    "resolve_filter",
    "rrf_fusion",
    "search",
]

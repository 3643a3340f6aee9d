"""Hybrid search: query understanding, per-axis retrieval, fusion, merging, retry, events."""

from tansaku.search.classify import Classification, QueryLabel, RuleClassifier, classify
from tansaku.search.engine import SearchServices, search
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
from tansaku.search.types import AxisScore, Hit, SearchRequest, SearchResult

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

"""Hybrid search: per-axis retrieval, fusion, aggregation."""

from tansaku.search.engine import search
from tansaku.search.fusion import linear_fusion, minmax, rrf_fusion
from tansaku.search.types import AxisScore, Hit, SearchRequest, SearchResult

__all__ = [
    "AxisScore",
    "Hit",
    "SearchRequest",
    "SearchResult",
    "linear_fusion",
    "minmax",
    "rrf_fusion",
    "search",
]

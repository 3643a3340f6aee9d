"""tansaku (探索): Japanese-first hybrid search and agents over business knowledge."""

from tansaku.client import CollectionInfo, Tansaku, connect
from tansaku.config import Axis, AxisMode, CollectionConfig, FusionConfig, FusionMethod
from tansaku.records import Record, record_id
from tansaku.search.types import Hit, SearchRequest, SearchResult
from tansaku.store.base import Filter

__version__ = "0.1.0"

__all__ = [
    "Axis",
    "AxisMode",
    "CollectionConfig",
    "CollectionInfo",
    "Filter",
    "FusionConfig",
    "FusionMethod",
    "Hit",
    "Record",
    "SearchRequest",
    "SearchResult",
    "Tansaku",
    "__version__",
    "connect",
    "record_id",
]

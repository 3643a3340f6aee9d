"""tansaku (探索): Japanese-first hybrid search and agents over business knowledge.

``import tansaku`` loads nothing heavy: each name below is imported on first use (``connect``
brings the store engine, numpy and the analyzer with it)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from tansaku.lazy import lazy_names

if TYPE_CHECKING:
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

_LAZY = {
    "CollectionInfo": "tansaku.client",
    "Tansaku": "tansaku.client",
    "connect": "tansaku.client",
    "Axis": "tansaku.config",
    "AxisMode": "tansaku.config",
    "CollectionConfig": "tansaku.config",
    "FusionConfig": "tansaku.config",
    "FusionMethod": "tansaku.config",
    "Record": "tansaku.records",
    "record_id": "tansaku.records",
    "Hit": "tansaku.search.types",
    "SearchRequest": "tansaku.search.types",
    "SearchResult": "tansaku.search.types",
    "Filter": "tansaku.store.base",
}

__getattr__, __dir__ = lazy_names(__name__, _LAZY, globals())

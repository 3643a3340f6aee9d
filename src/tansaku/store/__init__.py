"""Storage backends behind typed protocols (``tansaku.store.protocols``)."""

from tansaku.store.base import Filter, MetaCondition, ScoredRecord, StoredInfo, StoredPoint
from tansaku.store.ids import point_id, unit_point_id
from tansaku.store.protocols import (
    CollectionStorage,
    RecordStore,
    Store,
    UnitIndex,
)
from tansaku.store.sparse import SparseVec, doc_vector, query_vector, term_id

__all__ = [
    "CollectionStorage",
    "Filter",
    "MetaCondition",
    "RecordStore",
    "ScoredRecord",
    "SparseVec",
    "Store",
    "StoredInfo",
    "StoredPoint",
    "UnitIndex",
    "doc_vector",
    "point_id",
    "query_vector",
    "term_id",
    "unit_point_id",
]

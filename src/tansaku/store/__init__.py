"""Storage backends behind one small protocol."""

from tansaku.store.base import Filter, ScoredRecord, Store, StoredPoint
from tansaku.store.sparse import SparseVec, doc_vector, query_vector, term_id

__all__ = [
    "Filter",
    "ScoredRecord",
    "SparseVec",
    "Store",
    "StoredPoint",
    "doc_vector",
    "query_vector",
    "term_id",
]

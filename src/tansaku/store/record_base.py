"""What the record stores of both engines share above their engine — the embedded
:class:`~tansaku.store.edge.EdgeStore` and the server's
:class:`~tansaku.store.qdrant.records.QdrantRecordStore`: the
:class:`~tansaku.store.protocols.RecordStore` signatures of the searches and the payload reads,
and the rules every engine follows.

- A BM25 search of no terms finds nothing, and only positive BM25 scores count.
- A hybrid search has a dense leg, and a BM25 leg when the query has terms; its weights are cut
  to its legs (dense first), and the engine fuses them.
- ``scan`` and ``hashes`` read the payloads of the tenant's points (``_payloads``); ``lengths``
  adds up ``bm25_len`` per team and field (:func:`lengths_of`).

An engine answers the hooks (``_payloads``, ``_cached_sample``, ``_sparse_hits``, ``_dense_hits``,
``_dense_leg``, ``_sparse_leg``, ``_fused``), each search with a :class:`SearchScope`.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Unpack

import numpy as np

from tansaku.store.base import (
    Filter,
    ScoredRecord,
    StoredInfo,
    StoredPoint,
    scan_keys,
    stored_info,
)
from tansaku.store.protocols import HybridOptions, Lengths, SearchOptions
from tansaku.store.shard import filter_payload
from tansaku.store.sparse import SparseVec

DENSE = "dense"  # the named vectors of a record's point, on every engine
SPARSE = "bm25"
DEFAULT_LIMIT = 10
"""Hits a store search returns when the caller names no ``limit``."""


@dataclass(frozen=True, slots=True)
class SearchScope:
    """What a search asks besides its query: the team, the filter, how many hits, and whether
    they carry text and metadata (else candidates: see
    :class:`~tansaku.store.protocols.SearchOptions`)."""

    tenant: str
    filter: Filter | None = None
    limit: int = DEFAULT_LIMIT
    with_text: bool = True

    @property
    def fields(self) -> tuple[str, ...]:
        """The fields the filter keeps (empty: all): the corpus of a BM25 IDF."""
        return self.filter.fields if self.filter is not None else ()


def dense_list(vector: np.ndarray) -> list[float]:
    """A dense vector as the engines take it: float32 values in a list."""
    return np.asarray(vector, dtype=np.float32).tolist()  # type: ignore[no-any-return]


def stored_payload(tenant: str, point: StoredPoint) -> dict[str, Any]:
    """The payload of a record's point on every engine: the filterable payload
    (:func:`~tansaku.store.shard.filter_payload`), the text, the content hash and the BM25
    length (read back by :func:`~tansaku.store.base.record_of` and ``stored_info``)."""
    rec = point.record
    return {
        **filter_payload(tenant, rec),
        "text": rec.text,
        "hash": point.content_hash,
        "bm25_len": point.bm25_len,
    }


def stored_vectors(point: StoredPoint, sparse: Callable[[SparseVec], Any]) -> dict[str, Any]:
    """The named vectors of a record's point: ``bm25`` as the engine's sparse vector
    (``sparse`` converts it), and ``dense`` when the point has one."""
    vectors: dict[str, Any] = {SPARSE: sparse(point.sparse)}
    if point.dense is not None:
        vectors[DENSE] = dense_list(point.dense)
    return vectors


def lengths_of(payloads: Iterable[Mapping[str, Any]]) -> Lengths:
    """(sum of ``bm25_len``, records) per team and field of the points' payloads."""
    out: dict[str, dict[str, list[int]]] = {}
    for payload in payloads:
        acc = out.setdefault(str(payload.get("tenant", "")), {}).setdefault(
            str(payload.get("field", "")), [0, 0]
        )
        acc[0] += int(payload.get("bm25_len", 0) or 0)
        acc[1] += 1
    return {t: {f: (v[0], v[1]) for f, v in fields.items()} for t, fields in out.items()}


class RecordStoreBase(ABC):
    """The engine-neutral half of a :class:`~tansaku.store.protocols.RecordStore`."""

    # -- reads --------------------------------------------------------------------------
    @abstractmethod
    def _payloads(
        self, tenant: str, filter: Filter | None, keys: Sequence[str]
    ) -> list[dict[str, Any]]:
        """The payload ``keys`` of every point of the tenant matching ``filter``."""

    @abstractmethod
    def _cached_sample(self, tenant: str, keys: Sequence[str], limit: int) -> dict[str, list[Any]]:
        """What :meth:`metadata_sample` returns, as the engine caches it."""

    def scan(
        self,
        tenant: str,
        filter: Filter | None = None,
        *,
        with_text: bool = False,
        with_meta: bool = False,
    ) -> list[StoredInfo]:
        keys = scan_keys(with_text=with_text, with_meta=with_meta)
        return [stored_info(p) for p in self._payloads(tenant, filter, keys)]

    def hashes(self, tenant: str, filter: Filter | None = None) -> dict[str, str]:
        return {
            p["rid"]: p.get("hash", "") for p in self._payloads(tenant, filter, ["rid", "hash"])
        }

    def metadata_sample(
        self, tenant: str, keys: Sequence[str] = (), *, limit: int = 32
    ) -> dict[str, list[Any]]:
        """Stored values of metadata ``keys`` from up to ``limit`` of the tenant's records that
        have each key (a key no record has is left out); no ``keys``: every key and value of
        ``limit`` records. A copy: the engine may cache what it read."""
        return {k: list(v) for k, v in self._cached_sample(tenant, keys, limit).items()}

    # -- searches -----------------------------------------------------------------------
    @abstractmethod
    def _sparse_hits(self, query: SparseVec, scope: SearchScope) -> list[ScoredRecord]:
        """The engine's BM25 hits of a query with terms (scores as the engine gives them)."""

    @abstractmethod
    def _dense_hits(self, vector: np.ndarray, scope: SearchScope) -> list[ScoredRecord]:
        """The engine's cosine hits."""

    @abstractmethod
    def _dense_leg(self, vector: np.ndarray, scope: SearchScope, candidates: int) -> Any:
        """The dense prefetch of a hybrid search, ``candidates`` long."""

    @abstractmethod
    def _sparse_leg(self, query: SparseVec, scope: SearchScope, candidates: int) -> Any:
        """The BM25 prefetch of a hybrid search, ``candidates`` long."""

    @abstractmethod
    def _fused(
        self, legs: list[Any], scope: SearchScope, *, k: int, weights: list[float] | None
    ) -> list[ScoredRecord]:
        """The engine's RRF of the legs (``weights`` one per leg, or None)."""

    def search_sparse(
        self, tenant: str, query: SparseVec, **options: Unpack[SearchOptions]
    ) -> list[ScoredRecord]:
        if not len(query):
            return []
        hits = self._sparse_hits(query, SearchScope(tenant, **options))
        return [h for h in hits if h.score > 0]

    def search_dense(
        self, tenant: str, vector: np.ndarray, **options: Unpack[SearchOptions]
    ) -> list[ScoredRecord]:
        return self._dense_hits(vector, SearchScope(tenant, **options))

    def search_hybrid(
        self,
        tenant: str,
        *,
        sparse: SparseVec,
        dense: np.ndarray,
        **options: Unpack[HybridOptions],
    ) -> list[ScoredRecord]:
        """One request: a dense and a BM25 prefetch fused by the engine's RRF with ``k``
        pinned (0-based ranks: 1/(k + rank) per leg; ``weights`` in the order dense, sparse)."""
        scope = SearchScope(tenant, options.get("filter"), options.get("limit", DEFAULT_LIMIT))
        candidates = options.get("candidates", 100)
        legs = [self._dense_leg(dense, scope, candidates)]
        if len(sparse):
            legs.append(self._sparse_leg(sparse, scope, candidates))
        weights = options.get("weights")
        w = list(weights)[: len(legs)] if weights is not None else None
        return self._fused(legs, scope, k=options.get("k", 60), weights=w)

"""Embedded default store: Qdrant's engine in-process through ``qdrant-edge-py``.

One shard per collection in ``<collection>/shard``. Each point carries a named dense vector
(``dense``, cosine) and a sparse ``bm25`` vector whose IDF the engine applies
(``Modifier.Idf``), computed over the tenant (and axis fields) only, so one team's documents never
shift another team's scores. Point ids are unsigned 64-bit integers of (tenant, record id)
(``tansaku.store.ids``). Implements :class:`~tansaku.store.protocols.RecordStore`.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import qdrant_edge as qe

from tansaku.records import Record
from tansaku.store.base import (
    Filter,
    ScoredRecord,
    StoredPoint,
    record_of,
    stored_length,
    stored_point,
)
from tansaku.store.candidates import CandidateIndex, identity
from tansaku.store.ids import point_id
from tansaku.store.protocols import Lengths
from tansaku.store.record_base import (
    DENSE,
    SPARSE,
    RecordStoreBase,
    SearchScope,
    dense_list,
    lengths_of,
    stored_payload,
    stored_vectors,
)
from tansaku.store.shard import (
    ON_DEMAND,
    ShardOwner,
    open_shard,
    owned,
    sample_metadata,
    search_filter,
    search_threads,
    sparse_vector,
    tenant_filter,
)
from tansaku.store.sparse import SparseVec

_EXACT_BELOW = 20_000  # brute force is exact and fast enough below this many points
_HNSW_EF = 256
OPTIMIZE_MIN_CHANGED = 1_000  # ingests that change fewer points leave indexing to a later one


def _stored_point(payload: dict[str, Any], vectors: Any) -> StoredPoint:
    """``vectors``: the named vectors the engine returns."""
    vectors = vectors if isinstance(vectors, dict) else {}
    return stored_point(payload, vectors.get(SPARSE), vectors.get(DENSE))


class EdgeStore(ShardOwner, RecordStoreBase):
    """A :class:`~tansaku.store.protocols.RecordStore` on one qdrant-edge shard."""

    def __init__(self, path: str | Path, *, dim: int, read_only: bool = False) -> None:
        self.path = Path(path)
        self.dim = dim
        self.read_only = read_only
        self._lock = threading.RLock()
        self._total: int | None = None  # cached point count; None after any write
        self._counts: dict[str, int] = {}  # cached count() results; cleared by any write
        self._samples: dict[tuple[str, tuple[str, ...], int], dict[str, list[Any]]] = {}
        self._candidates = CandidateIndex()  # point id -> what a text-less candidate needs
        cfg = qe.EdgeConfig(
            vectors={
                DENSE: qe.EdgeVectorParams(size=dim, distance=qe.Distance.Cosine, memory=ON_DEMAND)
            },
            sparse_vectors={
                SPARSE: qe.EdgeSparseVectorParams(modifier=qe.Modifier.Idf, memory=ON_DEMAND)
            },
            payload_memory=ON_DEMAND,
            id_tracker_memory=ON_DEMAND,
            wal_enabled=False,
            max_search_threads=search_threads(),
        )
        self._shard, created = open_shard(self.path, cfg, read_only=read_only)
        self._attach_ids(created)

    def forget_cached(self) -> None:
        """What was read from the engine shard (counts stay: a closed shard never changes)."""
        with self._lock:
            self._samples.clear()
            self._candidates.clear()

    # -- writes -------------------------------------------------------------------------
    def upsert(self, tenant: str, points: Sequence[StoredPoint]) -> None:
        if not points:
            return
        qpoints = [
            qe.Point(
                point_id(tenant, p.record.id),
                stored_vectors(p, sparse_vector),
                stored_payload(tenant, p),
            )
            for p in points
        ]
        known = [
            (point_id(tenant, p.record.id), identity(tenant, p.record, length=p.bm25_len))
            for p in points
        ]
        with self._lock:
            self._shard.update(qe.UpdateOperation.upsert_points(qpoints))
            self._total = None
            self._counts.clear()
            self._samples.clear()
            self._candidates.wrote(known)

    def delete(self, tenant: str, ids: Sequence[str]) -> None:
        if not ids:
            return
        pids = [point_id(tenant, i) for i in ids]
        with self._lock:
            self._shard.update(qe.UpdateOperation.delete_points(list[Any](pids)))
            self._total = None
            self._counts.clear()
            self._samples.clear()
            self._candidates.deleted(pids)

    def delete_tenant(self, tenant: str) -> None:
        """Remove every record of the team."""
        with self._lock:
            self._shard.update(qe.UpdateOperation.delete_points_by_filter(tenant_filter(tenant)))
            self._total = None
            self._counts.clear()
            self._samples.clear()
            self._candidates.team_deleted(tenant)

    def update_sparse(self, tenant: str, vectors: Mapping[str, SparseVec]) -> None:
        """Replace the bm25 vector of existing records (used when field lengths drift)."""
        if not vectors:
            return
        ops = [
            qe.PointVectors(point_id(tenant, rid), {SPARSE: sparse_vector(v)})
            for rid, v in vectors.items()
        ]
        with self._lock:
            self._shard.update(qe.UpdateOperation.update_vectors(ops))

    # -- reads --------------------------------------------------------------------------
    def count(self, tenant: str, filter: Filter | None = None) -> int:
        """Exact count (cached per tenant and filter until the next write: the search pipeline
        asks "does this team have dated records?" for every query with a date in it)."""
        key = f"{tenant}\x00{filter!r}"
        with self._lock:
            if key not in self._counts:
                self._counts[key] = int(
                    self._shard.count(
                        qe.CountRequest(filter=tenant_filter(tenant, filter), exact=True)
                    )
                )
            return self._counts[key]

    def total(self) -> int:
        """Points in the shard, all tenants (cached until the next write: it costs ~5 ms at
        100k points and every dense search asks for it)."""
        with self._lock:
            if self._total is None:
                self._total = int(self._shard.count(qe.CountRequest(exact=True)))
            return self._total

    def get(self, tenant: str, ids: Sequence[str]) -> list[Record]:
        if not ids:
            return []
        with self._lock:
            found = self._shard.retrieve(
                [point_id(tenant, i) for i in ids], with_payload=True, with_vector=False
            )
        by_rid = {payload["rid"]: record_of(payload) for _, payload in owned(found, tenant)}
        return [by_rid[i] for i in ids if i in by_rid]

    def term_ids(self, tenant: str, rid: str) -> frozenset[int]:
        tenant_only = qe.PayloadSelector.Include(["tenant"])
        with self._lock:
            found = self._shard.retrieve(
                [point_id(tenant, rid)], with_payload=tenant_only, with_vector=[SPARSE]
            )
        for point, _ in owned(found, tenant):
            sparse = (point.vector or {}).get(SPARSE)
            return frozenset(sparse.indices) if sparse is not None else frozenset()
        return frozenset()

    def _scrolled(self, flt: qe.Filter | None, keys: Sequence[str]) -> Iterator[dict[str, Any]]:
        """The payload ``keys`` of every point matching ``flt`` (all points: None)."""
        selector = qe.PayloadSelector.Include(list(keys))
        offset = None
        while True:
            with self._lock:
                points, offset = self._shard.scroll(
                    qe.ScrollRequest(offset=offset, limit=1000, filter=flt, with_payload=selector)
                )
            yield from (p.payload or {} for p in points)
            if offset is None or not points:
                return

    def _payloads(
        self, tenant: str, filter: Filter | None, keys: Sequence[str]
    ) -> list[dict[str, Any]]:
        with self._lock:
            return list(self._scrolled(tenant_filter(tenant, filter), keys))

    def lengths(self) -> Lengths:
        with self._lock:
            return lengths_of(self._scrolled(None, ["tenant", "field", "bm25_len"]))

    def tenants(self) -> list[str]:
        """Every tenant that has a record, sorted (one payload-only pass over the shard)."""
        return sorted(self.lengths())

    def dump(self, *, batch: int = 256) -> Iterator[tuple[str, list[StoredPoint]]]:
        """Every record with its stored vectors, tenant by tenant (sorted), ``batch`` points at
        a time. The dense vector is as stored: the engine keeps cosine vectors normalised."""
        if batch < 1:
            raise ValueError(f"batch は 1 以上にしてください: {batch}")
        for tenant in self.tenants():
            flt = tenant_filter(tenant)
            offset = None
            while True:
                with self._lock:
                    points, offset = self._shard.scroll(
                        qe.ScrollRequest(
                            offset=offset,
                            limit=batch,
                            filter=flt,
                            with_payload=True,
                            with_vector=True,
                        )
                    )
                out = [_stored_point(p.payload or {}, p.vector or {}) for p in points]
                if out:
                    yield tenant, out
                if offset is None or not points:
                    break

    def _params(self, *, dense: bool) -> qe.SearchParams | None:
        if not dense:
            return None
        if self.total() < _EXACT_BELOW:
            return qe.SearchParams(exact=True)
        return qe.SearchParams(hnsw_ef=_HNSW_EF)

    def _idf_params(self, scope: SearchScope) -> qe.SearchParams:
        corpus: list[Any] = [qe.FieldCondition("tenant", match=qe.MatchValue(scope.tenant))]
        if scope.fields:
            corpus.append(qe.FieldCondition("field", match=qe.MatchAny(list(scope.fields))))
        return qe.SearchParams(idf=qe.IdfParams(corpus=qe.Filter(must=corpus)))

    def _filter(self, scope: SearchScope) -> qe.Filter | None:
        return search_filter(scope.tenant, scope.filter, sole=self._sole(scope.tenant))

    def _sole(self, tenant: str) -> bool:
        """Whether every point of the shard is the tenant's (cached counts: free per query)."""
        total = self.total()
        return total > 0 and self.count(tenant) == total

    def _run(self, tenant: str, request: qe.QueryRequest) -> list[ScoredRecord]:
        with self._lock:
            points = self._shard.query(request)
        return [
            ScoredRecord(record_of(payload), float(p.score), stored_length(payload))
            for p, payload in owned(points, tenant)
        ]

    def _search(self, scope: SearchScope, request: qe.QueryRequest) -> list[ScoredRecord]:
        """Whole records (``with_text``), or candidates: ids and scores from the engine, the
        rest from the candidate index (no payload read)."""
        if scope.with_text:
            return self._run(scope.tenant, request)
        with self._lock:
            return self._candidates.resolve(self._shard, self._shard.query(request), scope.tenant)

    def _sparse_hits(self, query: SparseVec, scope: SearchScope) -> list[ScoredRecord]:
        req = qe.QueryRequest(
            limit=scope.limit,
            query=qe.Query.Nearest(sparse_vector(query), using=SPARSE),
            filter=self._filter(scope),
            with_payload=scope.with_text,
            params=self._idf_params(scope),
        )
        return self._search(scope, req)

    def _dense_hits(self, vector: np.ndarray, scope: SearchScope) -> list[ScoredRecord]:
        req = qe.QueryRequest(
            limit=scope.limit,
            query=qe.Query.Nearest(dense_list(vector), using=DENSE),
            filter=self._filter(scope),
            with_payload=scope.with_text,
            params=self._params(dense=True),
        )
        return self._search(scope, req)

    def _dense_leg(self, vector: np.ndarray, scope: SearchScope, candidates: int) -> qe.Prefetch:
        return qe.Prefetch(
            candidates,
            query=qe.Query.Nearest(dense_list(vector), using=DENSE),
            filter=self._filter(scope),
            params=self._params(dense=True),
        )

    def _sparse_leg(self, query: SparseVec, scope: SearchScope, candidates: int) -> qe.Prefetch:
        return qe.Prefetch(
            candidates,
            query=qe.Query.Nearest(sparse_vector(query), using=SPARSE),
            filter=self._filter(scope),
            params=self._idf_params(scope),
        )

    def _fused(
        self, legs: list[Any], scope: SearchScope, *, k: int, weights: list[float] | None
    ) -> list[ScoredRecord]:
        req = qe.QueryRequest(
            limit=scope.limit,
            prefetches=legs,
            query=qe.Fusion.Rrf(k=k, weights=weights),  # type: ignore[arg-type]
            with_payload=True,
        )
        return self._run(scope.tenant, req)

    def needs_index(self, changed: int) -> bool:
        """Whether a write of ``changed`` points is worth building the HNSW index for: searches
        switch from exact to HNSW at ``_EXACT_BELOW`` points, and new points stay brute-force
        searchable until :meth:`optimize` runs."""
        return changed >= OPTIMIZE_MIN_CHANGED and self.total() >= _EXACT_BELOW

    def _cached_sample(self, tenant: str, keys: Sequence[str], limit: int) -> dict[str, list[Any]]:
        """:func:`~tansaku.store.shard.sample_metadata`, cached until the next write."""
        cache_key = (tenant, tuple(keys), limit)
        with self._lock:
            cached = self._samples.get(cache_key)
            if cached is None:
                if len(self._samples) >= 1024:
                    self._samples.clear()
                cached = self._samples[cache_key] = sample_metadata(
                    self._shard, tenant, keys, limit
                )
            return cached

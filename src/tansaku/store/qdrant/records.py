"""The records of a collection in a Qdrant collection (``{prefix}{name}``): a
:class:`~tansaku.store.protocols.RecordStore` with the embedded store's results.

Each point carries a named dense vector ``dense`` (cosine) and a sparse ``bm25`` vector whose
IDF the engine applies (``Modifier.IDF``) over the corpus of the search's team and fields
(``IdfCorpusParams``: one team's documents never move another team's scores); its payload is
the embedded store's (``filter_payload`` + ``text``, ``hash``, ``bm25_len``) and its id the same
unsigned 64-bit integer (``tansaku.store.ids``). Every call adds the team's condition and
checks the team of every point it returns.

Caches: a server is shared by every process that writes to it, so ``total``, ``count`` and
``metadata_sample`` are cached for ``cache_s`` seconds (default 2; 0 turns caching off) and
dropped by any write of this instance — long enough to serve one search's repeated questions,
short enough that another process's write shows up at once for the next question.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from tansaku.errors import StorageError
from tansaku.records import Record
from tansaku.store.base import Filter, ScoredRecord, StoredPoint, stored_length
from tansaku.store.ids import point_id
from tansaku.store.qdrant import layout
from tansaku.store.qdrant.filters import idf_params, tenant_filter
from tansaku.store.qdrant.scans import BATCH, DENSE, PAGE, SPARSE, RecordScans, to_record
from tansaku.store.qdrant.settings import QdrantSettings, import_qdrant_client
from tansaku.store.record_base import SearchScope, dense_list, stored_payload, stored_vectors
from tansaku.store.sparse import SparseVec

import_qdrant_client()  # MissingExtra naming `tansaku[qdrant]` before the import below fails

from qdrant_client import QdrantClient, models  # noqa: E402

EXACT_BELOW = 20_000  # exact dense search below this many points, as the embedded store
HNSW_EF = 256
_CANDIDATE_KEYS = ["tenant", "rid", "doc_id", "field", "meta.source_type", "bm25_len"]


def sparse_model(vec: SparseVec) -> models.SparseVector:
    return models.SparseVector(indices=list(vec.indices), values=list(vec.values))


class QdrantRecordStore(RecordScans):
    """A :class:`~tansaku.store.protocols.RecordStore` on one Qdrant collection."""

    def __init__(
        self,
        client: QdrantClient,
        name: str,
        *,
        dim: int,
        settings: QdrantSettings,
        read_only: bool = False,
        cache_s: float = 2.0,
    ) -> None:
        self.dim = dim
        self._cache_s = cache_s
        self._cache: dict[Any, tuple[float, Any]] = {}
        dense = models.VectorParams(
            size=dim, distance=models.Distance.COSINE, on_disk=settings.on_disk or None
        )
        info = self._open(
            client,
            name,
            settings.collection_name(name),
            settings,
            read_only=read_only,
            vectors={DENSE: dense},
            sparse={SPARSE: layout.idf_sparse(settings)},
        )
        if info is not None:
            vectors = info.config.params.vectors
            params = vectors.get(DENSE) if isinstance(vectors, dict) else None
            if params is None or params.size != dim:
                size = params.size if params is not None else "なし"
                raise StorageError(
                    f"Qdrant のコレクション {self.collection} の埋め込み次元({size})が"
                    f"このコレクションの埋め込みモデルの次元({dim})と合いません。"
                    "作成時と同じ埋め込みモデルで開いてください"
                )

    def _written(self) -> None:
        with self._lock:
            self._cache.clear()
            self._exists = True

    # -- writes -------------------------------------------------------------------------
    def upsert(self, tenant: str, points: Sequence[StoredPoint]) -> None:
        self._writable()
        structs = [
            models.PointStruct(
                id=point_id(tenant, p.record.id),
                vector=stored_vectors(p, sparse_model),
                payload=stored_payload(tenant, p),
            )
            for p in points
        ]
        for i in range(0, len(structs), BATCH):
            self.client.upsert(self.collection, points=structs[i : i + BATCH], wait=True)
        if structs:
            self._written()

    def delete(self, tenant: str, ids: Sequence[str]) -> None:
        self._writable()
        if not ids:
            return
        pids: list[Any] = [point_id(tenant, i) for i in ids]
        for i in range(0, len(pids), PAGE):
            selector = models.PointIdsList(points=pids[i : i + PAGE])
            self.client.delete(self.collection, selector, wait=True)
        self._written()

    def delete_tenant(self, tenant: str) -> None:
        self._writable()
        selector = models.FilterSelector(filter=tenant_filter(tenant))
        self.client.delete(self.collection, selector, wait=True)
        self._written()

    def update_sparse(self, tenant: str, vectors: Mapping[str, SparseVec]) -> None:
        """Replace the bm25 vector of existing records (ids not stored are left out)."""
        self._writable()
        if not vectors:
            return
        found = self.client.retrieve(
            self.collection,
            [point_id(tenant, rid) for rid in vectors],
            with_payload=["tenant", "rid"],
        )  # a server refuses the whole batch for one unknown id: keep the stored ones
        stored = {
            p.payload["rid"] for p in found if p.payload and p.payload.get("tenant") == tenant
        }
        ops = [
            models.PointVectors(id=point_id(tenant, rid), vector={SPARSE: sparse_model(v)})
            for rid, v in vectors.items()
            if rid in stored
        ]
        for i in range(0, len(ops), BATCH):
            self.client.update_vectors(self.collection, points=ops[i : i + BATCH], wait=True)
        self._written()

    # -- reads --------------------------------------------------------------------------
    def count(self, tenant: str, filter: Filter | None = None) -> int:
        if not self._present():
            return 0
        flt = tenant_filter(tenant, filter)
        return self._cached(
            ("count", tenant, repr(filter)),
            lambda: self.client.count(self.collection, count_filter=flt, exact=True).count,
        )

    def total(self) -> int:
        if not self._present():
            return 0
        return self._cached(("total",), lambda: self.client.count(self.collection).count)

    def get(self, tenant: str, ids: Sequence[str]) -> list[Record]:
        if not ids or not self._present():
            return []
        found = self.client.retrieve(
            self.collection, [point_id(tenant, i) for i in ids], with_payload=True
        )
        by_rid = {
            p.payload["rid"]: to_record(p.payload)
            for p in found
            if p.payload and p.payload.get("tenant") == tenant
        }
        return [by_rid[i] for i in ids if i in by_rid]

    def term_ids(self, tenant: str, rid: str) -> frozenset[int]:
        if not self._present():
            return frozenset()
        found = self.client.retrieve(
            self.collection, [point_id(tenant, rid)], with_payload=["tenant"], with_vectors=[SPARSE]
        )
        for p in found:
            if p.payload and p.payload.get("tenant") == tenant and isinstance(p.vector, dict):
                sparse = p.vector.get(SPARSE)
                return frozenset(getattr(sparse, "indices", ()) or ())
        return frozenset()

    # -- searches -----------------------------------------------------------------------
    def _hits(self, tenant: str, points: Sequence[models.ScoredPoint]) -> list[ScoredRecord]:
        out = []
        for p in points:
            payload = p.payload
            if payload and payload.get("tenant") == tenant:
                out.append(ScoredRecord(to_record(payload), float(p.score), stored_length(payload)))
        return out

    def _dense_params(self) -> models.SearchParams | None:
        if self.settings.is_local:  # local mode is always exact (and warns about params)
            return None
        if self.total() < EXACT_BELOW:
            return models.SearchParams(exact=True)
        return models.SearchParams(hnsw_ef=HNSW_EF)

    def _query(self, scope: SearchScope, **request: Any) -> list[ScoredRecord]:
        if not self._present():
            return []
        payload: Any = True if scope.with_text else _CANDIDATE_KEYS
        found = self.client.query_points(self.collection, with_payload=payload, **request)
        return self._hits(scope.tenant, found.points)

    def _sparse_hits(self, query: SparseVec, scope: SearchScope) -> list[ScoredRecord]:
        return self._query(
            scope,
            query=sparse_model(query),
            using=SPARSE,
            query_filter=tenant_filter(scope.tenant, scope.filter),
            search_params=idf_params(scope.tenant, scope.fields),
            limit=scope.limit,
        )

    def _dense_hits(self, vector: np.ndarray, scope: SearchScope) -> list[ScoredRecord]:
        return self._query(
            scope,
            query=dense_list(vector),
            using=DENSE,
            query_filter=tenant_filter(scope.tenant, scope.filter),
            search_params=self._dense_params(),
            limit=scope.limit,
        )

    def _dense_leg(
        self, vector: np.ndarray, scope: SearchScope, candidates: int
    ) -> models.Prefetch:
        return models.Prefetch(
            query=dense_list(vector),
            using=DENSE,
            filter=tenant_filter(scope.tenant, scope.filter),
            params=self._dense_params(),
            limit=candidates,
        )

    def _sparse_leg(self, query: SparseVec, scope: SearchScope, candidates: int) -> models.Prefetch:
        return models.Prefetch(
            query=sparse_model(query),
            using=SPARSE,
            filter=tenant_filter(scope.tenant, scope.filter),
            params=idf_params(scope.tenant, scope.fields),
            limit=candidates,
        )

    def _fused(
        self, legs: list[Any], scope: SearchScope, *, k: int, weights: list[float] | None
    ) -> list[ScoredRecord]:
        return self._query(
            scope,
            prefetch=legs,
            query=models.RrfQuery(rrf=models.Rrf(k=k, weights=weights)),
            limit=scope.limit,
        )

    # -- maintenance --------------------------------------------------------------------
    def needs_index(self, changed: int) -> bool:
        """Never: a server's optimizers index new points by themselves."""
        return False

    def close(self) -> None:
        """Forget what was cached (the client stays open: see
        :class:`~tansaku.store.qdrant.layout.CollectionHandle`)."""
        with self._lock:
            self._cache.clear()

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

import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, TypeVar

import numpy as np

from tansaku.errors import StorageError
from tansaku.records import Record
from tansaku.store.base import Filter, ScoredRecord, StoredInfo, StoredPoint
from tansaku.store.ids import point_id
from tansaku.store.protocols import Lengths
from tansaku.store.qdrant import layout
from tansaku.store.qdrant.filters import filter_payload, idf_params, tenant_filter
from tansaku.store.qdrant.settings import QdrantSettings, import_qdrant_client
from tansaku.store.sparse import SparseVec

import_qdrant_client()  # MissingExtra naming `tansaku[qdrant]` before the import below fails

from qdrant_client import QdrantClient, models  # noqa: E402

DENSE = "dense"
SPARSE = "bm25"
BATCH = 256  # points per upsert request
PAGE = 1000  # points per scroll page
EXACT_BELOW = 20_000  # exact dense search below this many points, as the embedded store
HNSW_EF = 256
_CANDIDATE_KEYS = ["tenant", "rid", "doc_id", "field", "meta.source_type"]
T = TypeVar("T")


def to_record(payload: Mapping[str, Any]) -> Record:
    return Record(
        id=payload["rid"],
        doc_id=payload["doc_id"],
        field=payload.get("field", ""),
        text=payload.get("text", ""),
        metadata=payload.get("meta") or {},
    )


def sparse_model(vec: SparseVec) -> models.SparseVector:
    return models.SparseVector(indices=list(vec.indices), values=list(vec.values))


def _stored_point(p: models.Record) -> StoredPoint:
    payload = p.payload or {}
    vectors = p.vector if isinstance(p.vector, dict) else {}
    sparse = vectors.get(SPARSE)
    dense = vectors.get(DENSE)
    return StoredPoint(
        to_record(payload),
        SparseVec(tuple(sparse.indices), tuple(sparse.values))
        if isinstance(sparse, models.SparseVector)
        else SparseVec((), ()),
        np.asarray(dense, dtype=np.float32) if isinstance(dense, list) else None,
        str(payload.get("hash", "")),
        int(payload.get("bm25_len", 0) or 0),
    )


class QdrantRecordStore:
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
        self.client = client
        self.name = name
        self.collection = settings.collection_name(name)
        self.dim = dim
        self.settings = settings
        self.read_only = read_only
        self._cache_s = cache_s
        self._cache: dict[Any, tuple[float, Any]] = {}
        self._lock = threading.RLock()
        info, self.created = layout.open_collection(
            client,
            self.collection,
            settings,
            vectors={
                DENSE: models.VectorParams(
                    size=dim, distance=models.Distance.COSINE, on_disk=settings.on_disk or None
                )
            },
            sparse={
                SPARSE: models.SparseVectorParams(
                    modifier=models.Modifier.IDF,
                    index=models.SparseIndexParams(on_disk=settings.on_disk),
                )
            },
            read_only=read_only,
        )
        self._exists = info is not None
        if info is not None:
            vectors = info.config.params.vectors
            params = vectors.get(DENSE) if isinstance(vectors, dict) else None
            if params is None or params.size != dim:
                size = params.size if params is not None else "なし"
                raise StorageError(
                    f"Qdrant のコレクション {self.collection} の埋め込み次元({size})が"
                    f"このコレクションの設定({dim})と合いません"
                )

    # -- cache --------------------------------------------------------------------------
    def _cached(self, key: Any, compute: Callable[[], T]) -> T:
        now = time.monotonic()
        with self._lock:
            hit = self._cache.get(key)
            if hit is not None and hit[0] > now:
                return hit[1]  # type: ignore[no-any-return]
        value = compute()
        if self._cache_s > 0:
            with self._lock:
                if len(self._cache) >= 1024:
                    self._cache.clear()
                self._cache[key] = (now + self._cache_s, value)
        return value

    def _written(self) -> None:
        with self._lock:
            self._cache.clear()
            self._exists = True

    def _writable(self) -> None:
        if self.read_only:
            raise StorageError(f"{self.collection} は読み取り専用で開かれています")

    # -- writes -------------------------------------------------------------------------
    def upsert(self, tenant: str, points: Sequence[StoredPoint]) -> None:
        self._writable()
        structs = []
        for p in points:
            rec = p.record
            payload = {
                **filter_payload(tenant, rec),
                "text": rec.text,
                "hash": p.content_hash,
                "bm25_len": p.bm25_len,
            }
            vector: dict[str, Any] = {SPARSE: sparse_model(p.sparse)}
            if p.dense is not None:
                vector[DENSE] = np.asarray(p.dense, dtype=np.float32).tolist()
            structs.append(
                models.PointStruct(id=point_id(tenant, rec.id), vector=vector, payload=payload)
            )
        for i in range(0, len(structs), BATCH):
            self.client.upsert(self.collection, points=structs[i : i + BATCH], wait=True)
        if structs:
            self._written()

    def delete(self, tenant: str, ids: Sequence[str]) -> None:
        self._writable()
        if not ids:
            return
        pids: list[Any] = [point_id(tenant, i) for i in ids]
        self.client.delete(self.collection, models.PointIdsList(points=pids), wait=True)
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
        stored = {r.id for r in self.get(tenant, list(vectors))}
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
        if not self._exists:
            return 0
        flt = tenant_filter(tenant, filter)
        return self._cached(
            ("count", tenant, repr(filter)),
            lambda: self.client.count(self.collection, count_filter=flt, exact=True).count,
        )

    def total(self) -> int:
        if not self._exists:
            return 0
        return self._cached(("total",), lambda: self.client.count(self.collection).count)

    def get(self, tenant: str, ids: Sequence[str]) -> list[Record]:
        if not ids or not self._exists:
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

    def _scroll(
        self, flt: models.Filter | None, keys: Sequence[str] | bool, *, vectors: bool = False
    ) -> Iterator[list[models.Record]]:
        """Pages of the points matching ``flt`` (in id order) with the payload ``keys``."""
        if not self._exists:
            return
        selector: Any = (
            keys if isinstance(keys, bool) else models.PayloadSelectorInclude(include=list(keys))
        )
        offset: Any = None
        while True:
            points, offset = self.client.scroll(
                self.collection,
                scroll_filter=flt,
                limit=PAGE,
                offset=offset,
                with_payload=selector,
                with_vectors=vectors,
            )
            if points:
                yield points
            if offset is None or not points:
                return

    def _payloads(
        self, tenant: str, filter: Filter | None, keys: Sequence[str]
    ) -> list[dict[str, Any]]:
        flt = tenant_filter(tenant, filter)
        return [
            p.payload
            for page in self._scroll(flt, ["tenant", *keys])
            for p in page
            if p.payload and p.payload.get("tenant") == tenant
        ]

    def scan(
        self,
        tenant: str,
        filter: Filter | None = None,
        *,
        with_text: bool = False,
        with_meta: bool = False,
    ) -> list[StoredInfo]:
        keys = ["rid", "doc_id", "field", "hash", "bm25_len"]
        keys += ["text"] if with_text else []
        keys += ["meta"] if with_meta else []
        return [
            StoredInfo(to_record(p), str(p.get("hash", "")), int(p.get("bm25_len", 0) or 0))
            for p in self._payloads(tenant, filter, keys)
        ]

    def hashes(self, tenant: str, filter: Filter | None = None) -> dict[str, str]:
        return {
            p["rid"]: p.get("hash", "") for p in self._payloads(tenant, filter, ["rid", "hash"])
        }

    def lengths(self) -> Lengths:
        out: dict[str, dict[str, list[int]]] = {}
        for page in self._scroll(None, ["tenant", "field", "bm25_len"]):
            for p in page:
                payload = p.payload or {}
                acc = out.setdefault(str(payload.get("tenant", "")), {}).setdefault(
                    str(payload.get("field", "")), [0, 0]
                )
                acc[0] += int(payload.get("bm25_len", 0) or 0)
                acc[1] += 1
        return {t: {f: (v[0], v[1]) for f, v in fields.items()} for t, fields in out.items()}

    def metadata_sample(
        self, tenant: str, keys: Sequence[str] = (), *, limit: int = 32
    ) -> dict[str, list[Any]]:
        """Stored values of metadata ``keys`` from up to ``limit`` of the tenant's records that
        have each key (a key no record has is left out); no ``keys``: every key and value of
        ``limit`` records. Cached like :meth:`count`."""
        sample = self._cached(
            ("sample", tenant, tuple(keys), limit), lambda: self._sample(tenant, keys, limit)
        )
        return {k: list(v) for k, v in sample.items()}

    def _sample(self, tenant: str, keys: Sequence[str], limit: int) -> dict[str, list[Any]]:
        out: dict[str, list[Any]] = {}
        if not self._exists:
            return out
        base = tenant_filter(tenant)
        if not keys:
            points, _ = self.client.scroll(
                self.collection, scroll_filter=base, limit=limit, with_payload=["tenant", "meta"]
            )
            for p in points:
                if (p.payload or {}).get("tenant") == tenant:
                    for key, value in ((p.payload or {}).get("meta") or {}).items():
                        out.setdefault(key, []).append(value)
            return out
        for key in keys:
            path = f"meta.{key}"
            flt = models.Filter(
                must=base.must,
                must_not=[models.IsEmptyCondition(is_empty=models.PayloadField(key=path))],
            )
            points, _ = self.client.scroll(
                self.collection, scroll_filter=flt, limit=limit, with_payload=["tenant", path]
            )
            values = [
                ((p.payload or {}).get("meta") or {}).get(key)
                for p in points
                if (p.payload or {}).get("tenant") == tenant
            ]
            if values:
                out[key] = values
        return out

    def dump(self, *, batch: int = BATCH) -> Iterator[tuple[str, list[StoredPoint]]]:
        """Every record of every team with its stored vectors, hash and BM25 length, as
        (team, up to ``batch`` points): what ``tansaku export`` writes and ``import``
        upserts unchanged (the dense vectors as stored: normalised by the cosine space)."""
        if batch < 1:
            raise ValueError(f"batch は 1 以上にしてください: {batch}")
        for tenant in self._tenants():
            points: list[StoredPoint] = []
            for page in self._scroll(tenant_filter(tenant), True, vectors=True):
                for p in page:
                    if (p.payload or {}).get("tenant") != tenant:
                        continue
                    points.append(_stored_point(p))
                    if len(points) >= batch:
                        yield tenant, points
                        points = []
            if points:
                yield tenant, points

    def _tenants(self) -> list[str]:
        """Every team with records (the tenant index's counts)."""
        if not self._exists:
            return []
        hits = self.client.facet(self.collection, "tenant", limit=1_000_000, exact=True).hits
        return sorted(str(h.value) for h in hits if h.count > 0)

    # -- searches -----------------------------------------------------------------------
    def _hits(self, tenant: str, points: Sequence[models.ScoredPoint]) -> list[ScoredRecord]:
        out = []
        for p in points:
            payload = p.payload
            if payload and payload.get("tenant") == tenant:
                out.append(ScoredRecord(to_record(payload), float(p.score)))
        return out

    def _dense_params(self) -> models.SearchParams | None:
        if self.settings.is_local:  # local mode is always exact (and warns about params)
            return None
        if self.total() < EXACT_BELOW:
            return models.SearchParams(exact=True)
        return models.SearchParams(hnsw_ef=HNSW_EF)

    def _query(self, tenant: str, with_text: bool, **request: Any) -> list[ScoredRecord]:
        if not self._exists:
            return []
        payload: Any = True if with_text else _CANDIDATE_KEYS
        found = self.client.query_points(self.collection, with_payload=payload, **request)
        return self._hits(tenant, found.points)

    def search_sparse(
        self,
        tenant: str,
        query: SparseVec,
        *,
        filter: Filter | None = None,
        limit: int = 10,
        with_text: bool = True,
    ) -> list[ScoredRecord]:
        if not len(query):
            return []
        hits = self._query(
            tenant,
            with_text,
            query=sparse_model(query),
            using=SPARSE,
            query_filter=tenant_filter(tenant, filter),
            search_params=idf_params(tenant, filter.fields if filter is not None else ()),
            limit=limit,
        )
        return [h for h in hits if h.score > 0]

    def search_dense(
        self,
        tenant: str,
        vector: np.ndarray,
        *,
        filter: Filter | None = None,
        limit: int = 10,
        with_text: bool = True,
    ) -> list[ScoredRecord]:
        return self._query(
            tenant,
            with_text,
            query=np.asarray(vector, dtype=np.float32).tolist(),
            using=DENSE,
            query_filter=tenant_filter(tenant, filter),
            search_params=self._dense_params(),
            limit=limit,
        )

    def search_hybrid(
        self,
        tenant: str,
        *,
        sparse: SparseVec,
        dense: np.ndarray,
        filter: Filter | None = None,
        limit: int = 10,
        k: int = 60,
        weights: Sequence[float] | None = None,
        candidates: int = 100,
    ) -> list[ScoredRecord]:
        """One request: a dense and a sparse prefetch fused by the engine's RRF with ``k``
        pinned (0-based ranks: 1/(k + rank) per leg; ``weights`` in the order dense, sparse)."""
        flt = tenant_filter(tenant, filter)
        prefetch = [
            models.Prefetch(
                query=np.asarray(dense, dtype=np.float32).tolist(),
                using=DENSE,
                filter=flt,
                params=self._dense_params(),
                limit=candidates,
            )
        ]
        if len(sparse):
            fields = filter.fields if filter is not None else ()
            prefetch.append(
                models.Prefetch(
                    query=sparse_model(sparse),
                    using=SPARSE,
                    filter=flt,
                    params=idf_params(tenant, fields),
                    limit=candidates,
                )
            )
        w = list(weights)[: len(prefetch)] if weights is not None else None
        return self._query(
            tenant,
            True,
            prefetch=prefetch,
            query=models.RrfQuery(rrf=models.Rrf(k=k, weights=w)),
            limit=limit,
        )

    # -- maintenance --------------------------------------------------------------------
    def needs_index(self, changed: int) -> bool:
        """Never: a server's optimizers index new points by themselves."""
        return False

    def optimize(self) -> None:
        """Nothing to merge by hand on a server: wait until its optimizers are done (green)."""
        if self._exists and not self.settings.is_local:
            layout.wait_until_green(self.client, self.collection)

    def flush(self) -> None:
        """Writes are acknowledged once applied (``wait=True``); the server persists them."""

    def close(self) -> None:
        """The client is the caller's (shared by a collection's stores): left open."""
        with self._lock:
            self._cache.clear()

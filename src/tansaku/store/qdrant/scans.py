"""Reading every record of a Qdrant records collection: scans, hashes, BM25 lengths, metadata
samples and the dump an export writes — the part of
:class:`~tansaku.store.qdrant.records.QdrantRecordStore` that pages through points rather than
searching them. Every page is filtered by the team and every point's team checked again.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Sequence
from typing import Any, TypeVar

from tansaku.store.base import Filter, StoredPoint, record_of, stored_point
from tansaku.store.protocols import Lengths
from tansaku.store.qdrant.filters import tenant_filter
from tansaku.store.qdrant.layout import CollectionHandle
from tansaku.store.qdrant.settings import import_qdrant_client
from tansaku.store.record_base import DENSE, SPARSE, RecordStoreBase, lengths_of

import_qdrant_client()  # MissingExtra naming `tansaku[qdrant]` before the import below fails

from qdrant_client import models  # noqa: E402

BATCH = 256  # points per write request and per dump batch
PAGE = 1000  # points per scroll page
T = TypeVar("T")


to_record = record_of  # the name records.py reads it by


def _stored_point(p: models.Record) -> StoredPoint:
    vectors = p.vector if isinstance(p.vector, dict) else {}
    sparse = vectors.get(SPARSE)
    dense = vectors.get(DENSE)
    return stored_point(
        p.payload or {},
        sparse if isinstance(sparse, models.SparseVector) else None,
        dense if isinstance(dense, list) else None,
    )


class RecordScans(CollectionHandle, RecordStoreBase):
    """Paging reads of a records collection, with a short-lived cache (see ``records.py``)."""

    _cache_s: float
    _cache: dict[Any, tuple[float, Any]]

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

    def _scroll(
        self, flt: models.Filter | None, keys: Sequence[str] | bool, *, vectors: bool = False
    ) -> Iterator[list[models.Record]]:
        """Pages of the points matching ``flt`` (in id order) with the payload ``keys``."""
        if not self._present():
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

    def lengths(self) -> Lengths:
        pages = self._scroll(None, ["tenant", "field", "bm25_len"])
        return lengths_of(p.payload or {} for page in pages for p in page)

    def _cached_sample(self, tenant: str, keys: Sequence[str], limit: int) -> dict[str, list[Any]]:
        """Cached like :meth:`count`."""
        return self._cached(
            ("sample", tenant, tuple(keys), limit), lambda: self._sample(tenant, keys, limit)
        )

    def _sample(self, tenant: str, keys: Sequence[str], limit: int) -> dict[str, list[Any]]:
        out: dict[str, list[Any]] = {}
        if not self._present():
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
        if not self._present():
            return []
        hits = self.client.facet(self.collection, "tenant", limit=100_000, exact=True).hits
        return sorted(str(h.value) for h in hits if h.count > 0)

"""Sentence units for the ``bigram`` axis: a second qdrant-edge shard beside the records.

Every record is cut into units (title + one sentence, ``tansaku.text.ngram``); each unit is a
point with a sparse ``bigram`` vector (BM25 term-frequency part of its character bigrams; the
engine applies the IDF, computed over the tenant's units only) and the filterable payload of
its record (tenant, record id, document id, field, metadata, date). A search returns each
matching record once, scored by its best unit.

Units live in their own shard (``<collection>/units``) so they never enter the record shard's
counts, scans or IDF statistics. Unit point ids are UUIDv5 of (tenant, record id, unit number);
a record's units are replaced as a whole (delete by record id, then upsert).
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import qdrant_edge as qe

from tansaku.records import Record
from tansaku.store.base import Filter, ScoredRecord, payload_metadata
from tansaku.store.edge import _conditions, _date_int
from tansaku.store.sparse import doc_vector, query_vector
from tansaku.text.ngram import bigrams, unit_texts

_NS = uuid.UUID("0b6a4f7e-2d51-4c8e-9a3f-5e7d1c2b8a64")
SPARSE = "bigram"
K1 = 0.9
B = 0.4
AVG_UNIT_BIGRAMS = 60.0  # a title plus one Japanese sentence; units are sentences everywhere
FETCH_FACTOR = 2  # units fetched per wanted record (a record can own several matching units)
_INDEXED_KEYWORDS = ("rid", "doc_id", "field", "meta.source_type", "meta.store")
BATCH = 512


def unit_point_id(tenant: str, rid: str, n: int) -> str:
    return str(uuid.uuid5(_NS, f"{tenant}\x00{rid}\x00{n}"))


class UnitStore:
    """The unit shard of one collection."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._lock = threading.RLock()
        if (self.path / "edge_config.json").exists() or (self.path / "segments").exists():
            self._shard = qe.EdgeShard.load(str(self.path))
        else:
            self.path.mkdir(parents=True, exist_ok=True)
            cfg = qe.EdgeConfig(
                vectors={},
                sparse_vectors={SPARSE: qe.EdgeSparseVectorParams(modifier=qe.Modifier.Idf)},
            )
            self._shard = qe.EdgeShard.create(str(self.path), cfg)
            self._shard.update(
                qe.UpdateOperation.create_field_index(
                    "tenant", qe.KeywordIndexParams(is_tenant=True)
                )
            )
            for key in _INDEXED_KEYWORDS:
                self._shard.update(
                    qe.UpdateOperation.create_field_index(key, qe.PayloadSchemaType.Keyword)
                )
            self._shard.update(
                qe.UpdateOperation.create_field_index("date_int", qe.PayloadSchemaType.Integer)
            )

    # -- writes -------------------------------------------------------------------------
    def replace(self, tenant: str, records: Sequence[Record]) -> int:
        """(Re)write the units of ``records``: old units of the same ids go first. Returns the
        number of units written."""
        if not records:
            return 0
        self.delete(tenant, [r.id for r in records])
        points: list[Any] = []
        for rec in records:
            meta = payload_metadata(rec.metadata)
            base: dict[str, Any] = {
                "tenant": tenant,
                "rid": rec.id,
                "doc_id": rec.doc_id,
                "field": rec.field,
                "meta": meta,
            }
            d = _date_int(meta.get("date"))
            if d is not None:
                base["date_int"] = d
            for n, text in enumerate(unit_texts(rec.text, rec.metadata)):
                vec = doc_vector(bigrams(text), k1=K1, b=B, avgdl=AVG_UNIT_BIGRAMS)
                if not len(vec):
                    continue
                points.append(
                    qe.Point(
                        unit_point_id(tenant, rec.id, n),
                        {SPARSE: qe.SparseVector(list(vec.indices), list(vec.values))},
                        {**base, "unit": n},
                    )
                )
        with self._lock:
            for i in range(0, len(points), BATCH):
                self._shard.update(qe.UpdateOperation.upsert_points(points[i : i + BATCH]))
        return len(points)

    def delete(self, tenant: str, rids: Sequence[str]) -> None:
        """Remove every unit of the given records."""
        if not rids:
            return
        with self._lock:
            for i in range(0, len(rids), BATCH):
                flt = qe.Filter(
                    must=[
                        qe.FieldCondition("tenant", match=qe.MatchValue(tenant)),
                        qe.FieldCondition("rid", match=qe.MatchAny(list(rids[i : i + BATCH]))),
                    ]
                )
                self._shard.update(qe.UpdateOperation.delete_points_by_filter(flt))

    # -- reads --------------------------------------------------------------------------
    def count(self, tenant: str, filter: Filter | None = None) -> int:
        with self._lock:
            return int(
                self._shard.count(
                    qe.CountRequest(filter=qe.Filter(must=_conditions(tenant, filter)), exact=True)
                )
            )

    def search(
        self, tenant: str, text: str, *, filter: Filter | None = None, limit: int = 10
    ) -> list[ScoredRecord]:
        """Records whose best unit matches the bigrams of ``text``, best first, at most
        ``limit`` (fewer when the best ``limit × FETCH_FACTOR`` units share records).

        The records carry their id and document only — no field, metadata or text: reading
        payloads is most of the cost of this search (~4 µs a unit), so the caller reads the
        records it keeps from the record store."""
        query = query_vector(bigrams(text))
        if not len(query) or limit <= 0:
            return []
        corpus: list[Any] = [qe.FieldCondition("tenant", match=qe.MatchValue(tenant))]
        if filter is not None and filter.fields:
            corpus.append(qe.FieldCondition("field", match=qe.MatchAny(list(filter.fields))))
        req = qe.QueryRequest(
            limit=limit * FETCH_FACTOR,
            query=qe.Query.Nearest(
                qe.SparseVector(list(query.indices), list(query.values)), using=SPARSE
            ),
            filter=qe.Filter(must=_conditions(tenant, filter)),
            with_payload=qe.PayloadSelector.Include(["rid", "doc_id"]),
            params=qe.SearchParams(idf=qe.IdfParams(corpus=qe.Filter(must=corpus))),
        )
        with self._lock:
            points = self._shard.query(req)
        best: dict[str, ScoredRecord] = {}
        for p in points:
            score = float(p.score)
            payload = p.payload or {}
            rid = payload.get("rid")
            if score <= 0 or not rid or rid in best:
                continue  # points come best first: the first unit of a record is its best
            best[rid] = ScoredRecord(
                Record(id=rid, doc_id=payload["doc_id"], field="", text=""), score
            )
            if len(best) >= limit:
                break
        return list(best.values())

    def optimize(self) -> None:
        with self._lock:
            self._shard.optimize()

    def flush(self) -> None:
        with self._lock:
            self._shard.flush()

    def close(self) -> None:
        with self._lock:
            if self._shard is not None:
                self._shard.flush()
                self._shard.close()
                self._shard = None  # type: ignore[assignment]

"""The sentence units of ``bigram`` axes in a Qdrant collection (``{prefix}{name}__units``):
the :class:`~tansaku.store.protocols.UnitIndex` of the server backend.

Units are cut and encoded as the embedded index does (``tansaku.store.units``: the same unit
texts, the same BM25 term-frequency part of their character bigrams, the same point ids), and a
search returns each record once, scored by its best unit.

**IDF: the engine's, no table.** The sparse ``bigram`` vector has ``Modifier.IDF``, and every
search scopes it to the team's units of the filter's fields (``IdfCorpusParams``): the engine
computes ln(1 + (N − df + .5)/(df + .5)) over exactly the units the embedded index counts in
``df.sqlite``, so the scores are the same (checked by ``tests/store/test_qdrant_congruence``).
The embedded index keeps its own table because qdrant-edge's filtered IDF costs 5-10 ms a query
at 300k units; on a server that cost is the server's, while a table of document frequencies kept
beside the units (payload-only points, one per team, field and bigram: millions of them) would
have to be read-modified-written by every writer of a shared server and could drift from the
units it counts. Without a table nothing can drift, so :meth:`QdrantUnitIndex.recount` has
nothing to rebuild.

- :meth:`~QdrantUnitIndex.idf_weights` asks the engine for the number it multiplies by: per
  term, one sparse query (all terms in one batch request) for the best unit containing it;
  that unit's score divided by its stored value of the term is the term's IDF over the corpus.
  Cost: one batch request of ``len(terms)`` searches. No search asks (the engine applies the
  IDF itself); tests and tools that compare backends do. In local mode each of those searches
  scans every unit in Python (~5 s for 30 terms at 6k units on a loaded 2-core machine).
- :meth:`~QdrantUnitIndex.unit_counts`: ``from_shard=False`` reads the tenant index's counts
  (facets of ``tenant``, then of ``field`` per team); ``from_shard=True`` scrolls every unit.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from tansaku.records import Record
from tansaku.store.base import Filter, ScoredRecord
from tansaku.store.qdrant import layout
from tansaku.store.qdrant.filters import corpus_filter, idf_params, records_of, tenant_filter
from tansaku.store.qdrant.records import sparse_model
from tansaku.store.qdrant.settings import QdrantSettings, import_qdrant_client
from tansaku.store.record_base import SearchScope
from tansaku.store.sparse import term_id
from tansaku.store.unit_base import BATCH, SPARSE, UnitSearch, record_units

import_qdrant_client()  # MissingExtra naming `tansaku[qdrant]` before the import below fails

from qdrant_client import QdrantClient, models  # noqa: E402

SUFFIX = "__units"
PAGE = 1000
_FACETS = 100_000  # more teams or fields than any collection has


class QdrantUnitIndex(layout.CollectionHandle, UnitSearch):
    """The sentence units of one collection in a Qdrant collection."""

    def __init__(
        self,
        client: QdrantClient,
        name: str,
        *,
        settings: QdrantSettings,
        read_only: bool = False,
    ) -> None:
        self._open(
            client,
            name,
            settings.collection_name(name, SUFFIX),
            settings,
            read_only=read_only,
            vectors={},
            sparse={SPARSE: layout.idf_sparse(settings)},
        )

    # -- writes -------------------------------------------------------------------------
    def replace(self, tenant: str, records: Sequence[Record]) -> int:
        """(Re)write the units of ``records``: old units of the same ids go first. Returns the
        number of units written."""
        self._writable()
        if not records:
            return 0
        points = [
            models.PointStruct(id=uid, vector={SPARSE: sparse_model(vec)}, payload=payload)
            for rec in records
            for uid, vec, payload in record_units(tenant, rec)
        ]
        with self._lock:
            self.delete(tenant, [r.id for r in records])
            for i in range(0, len(points), BATCH):
                self.client.upsert(self.collection, points=points[i : i + BATCH], wait=True)
        return len(points)

    def delete(self, tenant: str, rids: Sequence[str]) -> None:
        """Remove every unit of the given records."""
        self._writable()
        for i in range(0, len(rids), BATCH):
            selector = models.FilterSelector(filter=records_of(tenant, rids[i : i + BATCH]))
            self.client.delete(self.collection, selector, wait=True)

    def delete_tenant(self, tenant: str) -> None:
        """Remove every unit of the team (its counts are the units': nothing else to drop)."""
        self._writable()
        selector = models.FilterSelector(filter=tenant_filter(tenant))
        self.client.delete(self.collection, selector, wait=True)

    # -- reads --------------------------------------------------------------------------
    def count(self, tenant: str, filter: Filter | None = None) -> int:
        if not self._present():
            return 0
        flt = tenant_filter(tenant, filter)
        return self.client.count(self.collection, count_filter=flt, exact=True).count

    def idf_weights(
        self, tenant: str, terms: Iterable[int], fields: Sequence[str] = ()
    ) -> dict[int, float]:
        """The engine's IDF of each term over the tenant's units (of ``fields``; empty: all);
        terms no unit contains are left out (see the module docstring for how it is read)."""
        wanted = sorted(set(terms))
        if not wanted or not self._present():
            return {}
        corpus = corpus_filter(tenant, fields)
        params = idf_params(tenant, fields)
        requests = [
            models.QueryRequest(
                query=models.SparseVector(indices=[t], values=[1.0]),
                using=SPARSE,
                filter=corpus,
                params=params,
                limit=1,
                with_payload=["tenant"],
                with_vector=[SPARSE],
            )
            for t in wanted
        ]
        out: dict[int, float] = {}
        for term, found in zip(
            wanted, self.client.query_batch_points(self.collection, requests), strict=True
        ):
            for p in found.points:
                vec = (p.vector or {}).get(SPARSE) if isinstance(p.vector, dict) else None
                if not isinstance(vec, models.SparseVector) or term not in vec.indices:
                    continue
                value = vec.values[vec.indices.index(term)]
                if p.score > 0 and value > 0 and (p.payload or {}).get("tenant") == tenant:
                    out[term] = float(p.score) / float(value)
        return out

    def _unit_hits(
        self, grams: list[str], scale: Mapping[int, float], scope: SearchScope
    ) -> list[ScoredRecord]:
        """The engine's BM25 of the units (its IDF over the team's units of the filter's
        fields); the records carry their id and document only, as the embedded index's do."""
        terms = sorted({term_id(b) for b in grams})
        if not terms or not self._present():
            return []
        found = self.client.query_points(
            self.collection,
            query=models.SparseVector(indices=terms, values=[scale.get(t, 1.0) for t in terms]),
            using=SPARSE,
            query_filter=tenant_filter(scope.tenant, scope.filter),
            search_params=idf_params(scope.tenant, scope.fields),
            limit=scope.limit,
            with_payload=["tenant", "rid", "doc_id"],
        )
        return [
            ScoredRecord(
                Record(str(payload.get("rid", "")), str(payload.get("doc_id", "")), "", ""), p.score
            )
            for p in found.points
            if (payload := p.payload or {}).get("tenant") == scope.tenant
        ]

    def unit_counts(self, *, from_shard: bool) -> dict[tuple[str, str], int]:
        """Units per (team, field): from the tenant index's counts, or counted unit by unit."""
        if not self._present():
            return {}
        if not from_shard:
            out: dict[tuple[str, str], int] = {}
            for team in self._facet("tenant", None):
                for field, n in self._facet("field", tenant_filter(str(team))).items():
                    out[(str(team), str(field))] = n
            return out
        counts: Counter[tuple[str, str]] = Counter()
        offset: Any = None
        while True:
            points, offset = self.client.scroll(
                self.collection, limit=PAGE, offset=offset, with_payload=["tenant", "field"]
            )
            for p in points:
                payload = p.payload or {}
                counts[(str(payload.get("tenant", "")), str(payload.get("field", "")))] += 1
            if offset is None or not points:
                return dict(counts)

    def _facet(self, key: str, flt: models.Filter | None) -> dict[Any, int]:
        hits = self.client.facet(
            self.collection, key, facet_filter=flt, limit=_FACETS, exact=True
        ).hits
        return {h.value: h.count for h in hits if h.count > 0}

    def recount(self) -> None:
        """Nothing to rebuild: the engine counts the units themselves at every search."""

"""What the unit indexes of both engines share above their engine — the embedded
:class:`~tansaku.store.units.UnitStore` and the server's
:class:`~tansaku.store.qdrant.units.QdrantUnitIndex`: how a record is cut into units and each
unit encoded (:func:`record_units`: the same texts, vectors, point ids and payloads on either
engine), and the search every engine answers alike — the bigrams of the question, the best
``limit × FETCH_FACTOR`` units, each record once by its best unit (:class:`UnitSearch`).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterator, Mapping
from typing import Any, Unpack

from tansaku.records import Record
from tansaku.store.base import ScoredRecord
from tansaku.store.ids import unit_point_id
from tansaku.store.protocols import UnitSearchOptions
from tansaku.store.record_base import DEFAULT_LIMIT, SearchScope
from tansaku.store.shard import filter_payload
from tansaku.store.sparse import SparseVec, bigram_scale, doc_vector
from tansaku.text.ngram import bigrams, unit_texts

SPARSE = "bigram"
K1 = 0.9
B = 0.4
AVG_UNIT_BIGRAMS = 60.0  # a title plus one Japanese sentence; units are sentences everywhere
FETCH_FACTOR = 2  # units fetched per wanted record (a record can own several matching units)
BATCH = 512


def record_units(tenant: str, rec: Record) -> Iterator[tuple[int, SparseVec, dict[str, Any]]]:
    """(point id, sparse ``bigram`` vector, payload) of each unit of the record that has a
    bigram: the BM25 term-frequency part of its character bigrams, and the record's filterable
    payload with the unit's number."""
    base = filter_payload(tenant, rec)
    for n, text in enumerate(unit_texts(rec.text, rec.metadata)):
        vec = doc_vector(bigrams(text), k1=K1, b=B, avgdl=AVG_UNIT_BIGRAMS)
        if len(vec):
            yield unit_point_id(tenant, rec.id, n), vec, {**base, "unit": n}


class UnitSearch(ABC):
    """The :meth:`~tansaku.store.protocols.UnitIndex.search` of a unit index; the engine
    answers :meth:`_unit_hits`."""

    @abstractmethod
    def _unit_hits(
        self, grams: list[str], scale: Mapping[int, float], scope: SearchScope
    ) -> list[ScoredRecord]:
        """The tenant's best units for the bigrams ``grams`` (``scale``: term id -> weight of
        its part of the score, 1 when not listed), at most ``scope.limit``, best first, each as
        its record with id and document only."""

    def search(
        self,
        tenant: str,
        text: str,
        **options: Unpack[UnitSearchOptions],
    ) -> list[ScoredRecord]:
        """Records whose best unit matches the bigrams of ``text``, best first, at most
        ``limit`` (fewer when the best ``limit × FETCH_FACTOR`` units share records).

        The records carry their id and document only — no field, metadata or text: reading
        payloads is most of the cost of this search (~4 µs a unit), so the caller reads the
        records it keeps from the record store."""
        limit = options.get("limit", DEFAULT_LIMIT)
        if limit <= 0:
            return []
        grams = bigrams(text)
        scope = SearchScope(tenant, options.get("filter"), limit * FETCH_FACTOR, with_text=False)
        best: dict[str, ScoredRecord] = {}
        for h in self._unit_hits(grams, bigram_scale(grams, options.get("weights")), scope):
            rid = h.record.id
            if h.score <= 0 or not rid or rid in best:
                continue  # units come best first: the first unit of a record is its best
            best[rid] = h
            if len(best) >= limit:
                break
        return list(best.values())

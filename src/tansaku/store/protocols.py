"""The storage seam: what every caller of a backend may use, as typed protocols.

A backend implements, per collection, a :class:`RecordStore` (the records: BM25 sparse and dense
vectors, payloads) and a :class:`UnitIndex` (the sentence units of ``bigram`` axes, with their
own IDF statistics), and hands them out through a :class:`CollectionStorage` — the embedded
default as the shards of one generation folder (``tansaku.backends.embedded.handles``), a Qdrant
server as its collections. Nothing outside ``tansaku.store`` names an engine class. Every method
takes the tenant (team) and adds its condition inside the store, so no caller can forget it.

The protocols are split by what a caller does (read, search, write, maintain) so that each stays
small; :class:`RecordStore` is all of them. ``tansaku.testing.store_contract`` checks every
method against every backend.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager
from typing import Any, Protocol, TypedDict, Unpack, runtime_checkable

import numpy as np

from tansaku.records import Record
from tansaku.store.base import Filter, ScoredRecord, StoredInfo, StoredPoint
from tansaku.store.sparse import SparseVec

Lengths = dict[str, dict[str, tuple[int, int]]]  # team -> field -> (sum of bm25_len, records)


@runtime_checkable
class RecordReader(Protocol):
    def count(self, tenant: str, filter: Filter | None = None) -> int:
        """Exact number of the tenant's records matching ``filter``."""
        ...

    def total(self) -> int:
        """Records of every tenant."""
        ...

    def get(self, tenant: str, ids: Sequence[str]) -> list[Record]:
        """The tenant's records by id, in request order; unknown ids are left out."""
        ...

    def term_ids(self, tenant: str, rid: str) -> frozenset[int]:
        """The BM25 term ids a record was indexed with (``sparse.term_id``); empty when the
        tenant has no such record."""
        ...

    def hashes(self, tenant: str, filter: Filter | None = None) -> dict[str, str]:
        """Record id -> content hash of every stored record matching the filter."""
        ...

    def scan(
        self,
        tenant: str,
        filter: Filter | None = None,
        *,
        with_text: bool = False,
        with_meta: bool = False,
    ) -> list[StoredInfo]:
        """Every record of the tenant matching ``filter``, with its content hash and BM25
        length; the text and the metadata only when asked (reading them costs)."""
        ...

    def lengths(self) -> Lengths:
        """(sum of ``bm25_len``, records) per team and field, read from every record: what the
        collection's BM25 statistics must say (``tansaku doctor``, migration)."""
        ...

    def metadata_sample(
        self, tenant: str, keys: Sequence[str] = (), *, limit: int = 32
    ) -> dict[str, list[Any]]:
        """Stored values of metadata ``keys`` from up to ``limit`` records that have each key
        (no keys: every key of ``limit`` records); the search layer learns types from it."""
        ...

    def dump(self, *, batch: int = 256) -> Iterator[tuple[str, list[StoredPoint]]]:
        """Every record of every tenant with its stored vectors (dense, sparse), content hash and
        BM25 length, as (tenant, points) batches of at most ``batch``: what an export writes and
        an import upserts unchanged (nothing re-embedded)."""
        ...


class BaseSearchOptions(TypedDict, total=False):
    """What every search of a store asks besides its team and its query, each optional."""

    filter: Filter | None
    """Only records that pass it (default: none, every record of the team)."""
    limit: int
    """Hits at most (default 10)."""


class SearchOptions(BaseSearchOptions, total=False):
    """What a BM25 or dense search of records asks besides its team and its query, each
    optional (the defaults are :class:`~tansaku.store.record_base.SearchScope`'s)."""

    with_text: bool
    """False: candidates — id, document, field and, of the metadata, ``source_type`` only —
    of which the caller reads the few it keeps with ``get`` (default True: whole records)."""


class HybridOptions(BaseSearchOptions, total=False):
    """What a hybrid search of records asks besides its team and its two legs, each optional."""

    k: int
    """The RRF constant: a leg's hit at 0-based rank r adds 1/(k + r) (default 60)."""
    weights: Sequence[float] | None
    """One weight per leg in the order dense, sparse (default: none, the legs weigh alike)."""
    candidates: int
    """Hits each leg prefetches before the fusion (default 100)."""


@runtime_checkable
class RecordSearch(Protocol):
    def search_sparse(
        self, tenant: str, query: SparseVec, **options: Unpack[SearchOptions]
    ) -> list[ScoredRecord]:
        """BM25 (IDF over the tenant's records of the filter's fields), best first, scores > 0."""
        ...

    def search_dense(
        self, tenant: str, vector: np.ndarray, **options: Unpack[SearchOptions]
    ) -> list[ScoredRecord]:
        """Cosine similarity, best first."""
        ...

    def search_hybrid(
        self,
        tenant: str,
        *,
        sparse: SparseVec,
        dense: np.ndarray,
        **options: Unpack[HybridOptions],
    ) -> list[ScoredRecord]:
        """Engine-side RRF of a sparse and a dense leg (0-based ranks: 1/(k + rank))."""
        ...


@runtime_checkable
class RecordWriter(Protocol):
    def upsert(self, tenant: str, points: Sequence[StoredPoint]) -> None:
        """Write records (replacing by id)."""
        ...

    def delete(self, tenant: str, ids: Sequence[str]) -> None:
        """Remove records by id (unknown ids are ignored)."""
        ...

    def delete_tenant(self, tenant: str) -> None:
        """Remove every record of the team."""
        ...

    def update_sparse(self, tenant: str, vectors: Mapping[str, SparseVec]) -> None:
        """Replace the BM25 vector of existing records (after their field's length drifted)."""
        ...


@runtime_checkable
class Maintained(Protocol):
    def optimize(self) -> None:
        """Build the indexes and merge segments (minutes per 100k points on 2 cores)."""
        ...

    def flush(self) -> None: ...

    def close(self) -> None: ...


@runtime_checkable
class RecordStore(RecordReader, RecordSearch, RecordWriter, Maintained, Protocol):
    """Everything a caller does with a collection's records."""

    def needs_index(self, changed: int) -> bool:
        """Whether a write of ``changed`` points is worth building the search index for (the
        units' index is built with it)."""
        ...


class UnitSearchOptions(BaseSearchOptions, total=False):
    """What a search of sentence units asks besides its team and its text, each optional."""

    weights: Mapping[str, float] | None
    """Bigram -> factor of its part of the score (default: none; a bigram not listed weighs 1)."""


@runtime_checkable
class UnitIndex(Maintained, Protocol):
    """The sentence units of ``bigram`` axes and their IDF statistics (units per team and
    field, units containing each bigram), which the index keeps consistent with its units."""

    def replace(self, tenant: str, records: Sequence[Record]) -> int:
        """(Re)write the units of ``records`` (old units of the same ids go first); returns
        the number of units written."""
        ...

    def delete(self, tenant: str, rids: Sequence[str]) -> None:
        """Remove every unit of the given records."""
        ...

    def delete_tenant(self, tenant: str) -> None:
        """Remove every unit of the team and its counts."""
        ...

    def count(self, tenant: str, filter: Filter | None = None) -> int:
        """Units of the tenant matching ``filter``."""
        ...

    def search(
        self,
        tenant: str,
        text: str,
        **options: Unpack[UnitSearchOptions],
    ) -> list[ScoredRecord]:
        """Records whose best unit matches the bigrams of ``text`` (id and document only)."""
        ...

    def idf_weights(
        self, tenant: str, terms: Iterable[int], fields: Sequence[str] = ()
    ) -> dict[int, float]:
        """BM25 IDF of each term over the tenant's units (of ``fields``; empty: all)."""
        ...

    def unit_counts(self, *, from_shard: bool) -> dict[tuple[str, str], int]:
        """Units per (team, field): as the statistics say, or counted from the units."""
        ...

    def recount(self) -> None:
        """Rebuild the statistics from the units themselves."""
        ...


@runtime_checkable
class CollectionStorage(Protocol):
    """The stores of one collection as a backend holds them (the embedded backend: the shards
    of one generation folder). ``writable``: a writer's, else a read-only view's."""

    writable: bool
    units_created: bool  # the last units() call created an empty index: nothing was built

    def store(self) -> RecordStore:
        """The records (created empty by a writer on first use)."""
        ...

    def units(self) -> UnitIndex:
        """The sentence units (created by a writer on first use; check
        :meth:`has_unit_index` first to read)."""
        ...

    def has_unit_index(self) -> bool:
        """Whether sentence units were ever written (without creating anything)."""
        ...

    def in_use(self) -> AbstractContextManager[None]:
        """Held for a search: the backend keeps what the block reads open until it ends (the
        embedded one closes idle shards to bound the open ones)."""
        ...

    def close(self) -> None: ...


Store = RecordStore  # the name of the records protocol before the seam was widened

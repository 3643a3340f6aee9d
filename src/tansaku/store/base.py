"""The Store protocol and the engine-neutral types it speaks.

A Store holds one collection. Every call takes the tenant (team): the tenant condition is added
inside the store, so no caller can forget it and no query can cross teams.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date
from typing import Any, Protocol, runtime_checkable

import numpy as np

from tansaku.records import Record
from tansaku.store.sparse import SparseVec


@dataclass(frozen=True, kw_only=True)
class Filter:
    """Conditions on records. Empty means "everything of the tenant".

    ``fields``: record field in this set. ``equals``: metadata key equals value.
    ``any_of``: metadata key in values. ``date_from``/``date_to``: inclusive dates on
    ``metadata.date``. ``doc_ids``: restrict to these documents.
    """

    fields: tuple[str, ...] = ()
    equals: Mapping[str, str | int | bool] = field(default_factory=dict)
    any_of: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    date_from: date | None = None
    date_to: date | None = None
    doc_ids: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.date_from and self.date_to and self.date_from > self.date_to:
            raise ValueError(
                f"date_from({self.date_from}) は date_to({self.date_to}) 以前にしてください"
            )

    def is_empty(self) -> bool:
        return not (
            self.fields
            or self.equals
            or self.any_of
            or self.date_from
            or self.date_to
            or self.doc_ids
        )


@dataclass(frozen=True)
class StoredPoint:
    """A record with its vectors, ready to upsert."""

    record: Record
    sparse: SparseVec
    dense: np.ndarray | None
    content_hash: str
    bm25_len: int = 0


@dataclass(frozen=True, slots=True)
class ScoredRecord:
    record: Record
    score: float


@runtime_checkable
class Store(Protocol):
    def upsert(self, tenant: str, points: Sequence[StoredPoint]) -> None: ...

    def delete(self, tenant: str, ids: Sequence[str]) -> None: ...

    def count(self, tenant: str, filter: Filter | None = None) -> int: ...

    def get(self, tenant: str, ids: Sequence[str]) -> list[Record]: ...

    def hashes(self, tenant: str, filter: Filter | None = None) -> dict[str, str]:
        """Record id -> content hash of every stored record matching the filter."""
        ...

    def search_sparse(
        self,
        tenant: str,
        query: SparseVec,
        *,
        filter: Filter | None = None,
        limit: int = 10,
        with_text: bool = True,
    ) -> list[ScoredRecord]:
        """``with_text=False``: candidates — records with their id, document and field and,
        of their metadata, ``source_type`` only (no text) — of which the caller keeps a few and
        reads those with :meth:`get`."""
        ...

    def search_dense(
        self,
        tenant: str,
        vector: np.ndarray,
        *,
        filter: Filter | None = None,
        limit: int = 10,
        with_text: bool = True,
    ) -> list[ScoredRecord]: ...

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
        """Engine-side RRF of a sparse and a dense leg."""
        ...

    def flush(self) -> None: ...

    def close(self) -> None: ...


def payload_metadata(meta: Mapping[str, Any]) -> dict[str, Any]:
    """JSON-safe copy of metadata (dates as ISO strings)."""
    out: dict[str, Any] = {}
    for k, v in meta.items():
        if isinstance(v, date):
            out[k] = v.isoformat()
        elif isinstance(v, list | tuple):
            out[k] = [str(x) for x in v]
        elif v is None or isinstance(v, str | int | float | bool):
            out[k] = v
        else:
            out[k] = str(v)
    return out

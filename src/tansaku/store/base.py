"""The engine-neutral types the storage protocols speak (``tansaku.store.protocols``):
filters, the points a writer hands over, what a search and a scan return."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import date
from typing import Any

import numpy as np

from tansaku.records import Record
from tansaku.store.sparse import SparseVec

MetaValue = str | int | float | bool | date
Bound = int | float | date


@dataclass(frozen=True, kw_only=True)
class MetaCondition:
    """A typed condition on ``metadata[key]``: equal to one of ``values``, or within the bounds
    (``gte``/``lte`` inclusive, ``gt``/``lt`` exclusive; several bounds all apply).

    Values match by their Python type, as the metadata is stored: ``3`` matches the integer 3
    and not the string "3"; a ``float`` matches a number equal to it (int or float); a
    ``date`` matches the ISO string of that day (``"2025-12-10"``, or a datetime on that day)
    and date bounds compare days. Turning what a user typed into the stored type is the
    search layer's job (``tansaku.search.filters``).
    """

    key: str
    values: tuple[MetaValue, ...] = ()
    gte: Bound | None = None
    gt: Bound | None = None
    lte: Bound | None = None
    lt: Bound | None = None

    @property
    def bounds(self) -> dict[str, Bound]:
        """The bounds that are set, by name (``gte``, ``gt``, ``lte``, ``lt``)."""
        pairs = (("gte", self.gte), ("gt", self.gt), ("lte", self.lte), ("lt", self.lt))
        return {name: v for name, v in pairs if v is not None}

    def __post_init__(self) -> None:
        if not self.key:
            raise ValueError("メタデータ条件のキーが空です")
        bounds = self.bounds
        if bool(self.values) == bool(bounds):
            raise ValueError(
                f"メタデータ条件「{self.key}」には値(values)か範囲(gte/gt/lte/lt)の"
                "どちらか一方を指定してください"
            )
        for v in (*self.values, *bounds.values()):
            if isinstance(v, float) and not math.isfinite(v):
                raise ValueError(f"メタデータ条件「{self.key}」の値 {v} は使えません")
        kinds = {isinstance(v, date) for v in bounds.values()}
        if len(kinds) > 1 or any(
            isinstance(v, bool) or not isinstance(v, int | float | date) for v in bounds.values()
        ):
            raise ValueError(
                f"メタデータ条件「{self.key}」の範囲は数値か日付の一方にしてください: {bounds}"
            )


@dataclass(frozen=True, kw_only=True)
class Filter:
    """Conditions on records. Empty means "everything of the tenant".

    ``fields``: record field in this set. ``equals``: metadata key equals value.
    ``any_of``: metadata key in values. ``date_from``/``date_to``: inclusive dates on
    ``metadata.date``. ``doc_ids``: restrict to these documents. ``where``: typed
    conditions on metadata (:class:`MetaCondition`), all of which apply.
    """

    fields: tuple[str, ...] = ()
    equals: Mapping[str, str | int | bool] = field(default_factory=dict)
    any_of: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    date_from: date | None = None
    date_to: date | None = None
    doc_ids: tuple[str, ...] = ()
    where: tuple[MetaCondition, ...] = ()

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
            or self.where
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
    length: int = 0
    """The record's BM25 length in terms (``bm25_len``; 0: unknown), for the fusion's length
    weight (``[fusion] dense_length``)."""


@dataclass(frozen=True, slots=True)
class StoredInfo:
    """What a store keeps of a record besides its vectors: the record (text and metadata only
    when a scan asks for them), the hash of its content and its BM25 length in terms."""

    record: Record
    content_hash: str
    bm25_len: int


STORED_KEYS = ("rid", "doc_id", "field", "hash", "bm25_len")  # what a scan always reads


def scan_keys(*, with_text: bool, with_meta: bool) -> list[str]:
    """The payload keys a :meth:`~tansaku.store.protocols.RecordReader.scan` reads."""
    return [*STORED_KEYS, *(["text"] if with_text else []), *(["meta"] if with_meta else [])]


def record_of(payload: Mapping[str, Any]) -> Record:
    """The record a stored point's payload describes (every backend stores the same payload:
    ``tansaku.store.shard.filter_payload`` + ``text``, ``hash``, ``bm25_len``)."""
    return Record(
        id=payload["rid"],
        doc_id=payload["doc_id"],
        field=payload.get("field", ""),
        text=payload.get("text", ""),
        metadata=payload.get("meta") or {},
    )


def stored_length(payload: Mapping[str, Any]) -> int:
    """A stored point's BM25 length in terms (0 where the payload has none)."""
    try:
        return max(int(payload.get("bm25_len", 0) or 0), 0)
    except (TypeError, ValueError):
        return 0


def stored_info(payload: Mapping[str, Any]) -> StoredInfo:
    """What a scan returns of a stored point's payload."""
    return StoredInfo(
        record_of(payload), str(payload.get("hash", "")), int(payload.get("bm25_len", 0) or 0)
    )


def stored_point(payload: Mapping[str, Any], sparse: Any | None, dense: Any | None) -> StoredPoint:
    """A stored point as its writer handed it over (what ``dump`` yields): ``sparse`` any
    engine's sparse vector (``indices``, ``values``), ``dense`` a sequence of floats."""
    return StoredPoint(
        record_of(payload),
        SparseVec(tuple(sparse.indices), tuple(sparse.values))
        if sparse is not None
        else SparseVec((), ()),
        np.asarray(dense, dtype=np.float32) if dense is not None else None,
        str(payload.get("hash", "")),
        int(payload.get("bm25_len", 0) or 0),
    )


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

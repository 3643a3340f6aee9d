"""What a search candidate is, by point id, without reading its payload.

A candidate needs its team (to check it), record id, document, field, source type and BM25
length (the fusion's length weight) — never its text. Reading even a few payload keys makes
the engine read and decode each point's whole payload, text included: at 100k records that
was a quarter of a dense or sparse search
(docs/benchmarks.md, measured 2026-11-22 at ed41d40). Point ids are 64-bit integers of
(team, record id) (``tansaku.store.ids``), so what an id names never changes;
:class:`CandidateIndex` remembers it from the writes of this process and from one ``retrieve``
of the ids it has not seen, and searches ask the engine for ids and scores only.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from itertools import islice
from types import MappingProxyType
from typing import Any

import qdrant_edge as qe

from tansaku.records import Record
from tansaku.store.base import ScoredRecord
from tansaku.store.idtable import IdLog, IdTable, Row, payload_row

# (team, the record without text: id, document, field, source type only; its BM25 length)
Identity = tuple[str, Record, int]
PAYLOAD_KEYS = ["tenant", "rid", "doc_id", "field", "meta.source_type", "bm25_len"]
BARE_KEYS = ["tenant", "rid", "doc_id"]
MAX_ENTRIES = 300_000  # ~110 MB at most (~350 bytes an entry with its ids); then 1/4 goes
_EMPTY: Mapping[str, Any] = MappingProxyType({})
_METAS: dict[str, Mapping[str, Any]] = {}  # one metadata mapping per source type, shared


def _meta(source_type: str) -> Mapping[str, Any]:
    if not source_type:
        return _EMPTY
    meta = _METAS.get(source_type)
    if meta is None:
        if len(_METAS) >= 10_000:  # source types are a handful; never grow without bound
            _METAS.clear()
        meta = _METAS[source_type] = MappingProxyType({"source_type": source_type})
    return meta


def point_key(point: Any) -> int:
    """The index key of an engine point: its id (an unsigned 64-bit integer)."""
    return int(point.id)


def identity(tenant: str, rec: Record, *, bare: bool = False, length: int = 0) -> Identity:
    """What the index keeps of a record: its team, a text-less copy, built once and shared
    by every search that finds it (records are immutable; the metadata is read-only), and its
    BM25 length in terms. ``bare`` keeps the id and document only (what a sentence unit's
    search returns)."""
    if bare:
        return tenant, Record(rec.id, rec.doc_id, "", "", _EMPTY), 0
    source_type = str(rec.metadata.get("source_type", "") or "")
    return tenant, Record(rec.id, rec.doc_id, rec.field, "", _meta(source_type)), length


class CandidateIndex:
    """Point id (an ``int``: hashing and comparing it runs no Python code) →
    :data:`Identity`, bounded; its holder calls it
    under the shard's lock. ``bare``: the index of a unit shard, whose candidates are
    records with their id and document only."""

    def __init__(
        self, max_entries: int = MAX_ENTRIES, *, bare: bool = False, table: IdTable | None = None
    ) -> None:
        self._known: dict[int, Identity] = {}
        self._max = max_entries
        self._bare = bare
        self.table = table  # the generation's id table (read-only holders): before payloads
        self.log: IdLog | None = None  # a writer's changes, for its generation's id table

    @property
    def keys(self) -> list[str]:
        """The payload keys a candidate's identity is read from."""
        return BARE_KEYS if self._bare else PAYLOAD_KEYS

    def wrote(self, entries: Sequence[tuple[int, Identity]]) -> None:
        """Points the holder wrote: remembered, and logged for the id table."""
        self.remember(entries)
        if self.log is not None:
            self.log.put((key, identity_row(ident)) for key, ident in entries)

    def deleted(self, ids: Sequence[int]) -> None:
        """Points the holder deleted."""
        self.forget(ids)
        if self.log is not None:
            self.log.drop(ids)

    def team_deleted(self, team: str) -> None:
        """Every point of ``team`` deleted."""
        self.clear()
        if self.log is not None:
            self.log.drop_team(team)

    def __len__(self) -> int:
        return len(self._known)

    def remember(self, entries: Iterable[tuple[int, Identity]]) -> None:
        self._known.update(entries)
        if len(self._known) > self._max:
            for key in list(islice(self._known, len(self._known) - self._max * 3 // 4)):
                del self._known[key]

    def forget(self, ids: Iterable[int]) -> None:
        for i in ids:
            self._known.pop(i, None)

    def clear(self) -> None:
        self._known.clear()

    def resolve(self, shard: Any, points: Sequence[Any], tenant: str) -> list[ScoredRecord]:
        """The tenant's points as text-less records, best first; ids not seen yet are read
        in one ``retrieve``. Points of another team (or gone meanwhile) are dropped."""
        keys = [p.id for p in points]
        idents = [self._known.get(k) for k in keys]
        missing = [k for k, ident in zip(keys, idents, strict=True) if ident is None]
        if missing and self.table is not None:
            found_keys, rows = self.table.positions(missing)
            if found_keys:
                learned = {
                    k: row_identity(row, self._bare)
                    for k, row in zip(found_keys, self.table.rows(rows), strict=True)
                }
                idents = [i or learned.get(k) for k, i in zip(keys, idents, strict=True)]
                self.remember(learned.items())
                missing = [k for k in missing if k not in learned]
        if missing:
            found = shard.retrieve(
                missing,
                with_payload=qe.PayloadSelector.Include(self.keys),
                with_vector=False,
            )
            fetched = {
                r.id: _from_payload(payload, self._bare) for r in found if (payload := r.payload)
            }
            idents = [i or fetched.get(k) for k, i in zip(keys, idents, strict=True)]
            self.remember(fetched.items())  # may forget older entries, some of them in use
        return [
            ScoredRecord(ident[1], float(p.score), ident[2])
            for p, ident in zip(points, idents, strict=True)
            if ident is not None and ident[0] == tenant
        ]


def _from_payload(payload: dict[str, Any], bare: bool) -> Identity:
    return row_identity(payload_row(payload), bare)


def row_identity(row: Row, bare: bool) -> Identity:
    tenant, rid, doc_id, field, source_type, length = row
    if bare:
        return tenant, Record(rid, doc_id, "", "", _EMPTY), 0
    return tenant, Record(rid, doc_id, field, "", _meta(source_type)), length


def identity_row(ident: Identity) -> Row:
    """The id-table row of what the index keeps of a record."""
    tenant, rec, length = ident
    source_type = str(rec.metadata.get("source_type", "") or "")
    return tenant, rec.id, rec.doc_id, rec.field, source_type, length

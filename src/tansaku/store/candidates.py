"""What a search candidate is, by point id, without reading its payload.

A candidate needs its team (to check it), record id, document, field and source type — never
its text. Reading even a few payload keys makes the engine read and decode each point's whole
payload, text included: at 100k records that was a quarter of a dense or sparse search
(docs/benchmarks.md, session 3). Point ids are UUIDv5 of (team, record id), so what an id names
never changes; :class:`CandidateIndex` remembers it from the writes of this process and from one
``retrieve`` of the ids it has not seen, and searches ask the engine for ids and scores only.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Sequence
from itertools import islice
from typing import Any

import qdrant_edge as qe

from tansaku.records import Record
from tansaku.store.base import ScoredRecord

# (team, record id, document, field, source type)
Identity = tuple[str, str, str, str, str]
_KEYS = ["tenant", "rid", "doc_id", "field", "meta.source_type"]
MAX_ENTRIES = 300_000  # ~110 MB at most (~360 bytes an entry); then the oldest quarter goes


def identity(tenant: str, rec: Record) -> Identity:
    return (
        tenant,
        rec.id,
        rec.doc_id,
        rec.field,
        str(rec.metadata.get("source_type", "") or ""),
    )


class CandidateIndex:
    """Point id (as ``uuid.UUID.int``: hashing and comparing ``UUID`` objects runs Python code,
    a third of this class' time at first) → :data:`Identity`, bounded; its holder calls it
    under the shard's lock."""

    def __init__(self, max_entries: int = MAX_ENTRIES) -> None:
        self._known: dict[int, Identity] = {}
        self._max = max_entries

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
        keys = [p.id.int for p in points]  # each ``p.id`` builds a new UUID: read it once
        idents = [self._known.get(k) for k in keys]
        missing = [k for k, ident in zip(keys, idents, strict=True) if ident is None]
        if missing:
            found = shard.retrieve(
                [uuid.UUID(int=k) for k in missing],
                with_payload=qe.PayloadSelector.Include(_KEYS),
                with_vector=False,
            )
            fetched = {r.id.int: _from_payload(r.payload) for r in found if r.payload}
            idents = [i or fetched.get(k) for k, i in zip(keys, idents, strict=True)]
            self.remember(fetched.items())  # may forget older entries, some of them in use
        out: list[ScoredRecord] = []
        for p, ident in zip(points, idents, strict=True):
            if ident is None or ident[0] != tenant:
                continue
            _, rid, doc_id, field, source_type = ident
            meta = {"source_type": source_type} if source_type else {}
            out.append(ScoredRecord(Record(rid, doc_id, field, "", meta), float(p.score)))
        return out


def _from_payload(payload: dict[str, Any]) -> Identity:
    return (
        str(payload.get("tenant", "")),
        str(payload.get("rid", "")),
        str(payload.get("doc_id", "")),
        str(payload.get("field", "")),
        str((payload.get("meta") or {}).get("source_type", "") or ""),
    )

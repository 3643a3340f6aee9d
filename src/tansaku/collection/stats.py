"""The statistics a collection derives from its records, saved with every commit.

BM25 length statistics per team and field (sum of lengths, records, and the average each
field's vectors were encoded with), the teams whose sentence units are complete, the embedder
and the layout version. The collection owns them (``tansaku.collection``, ``tansaku.ingest.apply``):
they move with what it writes, batch by batch, so every commit describes exactly its records.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from tansaku.store.ids import ID_VERSION
from tansaku.store.protocols import Lengths

STATE = "state.json"  # a generation's statistics file
STATE_VERSION = ID_VERSION  # 2: 64-bit integer point ids (1: UUIDs, migrated on open)

FieldLengths = Iterable[tuple[str, int]]  # the (field, BM25 length) of each record


@dataclass
class FieldStats:
    total_len: int = 0
    count: int = 0
    avgdl_written: float = 0.0

    @property
    def avgdl(self) -> float:
        return self.total_len / self.count if self.count else 0.0


@dataclass
class CollectionState:
    """Persisted per collection: BM25 length statistics per (tenant, field), and the tenants
    whose sentence units (``bigram`` axes) are complete."""

    embedder: str = ""
    dim: int = 0
    bm25: dict[str, dict[str, FieldStats]] = field(default_factory=dict)
    units: set[str] = field(default_factory=set)
    version: int = STATE_VERSION  # the layout the generation's stores were written in

    def stats(self, tenant: str, field_name: str) -> FieldStats:
        return self.bm25.setdefault(tenant, {}).setdefault(field_name, FieldStats())

    def fix_averages(self, tenant: str, removed: FieldLengths, added: FieldLengths) -> None:
        """Fix the average length new BM25 vectors are encoded with (``avgdl_written``) for
        fields that have none yet, from the statistics as they will be once the (field,
        length) pairs ``removed`` are gone and ``added`` are written."""
        projected = {
            fld: FieldStats(st.total_len, st.count) for fld, st in self.bm25.get(tenant, {}).items()
        }
        _shift(lambda fld: projected.setdefault(fld, FieldStats()), removed, added)
        for fld, after in projected.items():
            st = self.stats(tenant, fld)
            if not st.avgdl_written and after.count > 0:
                st.avgdl_written = after.avgdl

    def move(self, tenant: str, removed: FieldLengths, added: FieldLengths) -> None:
        """Move the length statistics by the (field, length) of records just removed and
        written (batch by batch: every commit's statistics describe the records it holds)."""
        _shift(lambda fld: self.stats(tenant, fld), removed, added)

    def drifted(self, tenant: str, threshold: float = 0.0) -> list[tuple[str, float]]:
        """(field, new average) of the tenant's fields whose average length moved more than
        ``threshold`` (a fraction) from the one their vectors were encoded with; the new
        average becomes the encoded one (the caller re-encodes those fields)."""
        out = []
        for fld, st in self.bm25.get(tenant, {}).items():
            if not st.count:
                continue
            written = st.avgdl_written
            if written and abs(st.avgdl - written) / written <= threshold:
                continue
            st.avgdl_written = st.avgdl
            out.append((fld, st.avgdl))
        return out

    def drop(self, tenant: str) -> None:
        """Forget the team (its records and units are gone)."""
        self.bm25.pop(tenant, None)
        self.units.discard(tenant)

    def to_json(self) -> str:
        return json.dumps(
            {
                "version": self.version,
                "embedder": self.embedder,
                "dim": self.dim,
                "bm25": {
                    t: {f: vars(s) for f, s in fields.items()} for t, fields in self.bm25.items()
                },
                "units": sorted(self.units),
            },
            ensure_ascii=False,
            indent=1,
        )

    @classmethod
    def from_json(cls, text: str) -> CollectionState:
        data = json.loads(text)
        return cls(
            embedder=data.get("embedder", ""),
            dim=int(data.get("dim", 0)),
            version=int(data.get("version", 1)),
            bm25={
                t: {f: FieldStats(**s) for f, s in fields.items()}
                for t, fields in data.get("bm25", {}).items()
            },
            units=set(data.get("units", ())),
        )


def _shift(stats: Callable[[str], FieldStats], removed: FieldLengths, added: FieldLengths) -> None:
    """Take the (field, length) pairs ``removed`` out of each field's ``stats`` and put those
    ``added`` in."""
    for sign, pairs in ((-1, removed), (1, added)):
        for fld, length in pairs:
            st = stats(fld)
            st.total_len += sign * length
            st.count += sign


def recount_bm25(lengths: Lengths, old: CollectionState) -> dict[str, dict[str, FieldStats]]:
    """BM25 length statistics from what the records carry (``RecordStore.lengths``), keeping
    the average the stored vectors were encoded with where the old state knew it."""
    stats: dict[str, dict[str, FieldStats]] = defaultdict(dict)
    for tenant, fields in lengths.items():
        for name, (total, count) in fields.items():
            stats[tenant][name] = FieldStats(total_len=total, count=count)
    for tenant, per_field in stats.items():
        for name, st in per_field.items():
            before = old.bm25.get(tenant, {}).get(name)
            # the average the stored vectors were encoded with, if the old state knew it
            st.avgdl_written = before.avgdl_written if before and before.avgdl_written else st.avgdl
    return dict(stats)

"""A shard's candidate identities on disk: point id → team, record id, document, field and
source type, written by the writer with each generation and mapped by its readers.

A search asks the engine for ids and scores only; what an id names comes from the
:class:`~tansaku.store.candidates.CandidateIndex`, which learned ids it had not seen from
payload reads — each decoding a whole payload, text included. Right after a collection loads
every candidate is one it has not seen: at 100k chunks the first 200 new questions spent ~1.8 ms
a payload read (docs/benchmarks.md). The table answers them from a few mapped pages instead.

Layout (``<shard>.ids/``, beside the shard in its generation, committed with it)::

    ids.npy     uint64, sorted      team.npy, field.npy, kind.npy   uint32 codes
    rid.npy     uint8 (UTF-8)       rid_at.npy   uint64 offsets (n + 1)
    doc.npy     uint8 (UTF-8)       doc_at.npy   uint64 offsets (n + 1)
    names.json  {"version", "count", "teams", "fields", "kinds"}   written last

A writer starts from the table of the generation it copied (or from nothing, for an empty
shard), applies what it wrote (:class:`IdLog`) and writes the merged table when it closes; a
table whose count differs from the shard's (a shard made before tables, or a change it missed)
is built again from one scroll of the shard. What an id names never changes (ids are hashes of
team and record id, :mod:`tansaku.store.ids`), and every search still checks the team.
"""

from __future__ import annotations

import json
import logging
import shutil
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import qdrant_edge as qe

log = logging.getLogger("tansaku.store")

VERSION = 1
SUFFIX = ".ids"
NAMES = "names.json"
Row = tuple[str, str, str, str, str]
"""(team, record id, document, field, source type)"""
_COLUMNS = ("ids", "team", "field", "kind", "rid", "rid_at", "doc", "doc_at")
_SCROLL = 2_000


def table_dir(shard: Path) -> Path:
    """Where the table of the shard in ``shard`` lives."""
    return shard.with_name(shard.name + SUFFIX)


class IdTable:
    """A written table, mapped read-only (pages are read when a lookup touches them)."""

    def __init__(self, folder: Path) -> None:
        names = json.loads((folder / NAMES).read_text(encoding="utf-8"))
        if names.get("version") != VERSION:
            raise ValueError(f"id table version {names.get('version')!r}")
        self.count = int(names["count"])
        self.teams: list[str] = list(names["teams"])
        self.fields: list[str] = list(names["fields"])
        self.kinds: list[str] = list(names["kinds"])
        cols = {c: np.load(folder / f"{c}.npy", mmap_mode="r") for c in _COLUMNS}
        self.ids, self.team, self.field, self.kind = (
            cols["ids"],
            cols["team"],
            cols["field"],
            cols["kind"],
        )
        self.rid, self.rid_at, self.doc, self.doc_at = (
            cols["rid"],
            cols["rid_at"],
            cols["doc"],
            cols["doc_at"],
        )
        n = self.count
        if not (
            len(self.ids) == len(self.team) == len(self.field) == len(self.kind) == n
            and len(self.rid_at) == len(self.doc_at) == n + 1
            and (n == 0 or (int(self.rid_at[-1]) == len(self.rid)))
            and (n == 0 or (int(self.doc_at[-1]) == len(self.doc)))
        ):
            raise ValueError("id table columns disagree")

    @classmethod
    def open(cls, shard: Path) -> IdTable | None:
        """The table of ``shard``, or None when it has none (or an unreadable one)."""
        folder = table_dir(shard)
        if not (folder / NAMES).exists():
            return None
        try:
            return cls(folder)
        except (OSError, ValueError, KeyError, TypeError) as e:
            log.warning("id table %s unreadable (%s): payload reads instead", folder, e)
            return None

    def positions(self, keys: Sequence[int]) -> tuple[list[int], list[int]]:
        """(keys found, their rows)."""
        if not keys or self.count == 0:
            return [], []
        q = np.fromiter(keys, dtype=np.uint64, count=len(keys))
        pos = np.searchsorted(self.ids, q)
        pos[pos >= self.count] = 0
        hit = self.ids[pos] == q
        return q[hit].tolist(), pos[hit].tolist()

    def rows(self, rows: Sequence[int]) -> list[Row]:
        """The rows' (team, record id, document, field, source type)."""
        if not rows:
            return []
        at = np.asarray(rows, dtype=np.int64)
        rid, doc = memoryview(self.rid), memoryview(self.doc)  # type: ignore[arg-type]
        r0, r1 = self.rid_at[at].tolist(), self.rid_at[at + 1].tolist()
        d0, d1 = self.doc_at[at].tolist(), self.doc_at[at + 1].tolist()
        teams, fields = self.team[at].tolist(), self.field[at].tolist()
        kinds = self.kind[at].tolist()
        return [
            (
                self.teams[teams[i]],
                str(rid[r0[i] : r1[i]], "utf-8"),
                str(doc[d0[i] : d1[i]], "utf-8"),
                self.fields[fields[i]],
                self.kinds[kinds[i]],
            )
            for i in range(len(rows))
        ]

    def all_rows(self) -> Iterator[tuple[int, Row]]:
        """Every (id, row), in id order (a writer's merge reads them in blocks)."""
        for start in range(0, self.count, 50_000):
            block = list(range(start, min(start + 50_000, self.count)))
            keys = self.ids[start : start + len(block)].tolist()
            yield from zip(keys, self.rows(block), strict=True)


class IdLog:
    """What a writer changed in its shard, in order: puts (new or rewritten points), drops
    (deleted points) and whole teams deleted. ``base``: the table of the generation it
    copied; None with ``fresh`` False: the shard had points and no table (built by a scroll)."""

    MAX_CHANGES = 50_000
    """Past this many changed points the log lets go of them (~15 MB) and the table is built
    from one scroll of the shard (a 100k ingest: seconds, against minutes of writing)."""

    def __init__(self, base: IdTable | None, *, fresh: bool) -> None:
        self.base = base
        self.known = base is not None or fresh
        self.changed: dict[int, Row | None] = {}
        self.dropped_teams: set[str] = set()

    def put(self, entries: Iterable[tuple[int, Row]]) -> None:
        if self.known:
            self.changed.update(entries)
            self._bound()

    def drop(self, ids: Iterable[int]) -> None:
        if self.known:
            self.changed.update((i, None) for i in ids)
            self._bound()

    def drop_team(self, team: str) -> None:
        self.dropped_teams.add(team)
        for key, row in list(self.changed.items()):
            if row is not None and row[0] == team:
                self.changed[key] = None

    def _bound(self) -> None:
        if len(self.changed) > self.MAX_CHANGES:
            self.known, self.base = False, None
            self.changed.clear()
            self.dropped_teams.clear()

    @property
    def empty(self) -> bool:
        return not self.changed and not self.dropped_teams

    def merged(self) -> Iterator[tuple[int, Row]]:
        """The base's rows that stand, then every row put (ids unordered)."""
        if self.base is not None:
            for key, row in self.base.all_rows():
                if key not in self.changed and row[0] not in self.dropped_teams:
                    yield key, row
        for key, row in self.changed.items():
            if row is not None:
                yield key, row


def write_table(shard: Path, entries: Iterable[tuple[int, Row]]) -> int:
    """Write the table of ``shard`` from ``entries`` (any order, ids unique); returns the
    count. The folder is written whole, ``names.json`` last."""
    keys: list[int] = []
    columns: tuple[list[int], list[int], list[int]] = ([], [], [])
    codes: tuple[dict[str, int], dict[str, int], dict[str, int]] = ({}, {}, {})
    rids: list[bytes] = []
    docs: list[bytes] = []
    for key, (team, rid, doc, field, kind) in entries:
        keys.append(key)
        for col, table, value in zip(columns, codes, (team, field, kind), strict=True):
            col.append(table.setdefault(value, len(table)))
        rids.append(rid.encode("utf-8"))
        docs.append(doc.encode("utf-8"))
    n = len(keys)
    order = np.argsort(np.asarray(keys, dtype=np.uint64), kind="stable")
    folder = table_dir(shard)
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    ids = np.asarray(keys, dtype=np.uint64)[order]
    if n > 1 and bool(np.any(ids[1:] == ids[:-1])):
        raise ValueError("id table: an id twice")
    np.save(folder / "ids.npy", ids)
    for name, col in zip(("team", "field", "kind"), columns, strict=True):
        np.save(folder / f"{name}.npy", np.asarray(col, dtype=np.uint32)[order])
    for name, blobs in (("rid", rids), ("doc", docs)):
        ordered = [blobs[i] for i in order.tolist()]
        at = np.zeros(n + 1, dtype=np.uint64)
        np.cumsum([len(b) for b in ordered], out=at[1:])
        np.save(folder / f"{name}_at.npy", at)
        np.save(folder / f"{name}.npy", np.frombuffer(b"".join(ordered), dtype=np.uint8))
    names = {
        "version": VERSION,
        "count": n,
        "teams": list(codes[0]),
        "fields": list(codes[1]),
        "kinds": list(codes[2]),
    }
    (folder / NAMES).write_text(json.dumps(names, ensure_ascii=False), encoding="utf-8")
    return n


def scrolled(shard: Any, keys: list[str], row: Any) -> Iterator[tuple[int, Row]]:
    """Every point of ``shard`` as (id, ``row(payload)``), reading only ``keys``."""
    offset: Any = None
    while True:
        points, offset = shard.scroll(
            qe.ScrollRequest(
                limit=_SCROLL,
                offset=offset,
                with_payload=qe.PayloadSelector.Include(keys),
                with_vector=False,
            )
        )
        for p in points:
            if p.payload:
                yield int(p.id), row(p.payload)
        if offset is None or not points:
            return


def seal(shard_path: Path, shard: Any, log_: IdLog, total: int, keys: list[str], row: Any) -> None:
    """Write the table of the writer's shard: the log merged into its base, or — when the
    shard had no table, or the merge counts other than ``total`` points — one scroll of the
    shard. Nothing changed and a table standing: nothing to write."""
    if log_.empty and log_.base is not None and log_.base.count == total:
        return
    count = -1
    if log_.known:
        count = write_table(shard_path, log_.merged())
    if count != total:
        if log_.known:
            log.info("id table of %s: %d rows, %d points: read again", shard_path, count, total)
        write_table(shard_path, scrolled(shard, keys, row))

"""A shard's candidate identities on disk: point id → team, record id, document, field and
source type, written by the writer with each generation and mapped by its readers.

A search asks the engine for ids and scores only; what an id names comes from the
:class:`~tansaku.store.candidates.CandidateIndex`, which learned ids it had not seen from
payload reads — each decoding a whole payload, text included. Right after a collection loads
every candidate is one it has not seen: at 100k chunks the first 200 new questions spent ~1.8 ms
a payload read (docs/benchmarks.md). The table answers them from a few mapped pages instead.

Layout: one file, ``<shard>.ids`` beside the shard in its generation (committed with it),
mapped whole by a reader (one file descriptor)::

    magic (8 bytes)  header length (uint64)  header (JSON: version, count, the names of the
    team / field / source-type codes, each column's offset, type and length)  the columns,
    each at a multiple of 8: ids (uint64, sorted), team / field / kind (uint32 codes),
    rid / doc (UTF-8 bytes), rid_at / doc_at (uint64 offsets, n + 1), blen (uint32: the
    record's BM25 length in terms, for the fusion's length weight)

A version-1 table (before ``blen``) is still read, every length 0 (unknown); a writer whose
generation has one builds the current version from one scroll when it closes.

A writer starts from the table of the generation it copied (or from nothing, for an empty
shard), applies what it wrote (:class:`IdLog`) and writes the merged table when it closes; a
table whose count differs from the shard's (a shard made before tables, or a change it missed)
is built again from one scroll of the shard. What an id names never changes (ids are hashes of
team and record id, :mod:`tansaku.store.ids`), and every search still checks the team.
"""

from __future__ import annotations

import json
import logging
import mmap
import os
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import qdrant_edge as qe

from tansaku.faults import crashpoint
from tansaku.store.base import stored_length

log = logging.getLogger("tansaku.store")

VERSION = 2
READABLE = (1, 2)
SUFFIX = ".ids"
MAGIC = b"TSKIDS\x00\x01"
Row = tuple[str, str, str, str, str, int]
"""(team, record id, document, field, source type, BM25 length in terms: 0 unknown)"""
_COLUMNS = ("ids", "team", "field", "kind", "rid", "rid_at", "doc", "doc_at", "blen")
_V1_COLUMNS = _COLUMNS[:-1]
_SCROLL = 2_000


def table_path(shard: Path) -> Path:
    """Where the table of the shard in ``shard`` lives."""
    return shard.with_name(shard.name + SUFFIX)


class IdTable:
    """A written table, mapped read-only (pages are read when a lookup touches them)."""

    def __init__(self, path: Path) -> None:
        with path.open("rb") as f:
            self._map = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
        m = self._map
        if m[:8] != MAGIC:
            raise ValueError("not an id table")
        size = int.from_bytes(m[8:16], "little")
        header = json.loads(bytes(m[16 : 16 + size]))
        if header.get("version") not in READABLE:
            raise ValueError(f"id table version {header.get('version')!r}")
        self.version = int(header["version"])
        self.count = n = int(header["count"])
        self.teams: list[str] = list(header["teams"])
        self.fields: list[str] = list(header["fields"])
        self.kinds: list[str] = list(header["kinds"])
        cols = {"blen": np.zeros(n, dtype=np.uint32)}  # a version-1 table: lengths unknown
        for name in _COLUMNS if self.version >= 2 else _V1_COLUMNS:
            offset, dtype, length = header["columns"][name]
            if offset + length * np.dtype(dtype).itemsize > len(m):
                raise ValueError(f"id table column {name} past the end")
            cols[name] = np.frombuffer(m, dtype=dtype, count=length, offset=offset)
        self.ids, self.team, self.field, self.kind = (cols[c] for c in _COLUMNS[:4])
        self.rid, self.rid_at, self.doc, self.doc_at = (cols[c] for c in _COLUMNS[4:8])
        self.blen = cols["blen"]
        if not (
            len(self.ids) == len(self.team) == len(self.field) == len(self.kind) == n
            and len(self.blen) == n
            and len(self.rid_at) == len(self.doc_at) == n + 1
            and int(self.rid_at[-1]) == len(self.rid)
            and int(self.doc_at[-1]) == len(self.doc)
        ):
            raise ValueError("id table columns disagree")

    @classmethod
    def open(cls, shard: Path) -> IdTable | None:
        """The table of ``shard``, or None when it has none (or an unreadable one)."""
        path = table_path(shard)
        if not path.exists():
            return None
        try:
            return cls(path)
        except (OSError, ValueError, KeyError, TypeError, IndexError) as e:
            log.warning("id table %s unreadable (%s): payload reads instead", path, e)
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

    @property
    def current(self) -> bool:
        """Whether the table is of the version this code writes (else: rebuild it)."""
        return self.version == VERSION

    def rows(self, rows: Sequence[int]) -> list[Row]:
        """The rows' (team, record id, document, field, source type, BM25 length)."""
        if not rows:
            return []
        at = np.asarray(rows, dtype=np.int64)
        rid, doc = memoryview(self.rid), memoryview(self.doc)  # type: ignore[arg-type]
        r0, r1 = self.rid_at[at].tolist(), self.rid_at[at + 1].tolist()
        d0, d1 = self.doc_at[at].tolist(), self.doc_at[at + 1].tolist()
        teams, fields = self.team[at].tolist(), self.field[at].tolist()
        kinds, blens = self.kind[at].tolist(), self.blen[at].tolist()
        return [
            (
                self.teams[teams[i]],
                str(rid[r0[i] : r1[i]], "utf-8"),
                str(doc[d0[i] : d1[i]], "utf-8"),
                self.fields[fields[i]],
                self.kinds[kinds[i]],
                blens[i],
            )
            for i in range(len(rows))
        ]


class IdLog:
    """What a writer changed in its shard, in order: puts (new or rewritten points), drops
    (deleted points) and whole teams deleted. ``base``: the table of the generation it
    copied; None with ``fresh`` False: the shard had points and no table (built by a scroll).
    A base of an older version is no base: the table is built again from a scroll."""

    MAX_CHANGES = 50_000
    """Past this many changed points the log lets go of them (~15 MB) and the table is built
    from one scroll of the shard (a 100k ingest: seconds, against minutes of writing)."""

    def __init__(self, base: IdTable | None, *, fresh: bool) -> None:
        if base is not None and not base.current:
            base = None
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

    def puts(self) -> Iterator[tuple[int, Row]]:
        """Every row put and not dropped since."""
        return ((k, row) for k, row in self.changed.items() if row is not None)


@dataclass
class _Columns:
    """A table in memory: the arrays of the files and the names the codes stand for."""

    ids: np.ndarray
    codes: dict[str, np.ndarray]  # team, field, kind
    names: dict[str, list[str]]  # teams, fields, kinds
    text: dict[str, tuple[np.ndarray, np.ndarray]]  # rid, doc: (UTF-8 bytes, offsets)
    blen: np.ndarray  # BM25 length in terms (uint32)

    def __len__(self) -> int:
        return len(self.ids)


_CODED = (("team", "teams"), ("field", "fields"), ("kind", "kinds"))


def _gather(blob: np.ndarray, at: np.ndarray, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The strings of ``rows`` (in that order) as a new blob and its offsets."""
    starts, ends = at[rows].astype(np.int64), at[rows + 1].astype(np.int64)
    lens = ends - starts
    out_at = np.zeros(len(rows) + 1, dtype=np.uint64)
    np.cumsum(lens, out=out_at[1:])
    total = int(out_at[-1])
    if total == 0:
        return np.zeros(0, dtype=np.uint8), out_at
    shift = np.repeat(starts - out_at[:-1].astype(np.int64), lens)
    return np.asarray(blob)[np.arange(total, dtype=np.int64) + shift], out_at


def _from_rows(entries: Iterable[tuple[int, Row]], names: dict[str, list[str]]) -> _Columns:
    """Columns of ``entries``, coded against ``names`` (extended in place)."""
    keys: list[int] = []
    index = {k: {n: i for i, n in enumerate(v)} for k, v in names.items()}
    coded: dict[str, list[int]] = {c: [] for c, _ in _CODED}
    texts: dict[str, list[bytes]] = {"rid": [], "doc": []}
    blens: list[int] = []
    for key, (team, rid, doc, field, kind, blen) in entries:
        keys.append(key)
        blens.append(min(max(int(blen), 0), 0xFFFFFFFF))
        for (col, plural), value in zip(_CODED, (team, field, kind), strict=True):
            code = index[plural].get(value)
            if code is None:
                code = index[plural][value] = len(names[plural])
                names[plural].append(value)
            coded[col].append(code)
        texts["rid"].append(rid.encode("utf-8"))
        texts["doc"].append(doc.encode("utf-8"))
    text = {}
    for name, blobs in texts.items():
        at = np.zeros(len(blobs) + 1, dtype=np.uint64)
        np.cumsum([len(b) for b in blobs], out=at[1:])
        text[name] = (np.frombuffer(b"".join(blobs), dtype=np.uint8), at)
    return _Columns(
        np.asarray(keys, dtype=np.uint64),
        {c: np.asarray(v, dtype=np.uint32) for c, v in coded.items()},
        names,
        text,
        np.asarray(blens, dtype=np.uint32),
    )


def _take(cols: _Columns, rows: np.ndarray) -> _Columns:
    return _Columns(
        cols.ids[rows],
        {c: v[rows] for c, v in cols.codes.items()},
        cols.names,
        {n: _gather(b, at, rows) for n, (b, at) in cols.text.items()},
        cols.blen[rows],
    )


def _concat(a: _Columns, b: _Columns) -> _Columns:
    """``b`` after ``a`` (coded against the same names)."""

    def join(x: tuple[np.ndarray, np.ndarray], y: tuple[np.ndarray, np.ndarray]) -> Any:
        at = np.concatenate([x[1][:-1], y[1] + (x[1][-1] if len(x[1]) else 0)])
        return np.concatenate([x[0], y[0]]), at.astype(np.uint64)

    return _Columns(
        np.concatenate([a.ids, b.ids]),
        {c: np.concatenate([a.codes[c], b.codes[c]]) for c in a.codes},
        b.names,
        {n: join(a.text[n], b.text[n]) for n in a.text},
        np.concatenate([a.blen, b.blen]),
    )


def _merged(log_: IdLog) -> _Columns:
    """The base's rows that stand (kept as arrays, never decoded) and every row put."""
    base = log_.base
    if base is None:
        return _from_rows(log_.puts(), {p: [] for _, p in _CODED})
    names = {"teams": list(base.teams), "fields": list(base.fields), "kinds": list(base.kinds)}
    ids = np.asarray(base.ids)
    keep = np.ones(base.count, dtype=bool)
    if log_.changed:
        changed = np.fromiter(log_.changed, dtype=np.uint64, count=len(log_.changed))
        keep &= ~np.isin(ids, changed)
    gone = [names["teams"].index(t) for t in log_.dropped_teams if t in names["teams"]]
    if gone:
        keep &= ~np.isin(np.asarray(base.team), gone)
    whole = _Columns(
        ids,
        {
            "team": np.asarray(base.team),
            "field": np.asarray(base.field),
            "kind": np.asarray(base.kind),
        },
        names,
        {
            "rid": (np.asarray(base.rid), np.asarray(base.rid_at)),
            "doc": (np.asarray(base.doc), np.asarray(base.doc_at)),
        },
        np.asarray(base.blen),
    )
    return _concat(_take(whole, np.nonzero(keep)[0]), _from_rows(log_.puts(), names))


def write_table(shard: Path, entries: Iterable[tuple[int, Row]]) -> int:
    """Write the table of ``shard`` from ``entries`` (any order, ids unique); returns the
    count."""
    return _save(shard, _from_rows(entries, {p: [] for _, p in _CODED}))


def _save(shard: Path, cols: _Columns) -> int:
    """Write ``cols`` sorted by id, into a new file renamed over the old. Returns the count."""
    n = len(cols)
    order = np.argsort(cols.ids, kind="stable")
    cols = _take(cols, order)
    if n > 1 and bool(np.any(cols.ids[1:] == cols.ids[:-1])):
        raise ValueError("id table: an id twice")
    arrays: dict[str, np.ndarray] = {
        "ids": cols.ids.astype(np.uint64),
        **{name: col.astype(np.uint32) for name, col in cols.codes.items()},
        **{name: blob.astype(np.uint8) for name, (blob, _) in cols.text.items()},
        **{f"{name}_at": at.astype(np.uint64) for name, (_, at) in cols.text.items()},
        "blen": cols.blen.astype(np.uint32),
    }
    header: dict[str, Any] = {"version": VERSION, "count": n, **cols.names, "columns": {}}
    # offsets depend on the header's own length: place the columns after a generous guess,
    # then grow the guess until the header fits
    room = 4096 + 16 * sum(len(v) for v in cols.names.values())
    while True:
        at = 16 + room
        for name in _COLUMNS:
            arr = arrays[name]
            header["columns"][name] = [at, arr.dtype.str, len(arr)]
            at += -(-arr.nbytes // 8) * 8
        head = json.dumps(header, ensure_ascii=False).encode("utf-8")
        if len(head) <= room:
            break
        room = len(head) * 2
    path = table_path(shard)
    tmp = path.with_name(path.name + ".tmp")
    with tmp.open("wb") as f:
        f.write(MAGIC + len(head).to_bytes(8, "little") + head)
        for name in _COLUMNS:
            offset = header["columns"][name][0]
            f.write(b"\x00" * (offset - f.tell()))
            f.write(arrays[name].tobytes())
    crashpoint("id-table")
    os.replace(tmp, path)
    return n


def payload_row(payload: Mapping[str, Any]) -> Row:
    """The row of a point's payload (its keys missing from the payload: empty)."""
    tenant, rid, doc_id = (str(payload.get(k, "")) for k in ("tenant", "rid", "doc_id"))
    source_type = str((payload.get("meta") or {}).get("source_type", "") or "")
    field = str(payload.get("field", ""))
    return tenant, rid, doc_id, field, source_type, stored_length(payload)


def points(shard: Any) -> int:
    """How many points the engine shard holds (every team's)."""
    return int(shard.count(qe.CountRequest(exact=True)))


def scrolled(shard: Any, keys: list[str]) -> Iterator[tuple[int, Row]]:
    """Every point of ``shard`` as (id, its row), reading only the payload ``keys``."""
    offset: Any = None
    while True:
        found, offset = shard.scroll(
            qe.ScrollRequest(
                limit=_SCROLL,
                offset=offset,
                with_payload=qe.PayloadSelector.Include(keys),
                with_vector=False,
            )
        )
        for p in found:
            if p.payload:
                yield int(p.id), payload_row(p.payload)
        if offset is None or not found:
            return


def seal(shard_path: Path, shard: Any, log_: IdLog, keys: list[str]) -> None:
    """Write the table of the writer's shard: the log merged into its base, or — when the
    shard had no table, or the merge counts other than the shard's points — one scroll of the
    shard (reading ``keys``). Nothing changed and a table standing: nothing to write."""
    total = points(shard)
    base = log_.base
    if log_.empty and base is not None and base.count == total and base.current:
        return
    count = -1
    if log_.known:
        count = _save(shard_path, _merged(log_))
    if count != total:
        if log_.known:
            log.info("id table of %s: %d rows, %d points: read again", shard_path, count, total)
        write_table(shard_path, scrolled(shard, keys))


def table_problem(shard_path: Path, shard: Any, keys: list[str]) -> str | None:
    """What is wrong with the table of the shard in ``shard_path`` against the shard's own
    payloads (one scroll reading ``keys``), in Japanese; None when it names exactly the
    shard's points."""
    if not table_path(shard_path).exists():
        return "ありません"
    table = IdTable.open(shard_path)
    if table is None:
        return "読めません"
    if not table.current:
        return f"古い形式です(版 {table.version}: 語数の列がありません)"
    want = dict(scrolled(shard, keys))
    if table.count != len(want):
        return f"件数がシャードと合いません(表 {table.count:,} 件、シャード {len(want):,} 件)"
    found, rows = table.positions(list(want))
    have = dict(zip(found, table.rows(rows), strict=True))
    wrong = sum(1 for key, value in want.items() if have.get(key) != value)
    return f"{wrong:,} 件がシャードの内容と合いません" if wrong else None

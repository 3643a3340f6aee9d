"""One qdrant-edge shard on disk, as the record store and the unit store both hold one: opening
it, the payload a record's points carry for filtering, and the filter every read uses.

Opening creates the shard (with the tenant index and the payload indexes every search filters
on) or loads it; :class:`ShardOwner` gives its holder ``optimize``/``flush``/``close`` under the
holder's lock, and lets a read-only holder close its engine shard while idle (reopened by the
next read, see ``tansaku.backends.embedded.handles``).

Each loaded shard runs its own search thread pool; by default the engine sizes it from the CPUs
(4 threads a CPU), so every open shard costs threads. New shards, and shards a writer loads,
record ``max_search_threads`` (:func:`search_threads`) in their ``edge_config.json``; read-only
loads never rewrite a committed generation and keep what it recorded. One thread (the default)
runs a query in the calling thread: the engine holds the interpreter lock for the whole query,
so a pool made every query wait, lock held, for its pool's threads to be scheduled.

Memory: new shards place their vectors, sparse index, payloads, payload indexes and id tracker
``Cold``
(:data:`ON_DEMAND`): memory-mapped and read when a search first touches a page, instead of the
engine's default of reading every file into the page cache when the shard loads. The engine
preallocates its files (32 MiB per vector or payload store, 2–4 MiB per payload index, sparse
on disk), so a pre-warmed shard of a few hundred records held ~70 MiB of resident file pages,
nearly all of them the zeros of unwritten space; on demand it holds the pages it reads.
Shards written before keep their placement until a writer rewrites them.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Hashable, Mapping, Sequence
from datetime import date, timedelta
from pathlib import Path
from typing import Any

import numpy as np
import qdrant_edge as qe

from tansaku.errors import StorageError
from tansaku.records import Record
from tansaku.residency import release_file_pages
from tansaku.store.base import Bound, Filter, MetaCondition, payload_metadata
from tansaku.store.candidates import CandidateIndex
from tansaku.store.idtable import IdLog, IdTable, points, seal, table_problem
from tansaku.store.sparse import SparseVec

# payload keys every search may filter on: record id, document, field, the common metadata
INDEXED_KEYWORDS = ("rid", "doc_id", "field", "meta.source_type", "meta.store")
ENV_SEARCH_THREADS = "TANSAKU_SEARCH_THREADS"
DEFAULT_SEARCH_THREADS = 1
ON_DEMAND = qe.Memory.Cold
"""Memory placement of every structure of a new shard (see the module docstring)."""


def search_threads() -> int:
    """Threads of a shard's search pool: ``$TANSAKU_SEARCH_THREADS`` (1-64), else 1: the query
    runs in the caller's thread. More run the segments of one shard in parallel, but the engine
    holds the interpreter lock while it waits for them (docs/benchmarks.md: a query over the
    demo's reports 0.074 ms with two, 0.028 with one; at 100k chunks the same)."""
    raw = os.environ.get(ENV_SEARCH_THREADS, "").strip()
    if raw:
        if not raw.isdigit() or not 1 <= int(raw) <= 64:
            raise StorageError(f"{ENV_SEARCH_THREADS} は 1〜64 の整数にしてください(指定: {raw!r})")
        return int(raw)
    return DEFAULT_SEARCH_THREADS


def open_shard(
    path: Path,
    config: qe.EdgeConfig,
    keywords: Sequence[str] = INDEXED_KEYWORDS,
    *,
    read_only: bool = False,
) -> tuple[qe.EdgeShard, bool]:
    """Load the shard in ``path``, or create it with ``config`` (``wal_enabled=False``: a
    generation is written by one process and committed whole, see
    ``tansaku.backends.embedded.generations``)
    and the payload indexes (``tenant`` as the tenant key, ``keywords``, ``date_int``).
    ``read_only``: never create. Returns (shard, created)."""
    if (path / "edge_config.json").exists() or (path / "segments").exists():
        if read_only:  # a committed generation is never rewritten, not even its config
            return load_read_only(path), False
        return _load_writable(path, config), False
    if read_only:
        raise StorageError(f"{path} にデータがありません(`tansaku doctor` で確認してください)")
    path.mkdir(parents=True, exist_ok=True)
    shard = qe.EdgeShard.create(str(path), config)
    tenant = qe.KeywordIndexParams(is_tenant=True, memory=ON_DEMAND)
    shard.update(qe.UpdateOperation.create_field_index("tenant", tenant))
    for key in keywords:
        keyword = qe.KeywordIndexParams(memory=ON_DEMAND)
        shard.update(qe.UpdateOperation.create_field_index(key, keyword))
    day = qe.IntegerIndexParams(lookup=True, range=True, memory=ON_DEMAND)
    shard.update(qe.UpdateOperation.create_field_index("date_int", day))
    return shard, True


def load_read_only(path: Path) -> qe.EdgeShard:
    """Load a committed shard, then hand back the file pages the engine read while loading
    (:mod:`tansaku.residency`): searches read again the pages they touch."""
    shard = qe.EdgeShard.load(str(path))
    release_file_pages(path)
    return shard


def _load_writable(path: Path, config: qe.EdgeConfig) -> qe.EdgeShard:
    """Load a writer's shard with ``config`` (its search threads recorded from now on); a shard
    whose stored config differs from ``config`` (an older layout) is loaded as it is."""
    try:
        return qe.EdgeShard.load(str(path), config)
    except (ValueError, RuntimeError, OSError):
        return qe.EdgeShard.load(str(path))


def settle(path: Path) -> None:
    """Load and close a closed shard once: loading folds what the last writer left (journals,
    the config) into its files, after which loading changes nothing — the state in which
    readers in several processes may load it at once."""
    if (path / "edge_config.json").exists():
        qe.EdgeShard.load(str(path)).close()


def _date_int(value: Any) -> int | None:
    if not isinstance(value, str) or len(value) < 10:
        return None
    digits = value[:10].replace("-", "")
    return int(digits) if digits.isdigit() and len(digits) == 8 else None


def tenant_filter(tenant: str, flt: Filter | None = None) -> qe.Filter:
    """The tenant's condition and the :class:`Filter`'s, as one engine filter: every read of
    either shard goes through here, so no query can cross teams."""
    return qe.Filter(must=_conditions(tenant, flt))


def search_filter(tenant: str, flt: Filter | None, *, sole: bool) -> qe.Filter | None:
    """The filter of a search. When the holder knows every point of its shard is the tenant's
    (``sole``), the tenant condition matches everything and only slows the search down (dense
    HNSW search at 100k points: 3.1 → 2.2 ms), so it is left out; the holder then checks the
    tenant of every point it returns (:func:`owned`), so a stale "sole" costs results, never
    another team's records."""
    key = _plain_key(tenant, flt, sole)
    if key is not None and (kept := _PLAIN_FILTERS.get(key, _NOT_KEPT)) is not _NOT_KEPT:
        return kept  # one lookup: another thread may clear the dict between two
    must = _conditions(tenant, flt)[1:] if sole else _conditions(tenant, flt)
    built = qe.Filter(must=must) if must else None
    if key is not None:
        if len(_PLAIN_FILTERS) >= PLAIN_FILTERS_KEPT:
            _PLAIN_FILTERS.clear()
        _PLAIN_FILTERS[key] = built
    return built


PLAIN_FILTERS_KEPT = 1024
_PLAIN_FILTERS: dict[Hashable, Any] = {}
_NOT_KEPT = object()
"""Engine filters already built, by what they say. Building one is slow in the binding (a
``MatchAny`` condition ~16 µs: the match is tried as each kind in turn) and a search builds
four or five (its legs, its units, the documents its units may come from)."""


def _plain_key(tenant: str, flt: Filter | None, sole: bool) -> Hashable | None:
    """The cache key of a filter of fields, documents and dates only (values of one type
    each, so equal keys mean equal conditions); None for metadata conditions, whose values
    may be equal across types (``1 == True``) and are built each time."""
    if flt is None:
        return (tenant, sole)
    if flt.equals or flt.any_of or flt.where:
        return None
    return (tenant, sole, flt.fields, flt.doc_ids, flt.date_from, flt.date_to)


def owned(points: Sequence[Any], tenant: str) -> list[tuple[Any, dict[str, Any]]]:
    """(point, payload) of the points whose payload says they are the tenant's (every
    search's last check). Each payload is read once: the binding converts it into a new dict
    on every ``.payload`` access (~0.8 µs for three keys, more with text)."""
    out: list[tuple[Any, dict[str, Any]]] = []
    for p in points:
        payload = p.payload
        if payload and payload.get("tenant") == tenant:
            out.append((p, payload))
    return out


def _conditions(tenant: str, flt: Filter | None) -> list[Any]:
    must: list[Any] = [qe.FieldCondition("tenant", match=qe.MatchValue(tenant))]
    if flt is None:
        return must
    if flt.fields:
        must.append(qe.FieldCondition("field", match=qe.MatchAny(list(flt.fields))))
    if flt.doc_ids:
        must.append(qe.FieldCondition("doc_id", match=qe.MatchAny(list(flt.doc_ids))))
    for key, value in flt.equals.items():
        # the binding turns a Python bool into 1/0, which matches no stored bool: numpy's does
        flag: Any = np.bool_(value) if isinstance(value, bool) else value
        must.append(qe.FieldCondition(f"meta.{key}", match=qe.MatchValue(flag)))
    for key, values in flt.any_of.items():
        must.append(qe.FieldCondition(f"meta.{key}", match=qe.MatchAny(list(values))))
    if flt.date_from or flt.date_to:
        rng = qe.RangeFloat(
            gte=float(flt.date_from.strftime("%Y%m%d")) if flt.date_from else None,
            lte=float(flt.date_to.strftime("%Y%m%d")) if flt.date_to else None,
        )
        must.append(qe.FieldCondition("date_int", range=rng))
    must.extend(_meta_condition(cond) for cond in flt.where)
    return must


def _meta_condition(cond: MetaCondition) -> Any:
    """The engine condition of a typed metadata condition; values of several types (``cost``
    stored as an int in some records and as a string in others) become a ``should`` group."""
    if cond.bounds:
        return _meta_range(cond.key, cond.bounds)
    key = f"meta.{cond.key}"
    groups: list[Any] = []
    ints = [v for v in cond.values if isinstance(v, int) and not isinstance(v, bool)]
    strs = [v for v in cond.values if isinstance(v, str)]
    for same in (ints, strs):
        if same:
            match = qe.MatchValue(same[0]) if len(same) == 1 else qe.MatchAny(same)
            groups.append(qe.FieldCondition(key, match=match))
    for v in cond.values:
        if isinstance(v, bool):  # numpy's bool: see _conditions
            flag: Any = np.bool_(v)
            groups.append(qe.FieldCondition(key, match=qe.MatchValue(flag)))
        elif isinstance(v, float):  # any number equal to it, int or float
            groups.append(qe.FieldCondition(key, range=qe.RangeFloat(gte=v, lte=v)))
        elif isinstance(v, date):
            groups.append(_meta_range(cond.key, {"gte": v, "lte": v}))
    return groups[0] if len(groups) == 1 else qe.Filter(should=groups)


def _meta_range(key: str, bounds: Mapping[str, Bound]) -> Any:
    """Numbers compare as floats. Days compare on the indexed ``date_int`` for ``date``, and
    as datetimes of the ISO strings for other keys (a bound day covers all of that day)."""
    if not any(isinstance(v, date) for v in bounds.values()):
        nums = {name: float(v) for name, v in bounds.items() if not isinstance(v, date)}
        return qe.FieldCondition(f"meta.{key}", range=qe.RangeFloat(**nums))
    days = {name: v for name, v in bounds.items() if isinstance(v, date)}
    if key == "date":
        ints = {name: float(d.strftime("%Y%m%d")) for name, d in days.items()}
        return qe.FieldCondition("date_int", range=qe.RangeFloat(**ints))
    # a bound day covers the whole day: after d = from the start of d + 1, up to d = before it
    lower = [d + timedelta(days=int(n == "gt")) for n, d in days.items() if n in ("gte", "gt")]
    upper = [d + timedelta(days=int(n == "lte")) for n, d in days.items() if n in ("lte", "lt")]
    rng = qe.RangeDateTime(
        gte=max(lower).isoformat() if lower else None,
        lt=min(upper).isoformat() if upper else None,
    )
    return qe.FieldCondition(f"meta.{key}", range=rng)


def filter_payload(tenant: str, rec: Record) -> dict[str, Any]:
    """The payload every point of a record carries for filtering (tenant, ids, field, metadata
    and the date as an integer for range conditions)."""
    meta = payload_metadata(rec.metadata)
    payload: dict[str, Any] = {
        "tenant": tenant,
        "rid": rec.id,
        "doc_id": rec.doc_id,
        "field": rec.field,
        "meta": meta,
    }
    d = _date_int(meta.get("date"))
    if d is not None:
        payload["date_int"] = d
    return payload


def sparse_vector(vec: SparseVec) -> qe.SparseVector:
    """A sparse vector as the engine takes it."""
    return qe.SparseVector(list(vec.indices), list(vec.values))


class ShardOwner:
    """Lifecycle of a held shard, guarded by ``self._lock``: every use of ``self._shard`` holds
    the lock. A read-only holder's engine shard can be closed while idle (:meth:`idle_close`)
    and is loaded again by the next use, which then calls ``on_reopen``."""

    _lock: threading.RLock
    path: Path
    read_only: bool = False
    _engine: qe.EdgeShard | None = None
    _candidates: CandidateIndex  # what a candidate point is, and the id table behind it
    _idle: bool = False  # closed by idle_close: the next use loads it again
    on_reopen: Callable[[], None] | None = None

    @property
    def _shard(self) -> qe.EdgeShard:
        shard = self._engine
        if shard is not None:
            return shard
        with self._lock:
            if self._engine is None:
                if not self._idle:
                    raise StorageError(f"{self.path} のシャードは閉じられています")
                self._engine = load_read_only(self.path)
                self._idle = False
                self._candidates.table = IdTable.open(self.path)
                if self.on_reopen is not None:
                    self.on_reopen()
            return self._engine

    @_shard.setter
    def _shard(self, shard: qe.EdgeShard) -> None:
        self._engine = shard
        self._idle = False

    @property
    def is_open(self) -> bool:
        """Whether the engine shard is loaded (not closed, nor closed while idle)."""
        return self._engine is not None

    def optimize(self) -> None:
        """Build the indexes and merge segments (minutes per 100k points on 2 cores)."""
        with self._lock:
            self._shard.optimize()

    def flush(self) -> None:
        with self._lock:
            self._shard.flush()

    def idle_close(self) -> bool:
        """Close a read-only engine shard nobody is using right now (its lock is free), dropping
        what was cached from it; the next use loads it again. Returns whether it is closed now.
        A writer's shard is never closed this way."""
        if self.read_only is False or not self._lock.acquire(blocking=False):
            return False
        try:
            if self._engine is None:
                return True
            self._engine.close()
            self._engine = None
            self._idle = True
            self.forget_cached()
            self._candidates.table = None  # mapped again by the next use
            return True
        finally:
            self._lock.release()

    def forget_cached(self) -> None:
        """Drop what was cached from the engine shard (after :meth:`idle_close`)."""

    def _attach_ids(self, created: bool) -> None:
        """Right after the shard loads: a reader maps the generation's id table, a writer
        starts its log of changes from it (``tansaku.store.idtable``)."""
        table = IdTable.open(self.path)
        if self.read_only:
            self._candidates.table = table
        else:
            self._candidates.log = IdLog(table, fresh=created or points(self._shard) == 0)

    def ids_problem(self) -> str | None:
        """What is wrong with this generation's id table (``tansaku doctor``), or None."""
        with self._lock:
            return table_problem(self.path, self._shard, self._candidates.keys)

    def rebuild_ids(self) -> None:
        """A writer's: build the id table from the shard when it closes, whatever stands."""
        if self._candidates.log is not None:
            self._candidates.log = IdLog(None, fresh=False)

    def close(self) -> None:
        with self._lock:
            self._idle = False
            if self._engine is not None:
                if not self.read_only:
                    log = self._candidates.log
                    if log is not None:  # committed with the generation: written before
                        seal(self.path, self._engine, log, self._candidates.keys)
                        self._candidates.log = None
                    self._engine.flush()
                self._engine.close()
                self._engine = None


def sample_metadata(
    shard: qe.EdgeShard, tenant: str, keys: Sequence[str], limit: int
) -> dict[str, list[Any]]:
    """Stored values of metadata ``keys`` from up to ``limit`` of the tenant's points that have
    each key (every key of ``limit`` points without ``keys``); the caller holds the shard."""
    base = tenant_filter(tenant)
    out: dict[str, list[Any]] = {}
    if not keys:
        points, _ = shard.scroll(
            qe.ScrollRequest(
                limit=limit, filter=base, with_payload=qe.PayloadSelector.Include(["meta"])
            )
        )
        for p in points:
            for key, value in ((p.payload or {}).get("meta") or {}).items():
                out.setdefault(key, []).append(value)
        return out
    for key in keys:
        path = f"meta.{key}"
        points, _ = shard.scroll(
            qe.ScrollRequest(
                limit=limit,
                filter=qe.Filter(must=base.must, must_not=[qe.IsEmptyCondition(path)]),
                with_payload=qe.PayloadSelector.Include([path]),
            )
        )
        values = [((p.payload or {}).get("meta") or {}).get(key) for p in points]
        if values:
            out[key] = values
    return out

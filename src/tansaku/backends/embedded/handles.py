"""Engine handles: one per shard per process, opened once under a lock, shared by threads.

:class:`GenHandles` holds the record shard and the unit shard of one generation folder (see
``tansaku.backends.embedded.generations``), opened lazily under its lock — so the threads of an
expanded query never race to open the same shard. Read-only handles of committed generations live in
a process-wide registry: every :class:`~tansaku.client.Tansaku` of the process (and every thread)
shares them, counted by leases, and closes them when the last lease goes.

The engine shards of leased generations are bounded per process: at most
:func:`open_limit` generations keep their shards loaded (each shard holds a search thread pool
and the mapped pages of its segments). Opening one more closes the shards of the least recently
used generation that no search is using (:meth:`GenHandles.in_use`; a shard whose lock is held
is busy too); its handles, leases and pin stay, and its next read loads the shards again. When
every open generation is in use the bound is exceeded until one is free. The limit:
``set_open_limit``, else ``[server] open_collections`` of the workspace's ``tansaku.toml``
(:func:`configure`), else ``$TANSAKU_OPEN_COLLECTIONS``, else 8.
"""

from __future__ import annotations

import logging
import os
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Literal, TypeVar

from tansaku.backends.embedded.generations import READERS
from tansaku.backends.locks import ReaderPin
from tansaku.errors import ConfigError, StorageError
from tansaku.store.edge import EdgeStore
from tansaku.store.units import UnitStore
from tansaku.workspace import settings_table

log = logging.getLogger("tansaku.backends.embedded.handles")
ENV_OPEN = "TANSAKU_OPEN_COLLECTIONS"
DEFAULT_OPEN = 8
OPEN_RANGE = (1, 10_000)
S = TypeVar("S", EdgeStore, UnitStore)


class GenHandles:
    """The shards of one generation folder: the embedded backend's
    :class:`~tansaku.store.protocols.CollectionStorage`. Writable handles belong to one writer;
    read-only ones come from :func:`lease` and are shared."""

    def __init__(self, gen: Path, *, dim: int, writable: bool) -> None:
        self.gen = gen
        self.dim = dim
        self.writable = writable
        self.lock = threading.RLock()
        self._store: EdgeStore | None = None
        self._units: UnitStore | None = None
        self.units_created = False
        self.refs = 0
        self.active = 0  # searches using the shards now (never closed while > 0)
        self.pin: ReaderPin | None = None
        self.identity: tuple[int, int] | None = None
        """Which generation these handles read (:func:`_identity`; None: a writer's)."""

    def _shard(self, attr: Literal["_store", "_units"], open_: Callable[[bool], S]) -> S:
        """The shard held in ``attr``, opened by ``open_(read_only)`` on first use (under the
        lock); a reader's every use counts for the open-shard bound (:func:`_used`)."""
        with self.lock:
            shard: S | None = getattr(self, attr)
            opened = shard is None
            if shard is None:
                shard = open_(not self.writable)
                shard.on_reopen = self._reopened
                setattr(self, attr, shard)
        if not self.writable:
            _used(self, opened=opened)
        return shard

    def store(self) -> EdgeStore:
        return self._shard(
            "_store",
            lambda read_only: EdgeStore(self.gen / "shard", dim=self.dim, read_only=read_only),
        )

    def has_unit_index(self) -> bool:
        return self._units is not None or (self.gen / "units" / "edge_config.json").exists()

    def units(self) -> UnitStore:
        """The unit shard (created on first use by a writer; a reader of a generation without
        one gets :class:`~tansaku.errors.StorageError`)."""
        return self._shard("_units", self._open_units)

    def _open_units(self, read_only: bool) -> UnitStore:
        units = UnitStore(self.gen / "units", read_only=read_only)
        self.units_created = units.created
        return units

    def _reopened(self) -> None:
        """A shard closed while idle was loaded again by a read."""
        _used(self, opened=True)

    @contextmanager
    def in_use(self) -> Iterator[None]:
        """Hold the shards open for the block (a search): never closed to make room meanwhile."""
        with _REGISTRY_LOCK:
            self.active += 1
        try:
            yield
        finally:
            with _REGISTRY_LOCK:
                self.active -= 1

    def is_open(self) -> bool:
        """Whether an engine shard of this generation is loaded."""
        return any(s is not None and s.is_open for s in (self._store, self._units))

    def idle_close(self) -> bool:
        """Close the engine shards if no search uses them (see the module doc); the handles
        stay leased and load them again on the next read. Returns whether none is open now."""
        if self.active > 0:
            return False
        closed = True
        for shard in (self._store, self._units):
            if shard is not None and not shard.idle_close():
                closed = False
        return closed

    def close(self) -> None:
        with self.lock:
            for shard in (self._store, self._units):
                if shard is not None:
                    shard.close()
            self._store = self._units = None
            if self.pin is not None:
                self.pin.release()
                self.pin = None


_REGISTRY: dict[Path, GenHandles] = {}
_REGISTRY_LOCK = threading.RLock()
_OPEN: OrderedDict[Path, GenHandles] = OrderedDict()  # loaded shards, least recent first
_limit: int | None = None


def _check_limit(value: object, where: str) -> int:
    low, high = OPEN_RANGE
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise ConfigError(f"{where} は {low}〜{high:,} の整数にしてください(指定: {value!r})")
    return value


def set_open_limit(limit: int | None) -> None:
    """At most ``limit`` generations with loaded shards in this process (None: the default
    again); closes idle ones over the new limit now."""
    global _limit
    with _REGISTRY_LOCK:
        _limit = None if limit is None else _check_limit(limit, "開いておくコレクション数")
        _evict(None)


def open_limit() -> int:
    """The limit in force (``set_open_limit``, else ``$TANSAKU_OPEN_COLLECTIONS``, else 8)."""
    if _limit is not None:
        return _limit
    raw = os.environ.get(ENV_OPEN, "").strip()
    if not raw:
        return DEFAULT_OPEN
    value: object = int(raw) if raw.isdigit() else raw
    return _check_limit(value, ENV_OPEN)


def configure(home: Path) -> None:
    """Take the limit from ``[server] open_collections`` of ``<home>/tansaku.toml`` when set
    (a process opening several workspaces keeps the last one's)."""
    table = settings_table(home, "server")
    if not isinstance(table, dict) or "open_collections" not in table:
        return
    set_open_limit(_check_limit(table["open_collections"], "[server] の open_collections"))


def _used(h: GenHandles, *, opened: bool) -> None:
    """``h`` was read: most recently used now; a shard just loaded may close idle ones."""
    with _REGISTRY_LOCK:
        if h.gen in _OPEN:
            _OPEN.move_to_end(h.gen)
        elif opened and _REGISTRY.get(h.gen) is h:
            _OPEN[h.gen] = h
        else:
            return
        if opened:
            _evict(h)


def _evict(keep: GenHandles | None) -> None:
    """Close least recently used idle generations until the open ones fit the limit (the
    caller holds the registry lock; a busy shard is skipped, never waited for)."""
    over = len(_OPEN) - open_limit()
    for gen, h in list(_OPEN.items()):
        if over <= 0:
            return
        if h is keep:
            continue
        if h.idle_close():
            del _OPEN[gen]
            over -= 1
    if over > 0:
        log.debug("%d generations over the open limit are in use", over)


def lease(gen: Path, *, dim: int) -> GenHandles:
    """Shared read-only handles of a committed generation (+1 lease). Raises
    :class:`FileNotFoundError` when the generation was removed meanwhile (the caller reads
    ``CURRENT`` again)."""
    key = gen.resolve()
    with _REGISTRY_LOCK:
        h = _REGISTRY.get(key)
        if h is not None and h.identity != _identity(key):
            # the collection was deleted and made again under the same name by another
            # process: these handles read the old files; their holders keep them until they
            # release them, the next lease opens the new generation
            _REGISTRY.pop(key)
            _OPEN.pop(key, None)
            h = None
        if h is None:
            pin = ReaderPin(key / READERS)
            identity = _identity(key)
            if identity is None:  # removed between CURRENT and the pin
                pin.release()
                raise FileNotFoundError(key)
            h = GenHandles(key, dim=dim, writable=False)
            h.pin = pin
            h.identity = identity
            _REGISTRY[key] = h
        h.refs += 1
        return h


def _identity(gen: Path) -> tuple[int, int] | None:
    """Which generation ``gen`` holds: its statistics file's inode and mtime, written once at
    its commit (None: no such generation)."""
    try:
        st = os.stat(gen / "state.json")
    except FileNotFoundError:
        return None
    return (st.st_ino, st.st_mtime_ns)


def retain(h: GenHandles) -> None:
    """One more lease on handles already leased (a search holding the view it runs on)."""
    with _REGISTRY_LOCK:
        h.refs += 1


def release(h: GenHandles) -> None:
    """Give a lease back; the last one closes the handles."""
    with _REGISTRY_LOCK:
        h.refs -= 1
        if h.refs > 0:
            return
        if _REGISTRY.get(h.gen) is h:  # not handles a newer generation of the name replaced
            _REGISTRY.pop(h.gen)
            if _OPEN.get(h.gen) is h:
                _OPEN.pop(h.gen)
    h.close()


def open_count() -> int:
    """Generations this process has open (for tests and ``tansaku doctor``)."""
    with _REGISTRY_LOCK:
        return len(_REGISTRY)


def loaded_count() -> int:
    """Generations whose engine shards are loaded now (bounded by :func:`open_limit` while
    searches leave some idle)."""
    with _REGISTRY_LOCK:
        return sum(1 for h in _REGISTRY.values() if h.is_open())


__all__ = [
    "GenHandles",
    "StorageError",
    "configure",
    "lease",
    "loaded_count",
    "open_count",
    "open_limit",
    "release",
    "retain",
    "set_open_limit",
]

"""Engine handles: one per shard per process, opened once under a lock, shared by threads.

:class:`GenHandles` holds the record shard and the unit shard of one generation folder (see
``tansaku.backends.embedded.generations``), opened lazily under its lock — so the threads of an
expanded query never race to open the same shard. Read-only handles of committed generations live in
a process-wide registry: every :class:`~tansaku.client.Tansaku` of the process (and every thread)
shares them, counted by leases, and closes them when the last lease goes.
"""

from __future__ import annotations

import threading
from pathlib import Path

from tansaku.backends.embedded.generations import READERS
from tansaku.backends.locks import ReaderPin
from tansaku.errors import StorageError
from tansaku.store.edge import EdgeStore
from tansaku.store.units import UnitStore


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
        self.pin: ReaderPin | None = None

    def store(self) -> EdgeStore:
        with self.lock:
            if self._store is None:
                self._store = EdgeStore(
                    self.gen / "shard", dim=self.dim, read_only=not self.writable
                )
            return self._store

    def has_unit_index(self) -> bool:
        return self._units is not None or (self.gen / "units" / "edge_config.json").exists()

    def units(self) -> UnitStore:
        """The unit shard (created on first use by a writer; a reader of a generation without
        one gets :class:`~tansaku.errors.StorageError`)."""
        with self.lock:
            if self._units is None:
                self._units = UnitStore(self.gen / "units", read_only=not self.writable)
                self.units_created = self._units.created
            return self._units

    def close(self) -> None:
        with self.lock:
            if self._store is not None:
                self._store.close()
                self._store = None
            if self._units is not None:
                self._units.close()
                self._units = None
            if self.pin is not None:
                self.pin.release()
                self.pin = None


_REGISTRY: dict[Path, GenHandles] = {}
_REGISTRY_LOCK = threading.Lock()


def lease(gen: Path, *, dim: int) -> GenHandles:
    """Shared read-only handles of a committed generation (+1 lease). Raises
    :class:`FileNotFoundError` when the generation was removed meanwhile (the caller reads
    ``CURRENT`` again)."""
    key = gen.resolve()
    with _REGISTRY_LOCK:
        h = _REGISTRY.get(key)
        if h is None:
            pin = ReaderPin(key / READERS)
            if not (key / "state.json").is_file():  # removed between CURRENT and the pin
                pin.release()
                raise FileNotFoundError(key)
            h = GenHandles(key, dim=dim, writable=False)
            h.pin = pin
            _REGISTRY[key] = h
        h.refs += 1
        return h


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
        _REGISTRY.pop(h.gen, None)
    h.close()


def open_count() -> int:
    """Generations this process has open (for tests and ``tansaku doctor``)."""
    with _REGISTRY_LOCK:
        return len(_REGISTRY)


__all__ = ["GenHandles", "StorageError", "lease", "open_count", "release", "retain"]

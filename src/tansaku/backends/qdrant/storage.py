"""A collection's storage on a Qdrant server, as a writer or a view holds it: the record and
unit collections handed out through :class:`QdrantStorage` (the server backend's
:class:`~tansaku.store.protocols.CollectionStorage`), and, for a writer, the log of the teams it
has touched since its last commit — each team's first write marks the registry entry dirty
before it happens (see :mod:`tansaku.backends.qdrant.backend`).
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from typing import TYPE_CHECKING, Any, Protocol, TypeVar, cast

from tansaku.backends.qdrant.registry import Registry
from tansaku.collection import Collection
from tansaku.config import CollectionConfig
from tansaku.errors import StorageError
from tansaku.faults import crashpoint
from tansaku.store.qdrant.records import QdrantRecordStore
from tansaku.store.qdrant.units import QdrantUnitIndex

if TYPE_CHECKING:
    from tansaku.backends.qdrant.backend import QdrantBackend


class WriteLog:
    """The teams a writer touched since its last commit; the first write of a team marks the
    registry entry dirty (with the teams) before it happens."""

    def __init__(self, registry: Registry, name: str, config: CollectionConfig) -> None:
        self.registry = registry
        self.name = name
        self.config = config
        self.teams: set[str] = set()
        self._lock = threading.Lock()

    def touch(self, tenant: str) -> None:
        if tenant in self.teams:
            return
        with self._lock:
            if tenant in self.teams:
                return
            self.registry.mark_dirty(
                self.name, tuple(sorted(self.teams | {tenant})), config=self.config
            )
            self.teams.add(tenant)
            crashpoint("qdrant-dirty")

    def reset(self) -> None:
        with self._lock:
            self.teams.clear()


class _Logging(Protocol):
    write_log: WriteLog


W = TypeVar("W", bound=Callable[..., Any])


def _logged(write: W) -> W:
    """A store's write of a team that logs the team first (:meth:`WriteLog.touch`)."""

    @functools.wraps(write)
    def logged(self: _Logging, tenant: str, *args: Any, **kwargs: Any) -> Any:
        self.write_log.touch(tenant)
        return write(self, tenant, *args, **kwargs)

    return cast(W, logged)


class _LoggedRecords(QdrantRecordStore):
    """A writer's record store: every write of a team is logged first (:class:`WriteLog`)."""

    write_log: WriteLog
    upsert = _logged(QdrantRecordStore.upsert)
    delete = _logged(QdrantRecordStore.delete)
    delete_tenant = _logged(QdrantRecordStore.delete_tenant)
    update_sparse = _logged(QdrantRecordStore.update_sparse)


class _LoggedUnits(QdrantUnitIndex):
    """A writer's unit index: every write of a team is logged first (:class:`WriteLog`)."""

    write_log: WriteLog
    replace = _logged(QdrantUnitIndex.replace)
    delete = _logged(QdrantUnitIndex.delete)
    delete_tenant = _logged(QdrantUnitIndex.delete_tenant)


class QdrantStorage:
    """A collection's :class:`~tansaku.store.protocols.CollectionStorage` on the server: its
    record and unit collections, opened on first use. A writer's (``write_log`` given) logs
    each team before writing it and commits through its backend (:meth:`commit`)."""

    def __init__(
        self,
        backend: QdrantBackend,
        name: str,
        *,
        dim: int,
        write_log: WriteLog | None = None,
    ) -> None:
        self.backend = backend
        self.name = name
        self.dim = dim
        self.write_log = write_log
        self.writable = write_log is not None
        self.units_created = False
        self._lock = threading.RLock()
        self._store: QdrantRecordStore | None = None
        self._units: QdrantUnitIndex | None = None
        self._has_units = False

    def store(self) -> QdrantRecordStore:
        with self._lock:
            if self._store is None:
                b = self.backend
                if self.write_log is None:
                    self._store = QdrantRecordStore(
                        b.client, self.name, dim=self.dim, settings=b.settings, read_only=True
                    )
                else:
                    store = _LoggedRecords(b.client, self.name, dim=self.dim, settings=b.settings)
                    store.write_log = self.write_log
                    self._store = store
            return self._store

    def has_unit_index(self) -> bool:
        """Whether the unit collection exists (asked of the server until it does: a unit
        collection goes only with its whole collection)."""
        if self._units is None and not self._has_units:
            self._has_units = self.backend.has_units(self.name)
        return self._units is not None or self._has_units

    def units(self) -> QdrantUnitIndex:
        """The unit collection (created by a writer on first use, then ``units_created``; a
        reader of a collection without one gets :class:`~tansaku.errors.StorageError`)."""
        with self._lock:
            if self._units is None:
                b = self.backend
                existed = b.has_units(self.name)
                if self.write_log is None:
                    if not existed:
                        raise StorageError(
                            f"コレクション「{self.name}」には文単位の索引がありません"
                        )
                    self._units = QdrantUnitIndex(
                        b.client, self.name, settings=b.settings, read_only=True
                    )
                else:
                    units = _LoggedUnits(b.client, self.name, settings=b.settings)
                    units.write_log = self.write_log
                    self._units = units
                    self.units_created = units.created
            return self._units

    def in_use(self) -> AbstractContextManager[None]:
        """Nothing to hold: the server keeps its collections open."""
        return nullcontext()

    def commit(self, col: Collection, *, keep_writing: bool = False) -> None:
        """Publish the writer's statistics and config (``tansaku.backends.embedded.writer.commit``
        hands a collection stored here to this method). The records are already on the server."""
        if self.write_log is None:
            raise ValueError("commit needs a writer's collection")
        self.store()  # a collection's first commit creates its (empty) record collection
        self.backend.commit(col)
        if not keep_writing:
            self.close()

    def close(self) -> None:
        with self._lock:
            for part in (self._store, self._units):
                if part is not None:
                    part.close()
            self._store = None
            self._units = None


__all__ = ["QdrantStorage", "WriteLog"]

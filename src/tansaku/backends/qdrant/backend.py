"""The Qdrant server backend: collections in a Qdrant server (or qdrant-client's local mode).

Per tansaku collection, the server holds the records (``{prefix}{name}``), the sentence units
(``{prefix}{name}__units``) and one point of the registry (``{prefix}meta``, see
:mod:`tansaku.backends.qdrant.registry`) with the config and the committed statistics.

A server has no generations: what a writer writes is visible to searches as it is written, and
a commit publishes the statistics (``CollectionState``) and the config, bumping the version a
view depends on. Between commits a search sees the new records with the last commit's BM25
length statistics. So that a crash never leaves wrong statistics, the writer marks the entry
``dirty`` before its first write of each team and the commit clears it; a writer that finds it
set (a writer died, or failed, mid-write) first recounts the BM25 statistics from the records
(``RecordStore.lengths``) and the unit counts from the units (``UnitIndex.recount``), drops the
teams that writer touched from the teams whose units are complete (they are rebuilt by the
next ingest of the team), and commits that. A writer that fails with an exception does the same
at once (if the server still answers).

One writer per collection: the embedded backend's :class:`~tansaku.backends.locks.WriterLock` on a
lock file of this machine (keyed by server URL, prefix and collection). Writers on several machines
are not serialised by tansaku: a deployment runs one ingest worker per collection.
"""

from __future__ import annotations

import atexit
import hashlib
import logging
import os
import tempfile
import threading
import tomllib
from collections.abc import Hashable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tansaku.backends.locks import WaitFn, WriterLock
from tansaku.backends.qdrant.registry import Registry
from tansaku.backends.qdrant.storage import QdrantStorage, WriteLog
from tansaku.collection import Collection
from tansaku.collection.stats import CollectionState, recount_bm25
from tansaku.config import CollectionConfig
from tansaku.errors import CollectionNotFound, ConfigError, StorageError
from tansaku.faults import crashpoint
from tansaku.store.qdrant.records import DENSE, QdrantRecordStore
from tansaku.store.qdrant.settings import QdrantSettings, forget_shared_clients
from tansaku.store.qdrant.units import SUFFIX as UNITS
from tansaku.store.qdrant.units import QdrantUnitIndex
from tansaku.workspace import Workspace, validate_name

if TYPE_CHECKING:
    from qdrant_client import QdrantClient


log = logging.getLogger(__name__)

DEFAULT_DIM = 384
CONFIG_FILE = "tansaku.toml"


def _lock_dir(settings: QdrantSettings) -> Path:
    """Writer locks of one server on this machine (for an in-memory store: of this process)."""
    key = f"{settings.url}\x00{settings.prefix}"
    if settings.scheme == "qdrant+memory":
        key += f"\x00{os.getpid()}"
    digest = hashlib.blake2b(key.encode("utf-8"), digest_size=8).hexdigest()
    return Path(tempfile.gettempdir()) / "tansaku-qdrant-locks" / digest


_at_exit = threading.Lock()
_closing_at_exit = False


def _close_local_clients_at_exit() -> None:
    """Close the process's local-mode clients before the interpreter tears its modules down
    (else qdrant-client's own finaliser fails noisily on stderr at the end of every command)."""
    global _closing_at_exit
    with _at_exit:
        if not _closing_at_exit:
            atexit.register(forget_shared_clients)
            _closing_at_exit = True


class QdrantBackend:
    """Collections in a Qdrant server: the :class:`tansaku.backends.Backend` of its URLs."""

    name = "qdrant"

    def __init__(self, settings: QdrantSettings, workspace: Workspace) -> None:
        self.settings = settings
        self.workspace = workspace
        try:
            self.client: QdrantClient = settings.client()
        except RuntimeError as exc:  # local mode: the folder is another client's
            if "already accessed" not in str(exc):
                raise
            raise StorageError(
                f"Qdrant のローカルストア {settings.url} は別のプロセスが使用中です。"
                "同時に使うには Qdrant サーバーを使ってください"
                f"({exc})"
            ) from None
        if settings.is_local:
            _close_local_clients_at_exit()
        self.registry = Registry(self.client, settings.prefix)
        self.locks = _lock_dir(settings)

    # -- reading ------------------------------------------------------------------------
    def _missing(self, collection: str) -> CollectionNotFound:
        return CollectionNotFound(collection, self.names())

    def fingerprint(self, collection: str) -> Hashable:
        found = self.registry.fingerprint(validate_name(collection))
        if found is None:
            raise self._missing(collection)
        return found

    def has_records(self, collection: str) -> bool:
        qname = self.settings.collection_name(collection)
        return bool(self.client.collection_exists(qname))

    def stored_dim(self, collection: str) -> int | None:
        """The dense size of the collection's records as created (None: none yet)."""
        if not self.has_records(collection):
            return None
        info = self.client.get_collection(self.settings.collection_name(collection))
        vectors = info.config.params.vectors
        params = vectors.get(DENSE) if isinstance(vectors, dict) else None
        return int(params.size) if params is not None else None

    def has_units(self, collection: str) -> bool:
        qname = self.settings.collection_name(collection, UNITS)
        return bool(self.client.collection_exists(qname))

    def open_view(self, collection: str) -> Collection:
        entry = self.registry.read(validate_name(collection))
        if entry is None:
            raise self._missing(collection)
        path = self.workspace.collection_dir(collection)
        if not self.has_records(collection):
            return Collection(path, entry.config, entry.state)
        dim = entry.state.dim or self.stored_dim(collection) or DEFAULT_DIM
        storage = QdrantStorage(self, collection, dim=dim)
        return Collection(path, entry.config, entry.state, storage)

    def names(self) -> list[str]:
        return self.registry.names()

    def exists(self, collection: str) -> bool:
        return self.registry.fingerprint(validate_name(collection)) is not None

    # -- writing ------------------------------------------------------------------------
    def _lock(self, collection: str, *, on_wait: WaitFn | None = None) -> WriterLock:
        what = f"コレクション「{collection}」"
        return WriterLock(self.locks / f"{collection}.lock", what, on_wait=on_wait)

    @contextmanager
    def writing(
        self,
        collection: str,
        *,
        config: CollectionConfig | None = None,
        embedder: tuple[str, int] | None = None,
        on_wait: WaitFn | None = None,
        lazy: bool = False,
    ) -> Iterator[Collection]:
        """The collection opened for writing (registered if new); its statistics and config
        committed when the block ends without an exception. A dirty entry is repaired first.
        ``lazy``: writable from :meth:`Collection.begin_write` on (the records are written in
        place either way: ``lazy`` only keeps a writer that changes nothing from creating the
        unit collection)."""
        validate_name(collection)
        with self._lock(collection, on_wait=on_wait):
            entry = self.registry.read(collection)
            cfg = config or (entry.config if entry else CollectionConfig(name=collection))
            state = entry.state if entry else CollectionState()
            if entry is not None and entry.dirty:
                state = self.repair(collection, entry.config, state, set(entry.teams))
            if embedder is not None and not state.embedder:
                state = replace(state, embedder=embedder[0], dim=embedder[1])
            col = self._open_writer(collection, cfg, state, lazy=lazy)
            try:
                yield col
            except Exception:
                self._after_failure(col, entry.config if entry else cfg)
                raise
            except BaseException:
                col.close()
                raise
            if col.writable:
                assert isinstance(col.handles, QdrantStorage)
                col.handles.commit(col)
            elif entry is None or entry.config != col.config:  # registered, or config changed
                self.registry.commit(collection, col.config, entry.state if entry else state)

    def _open_writer(
        self, collection: str, config: CollectionConfig, state: CollectionState, *, lazy: bool
    ) -> Collection:
        path = self.workspace.collection_dir(collection)
        dim = state.dim or self.stored_dim(collection) or DEFAULT_DIM
        log = WriteLog(self.registry, collection, config)

        def start() -> QdrantStorage:
            return QdrantStorage(self, collection, dim=dim, write_log=log)

        if not lazy or not self.has_records(collection):
            return Collection(path, config, state, start())
        col = Collection(path, config, state, QdrantStorage(self, collection, dim=dim))
        col.start_writing = start
        return col

    def commit(self, col: Collection) -> int:
        """Publish ``col``'s config and statistics (the records are already written);
        returns the new version."""
        storage = col.handles
        if not isinstance(storage, QdrantStorage) or storage.write_log is None:
            raise ValueError("commit needs a writer's collection")
        with col.lock:
            crashpoint("qdrant-commit")
            version = self.registry.commit(col.name, col.config, col.state)
            storage.write_log.reset()
        return version

    def _after_failure(self, col: Collection, config: CollectionConfig) -> None:
        """A writer failed: what it wrote stays (a server has no rollback), so recount the
        statistics now; if the server does not answer, the dirty entry waits for the next
        writer."""
        storage = col.handles
        col.close()
        if not isinstance(storage, QdrantStorage) or storage.write_log is None:
            return
        if not storage.write_log.teams:
            return  # nothing written since the last commit
        try:
            self.repair(col.name, config, col.state, set(storage.write_log.teams))
        except Exception:
            log.exception("could not repair collection %s after a failed write", col.name)

    def repair(
        self,
        collection: str,
        config: CollectionConfig,
        state: CollectionState,
        teams: set[str],
    ) -> CollectionState:
        """The statistics of what is stored, committed: BM25 lengths recounted from the
        records, unit counts from the units, and ``teams`` (those a writer touched) no longer
        counted as having complete units."""
        log.warning("collection %s: a writer stopped mid-write; recounting", collection)
        fixed = replace(state, units=set(state.units))
        dim = self.stored_dim(collection) or state.dim or DEFAULT_DIM
        if not fixed.dim and self.has_records(collection):
            fixed.dim = dim  # a first writer died before its first commit recorded it
        if self.has_records(collection):
            store = QdrantRecordStore(self.client, collection, dim=dim, settings=self.settings)
            try:
                fixed.bm25 = recount_bm25(store.lengths(), state)
            finally:
                store.close()
        else:
            fixed.bm25 = {}
        if self.has_units(collection):
            units = QdrantUnitIndex(self.client, collection, settings=self.settings)
            try:
                units.recount()
                counts = units.unit_counts(from_shard=False)
            finally:
                units.close()
            with_units = {team for (team, _), n in counts.items() if n > 0}
            fixed.units = {t for t in fixed.units if t in with_units and t not in teams}
        else:
            fixed.units = set()
        self.registry.commit(collection, config, fixed)
        return fixed

    def remove(self, collection: str) -> None:
        """Delete the collection: unregistered first (gone for every client at once), then
        its record and unit collections dropped."""
        validate_name(collection)
        with self._lock(collection):
            self.registry.remove(collection)
            for suffix in ("", UNITS):
                qname = self.settings.collection_name(collection, suffix)
                if self.client.collection_exists(qname):
                    self.client.delete_collection(qname)


def workspace_settings(
    workspace: Workspace, *, url: str | None = None, api_key: str | None = None
) -> QdrantSettings:
    """The settings of ``url`` (else ``$TANSAKU_QDRANT_URL``, else ``[qdrant] url``) with the
    ``[qdrant]`` table of the workspace's ``tansaku.toml``."""
    return QdrantSettings.from_config(read_home_config(workspace), url=url, api_key=api_key)


def read_home_config(workspace: Workspace) -> Mapping[str, Any]:
    """The workspace's ``tansaku.toml`` as parsed (empty when there is none)."""
    path = workspace.home / CONFIG_FILE
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path} の TOML が不正です: {exc}") from None


def open_backend(url: str, workspace: Workspace, *, api_key: str | None = None) -> QdrantBackend:
    """The backend of a Qdrant URL, with the workspace's ``[qdrant]`` settings."""
    return QdrantBackend(workspace_settings(workspace, url=url, api_key=api_key), workspace)


__all__ = ["QdrantBackend", "QdrantStorage", "open_backend", "workspace_settings"]

"""The library's front door: ``tansaku.connect()`` opens a workspace and picks its backend.

>>> ts = tansaku.connect()                      # ./.tansaku or $TANSAKU_HOME, embedded store
>>> ts.ingest(["examples/notes"], collection="notes")
>>> ts.search("シリカ薄膜の焼成温度", collection="notes").hits[0].doc_id
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar, Unpack

from tansaku.backends import (
    Backend,
    WriterOptions,
    backend_for,
    configured_url,
    is_url,
    workspace_home,
)
from tansaku.backends.embedded.views import CollectionInfo, info_of, list_infos
from tansaku.backends.embedded.writer import commit
from tansaku.backends.locks import WaitFn
from tansaku.collection import Collection, CollectionState
from tansaku.config import AxisMode, CollectionConfig
from tansaku.embed.base import Embedder
from tansaku.embed.cache import CachedEmbedder
from tansaku.errors import CollectionNotFound, ConfigError, TansakuError, WorkspaceNotFound
from tansaku.records import Record
from tansaku.search.engine import search as run_search
from tansaku.search.events import SearchEventLog
from tansaku.search.services import SearchServices
from tansaku.search.types import SearchRequest, SearchResult
from tansaku.store.base import Filter
from tansaku.workspace import DEFAULT_TEAM, Workspace, validate_name

if TYPE_CHECKING:  # ingesting imports the loaders; searching needs none of them
    from tansaku.ingest.loaders.settings import IngestLimits
    from tansaku.ingest.pipeline import IngestReport, ProgressFn

SearchRunner = Callable[[SearchRequest], SearchResult]
"""Runs one search elsewhere (:meth:`Tansaku.run_searches_with`)."""
T = TypeVar("T")
VIEWS = 256  # views kept per client; their engine shards are bounded apart (open_collections)


class Tansaku:
    """One workspace: collections, the shared embedder and its cache.

    Searches read the committed generation of each collection and move to a newer one between
    searches; writes (ingest, delete) take the collection's writer lock and commit a new
    generation (``tansaku.backends.embedded.generations``). Any number of threads and
    processes may search while one process writes. Collections live in ``backend`` (default:
    the embedded store of the workspace folder, see ``tansaku.backends``)."""

    def __init__(
        self,
        home: str | Path | None = None,
        *,
        embedder: Embedder | None = None,
        create: bool = True,
        backend: Backend | None = None,
    ) -> None:
        ws = Workspace.from_env(home)
        if create:
            ws.ensure()
        elif not ws.home.is_dir():
            raise WorkspaceNotFound(str(ws.home))
        self.workspace = ws
        self.backend: Backend = backend or backend_for(None, ws)
        self._inner_embedder = embedder
        self._embedder: CachedEmbedder | None = None
        # views of recent collections (a view whose shards were closed holds a file lock)
        self._views: OrderedDict[str, tuple[Any, Collection]] = OrderedDict()
        self._lock = threading.RLock()
        self.events = SearchEventLog(self.workspace.logs_dir / "search_events.jsonl")
        self._services = SearchServices(events=self.events)
        self._runner: SearchRunner | None = None

    # -- plumbing -----------------------------------------------------------------------
    @property
    def embedder(self) -> CachedEmbedder:
        with self._lock:
            if self._embedder is None:
                inner = self._inner_embedder
                if inner is None:
                    from tansaku.embed import default_embedder

                    inner = default_embedder()
                self._embedder = CachedEmbedder(
                    inner, self.workspace.cache_dir / "embeddings.sqlite"
                )
            return self._embedder

    def close(self) -> None:
        with self._lock:
            self._views.clear()  # a view nobody else holds releases its generation now
            if self._embedder is not None:
                self._embedder.close()
                self._embedder = None
            self._services = replace(self._services, embedder=None)
            self.events.close()

    def __enter__(self) -> Tansaku:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- collections --------------------------------------------------------------------
    def collection(self, name: str) -> Collection:
        """A read-only view of the collection's last commit (a newer commit gives a new view
        at the next call; the previous one stays usable until then)."""
        with self._lock:
            key = self.backend.fingerprint(name)
            cached = self._views.get(name)
            if cached is not None and cached[0] == key:
                self._views.move_to_end(name)
                return cached[1]
            view = self.backend.open_view(name)
            self._views[name] = (key, view)  # a commit meanwhile: reopened at the next call
            self._views.move_to_end(name)
            while len(self._views) > VIEWS:  # a view nobody holds lets its generation go
                self._views.popitem(last=False)
            return view

    @contextmanager
    def reading(self, name: str) -> Iterator[Collection]:
        """The current view, held for the block even if a writer commits meanwhile, its
        storage kept open until the block ends."""
        with self.collection(name).in_use() as col:
            yield col

    def has_collection(self, name: str) -> bool:
        return self.backend.exists(name)

    def create_collection(
        self, config: CollectionConfig, *, exist_ok: bool = True, replace_config: bool = False
    ) -> Collection:
        """Create a collection, or open it if it exists (updating its config if asked)."""
        name = validate_name(config.name)
        if self.has_collection(name):
            if not exist_ok:
                raise ConfigError(f"コレクション「{name}」は既にあります")
            if not replace_config or self.collection(name).config == config:
                return self.collection(name)
        with self.writing(name, config=config, lazy=True):
            pass
        return self.collection(name)

    @contextmanager
    def writing(self, name: str, **options: Unpack[WriterOptions]) -> Iterator[Collection]:
        """The collection opened for writing (created if needed; ``options``:
        :class:`~tansaku.backends.WriterOptions`); committed when the block ends without an
        exception, discarded otherwise. One writer per collection across processes: a second
        one waits (``on_wait`` is told), then fails with CollectionBusy. ``lazy``: the block
        calls ``col.begin_write()`` before its first change (see
        ``tansaku.backends.embedded.writer``)."""
        validate_name(name)
        self.workspace.ensure()
        emb = None
        if not self.has_collection(name) or not _state_has_embedder(self, name):
            emb = (self.embedder.name, self.embedder.dim)
        with self._lock:  # our own view would keep the generation it reads from removal
            self._views.pop(name, None)
        with self.backend.writing(name, embedder=emb, **options) as col:
            yield col

    def checkpoint(self, col: Collection) -> None:
        """Publish what the writer ``col`` (of :meth:`writing`) wrote so far and go on writing
        (a long ingest's checkpoint: readers see it, a crash after it keeps it)."""
        commit(col, keep_writing=True)

    def delete_collection(self, name: str, *, team: str | None = None) -> None:
        """Delete a collection, or only ``team``'s records in it (a new generation)."""
        validate_name(name)
        if not self.has_collection(name):
            raise CollectionNotFound(name, self.backend.names())
        if team is not None:
            validate_name(team, "チーム名")
            with self.writing(name) as col:
                col.drop_tenant(team)
            return
        with self._lock:
            self._views.pop(name, None)
        self.backend.remove(name)

    def collections(self, only: str | None = None) -> list[CollectionInfo]:
        """Every collection's info (``only``: that one's, if it exists); one that another
        process removes meanwhile is left out."""
        if only is None:
            names = self.backend.names()
        else:  # every search asks for its collection: no listing of the others
            try:
                names = [only] if self.backend.exists(only) else []
            except ConfigError:  # not a collection name (a path, blanks): no such collection
                names = []
        return self.each_collection(names, lambda name: info_of(name, self.collection(name)))

    def each_collection(self, names: Iterable[str], read: Callable[[str], T]) -> list[T]:
        """``read(name)`` of each of ``names``, leaving out a collection another process
        removes meanwhile."""
        return list_infos(names, read, self.backend.exists)

    # -- ingest -------------------------------------------------------------------------
    @property
    def ingest_limits(self) -> IngestLimits:
        """What one file may cost in this workspace: ``[ingest]`` of its ``tansaku.toml`` (read
        at every ingest; see ``tansaku.ingest.limits``)."""
        from tansaku.ingest.limits import workspace_limits

        return workspace_limits(self.workspace.home)

    def _preview(self, collection: str, config: CollectionConfig | None) -> Collection:
        """The collection as a dry run sees it: nothing is created or written."""
        if self.has_collection(collection):
            col = self.collection(collection)
            return col if config is None else col.with_config(config)
        cfg = config or CollectionConfig(name=collection)
        return Collection(self.workspace.collection_dir(collection), cfg, CollectionState())

    def ingest(
        self,
        paths: Sequence[str | Path],
        *,
        collection: str,
        team: str = DEFAULT_TEAM,
        config: CollectionConfig | str | Path | None = None,
        sync: bool = False,
        dry_run: bool = False,
        progress: ProgressFn | None = None,
        on_wait: WaitFn | None = None,
        follow_symlinks: bool = False,
    ) -> IngestReport:
        """Load files/folders into ``collection`` for ``team``; see :class:`IngestReport`.
        Only regular files inside the given folders are read (``follow_symlinks`` also follows
        links that leave them); the source files are read before the writer lock is taken."""
        from tansaku.ingest.pipeline import collection_config, load_sources, sync_roots_of

        cfg = collection_config(collection, config, team)
        limits = self.ingest_limits
        records, failures = load_sources(  # missing paths are reported there
            paths,
            self._preview(collection, cfg),  # not held while writing: a view keeps its generation
            follow_symlinks=follow_symlinks,
            progress=progress,
            limits=limits,
        )
        opts = {"sync_roots": sync_roots_of(paths) if sync else None, "failures": failures}
        return self._write(records, collection, cfg, team, dry_run, on_wait, progress, **opts)

    def ingest_records(
        self,
        records: Iterable[Record],
        *,
        collection: str,
        team: str = DEFAULT_TEAM,
        config: CollectionConfig | None = None,
        sync: bool = False,
        dry_run: bool = False,
        progress: ProgressFn | None = None,
        on_wait: WaitFn | None = None,
    ) -> IngestReport:
        """Ingest records you built yourself; ``sync`` makes the collection mirror them."""
        from tansaku.ingest.pipeline import collection_config

        cfg = collection_config(collection, config, team)
        return self._write(
            records, collection, cfg, team, dry_run, on_wait, progress, sync_all=sync
        )

    def _write(
        self,
        records: Iterable[Record],
        collection: str,
        cfg: CollectionConfig | None,
        team: str,
        dry_run: bool,
        on_wait: WaitFn | None,
        progress: ProgressFn | None,
        **options: Any,
    ) -> IngestReport:
        """``records`` planned against the collection and applied by one writer, or only
        planned (``dry_run``: nothing is created or written); ``options`` of
        :func:`tansaku.ingest.pipeline.ingest_records`."""
        from tansaku.ingest.bulk import write_records
        from tansaku.ingest.pipeline import ingest_records

        if dry_run:
            preview = self._preview(collection, cfg)
            return ingest_records(preview, records, None, tenant=team, dry_run=True, **options)
        return write_records(self, collection, cfg, records, team, on_wait, progress, **options)

    # -- search -------------------------------------------------------------------------
    def search(
        self,
        query: str,
        *,
        collection: str,
        team: str = DEFAULT_TEAM,
        top_k: int | None = None,
        filter: Filter | None = None,
        **options: Any,
    ) -> SearchResult:
        """Hybrid search; ``options`` are :class:`SearchRequest` fields (axes, fusion, ...)."""
        request = SearchRequest(
            query=query,
            collection=collection,
            tenant=team,
            top_k=top_k,
            filter=filter or Filter(),
            **options,
        )
        return self.run(request)

    @property
    def services(self) -> SearchServices:
        """Classifier, expander, reranker and event log used by every search of this client:
        a frozen object, replaced whole (never changed in place, so a search running in
        another thread keeps the one it started with). Plug in an LLM expander or a reranker
        with :meth:`with_services` (``ts.with_services(expander=MyExpander())``) or assign a
        new one (``ts.services = replace(ts.services, reranker=r)``)."""
        with self._lock:
            return self._services

    @services.setter
    def services(self, services: SearchServices) -> None:
        with self._lock:
            self._services = services

    def with_services(self, **changes: Any) -> SearchServices:
        """Replace parts of :attr:`services` (``expander=``, ``classifier=``, ``reranker=``,
        ``events=``, ``embedder=``) in one atomic swap; returns the new services."""
        with self._lock:
            self._services = replace(self.services, **changes)
            return self._services

    def _services_for(self, col: Collection, request: SearchRequest) -> SearchServices:
        services = self.services
        dense = any(a.mode is AxisMode.DENSE for a in request.axes or col.config.axes)
        if services.embedder is not None or not dense:
            return services
        embedder = self.embedder  # loads the model: outside any swap of the services
        with self._lock:
            current = self._services
            if current.embedder is None:
                self._services = current = replace(current, embedder=embedder)
            return current

    def run(self, request: SearchRequest) -> SearchResult:
        runner = self._runner
        if runner is not None:
            result = runner(request)
            if (events := self.services.events) is not None:
                events.emit(result)
            return result
        with self.reading(request.collection) as col:
            return run_search(col, request, self._services_for(col, request))

    def run_searches_with(self, runner: SearchRunner | None) -> None:
        """Hand every search of this client (:meth:`search`, :meth:`run`, the agent's tools)
        to ``runner`` — a server's search processes (``tansaku.server.search_processes``), each
        searching this workspace with a client of its own — and emit its result to this
        client's event log as a search here would; ``None``: search in this process again."""
        self._runner = runner


def _state_has_embedder(ts: Tansaku, name: str) -> bool:
    try:
        return bool(ts.collection(name).state.embedder)
    except TansakuError:
        return False


def connect(
    target: str | Path | None = None,
    *,
    embedder: Embedder | None = None,
    create: bool = True,
    api_key: str | None = None,
) -> Tansaku:
    """Open the workspace at ``target`` / ``$TANSAKU_HOME`` / ``./.tansaku``, creating it
    unless ``create=False`` (then a missing folder raises
    :class:`~tansaku.errors.WorkspaceNotFound`: read commands never create a workspace).

    ``target`` picks the backend (``tansaku.backends``): a folder keeps the collections in it
    (the embedded store), unless ``$TANSAKU_QDRANT_URL`` or ``[qdrant] url`` of the folder's
    ``tansaku.toml`` names a Qdrant server; a URL (``http://host:6333``,
    ``qdrant+local:///abs/dir``) names a server backend registered for its scheme, with the
    local workspace of ``$TANSAKU_HOME`` for caches and logs. With a server, the local
    workspace holds only caches, logs and tables and is created when missing. ``api_key``:
    the server's (else ``$TANSAKU_QDRANT_API_KEY``; never from a file).

    ``embedder``: None → the workspace's configured one (``[embedder]`` in ``tansaku.toml``,
    ``TANSAKU_EMBED*``; :func:`tansaku.embed.config.load_embedder`), else the bundled model."""
    home = workspace_home(target)
    url = str(target) if is_url(target) else configured_url(Workspace.from_env(home))
    if embedder is None:
        from tansaku.embed.config import load_embedder

        embedder = load_embedder(home)
    ts = Tansaku(home, embedder=embedder, create=create or url is not None)
    if url is not None:
        try:
            ts.backend = backend_for(url, ts.workspace, api_key=api_key)
        except BaseException:
            ts.close()
            raise
    return ts


__all__ = ["CollectionInfo", "CollectionNotFound", "Tansaku", "connect"]

"""The library's front door: ``tansaku.connect()`` opens a workspace.

>>> ts = tansaku.connect()                      # ./.tansaku or $TANSAKU_HOME
>>> ts.ingest(["examples/notes"], collection="notes")
>>> ts.search("シリカ薄膜の焼成温度", collection="notes").hits[0].doc_id
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tansaku.collection import Collection, CollectionState
from tansaku.config import AxisMode, CollectionConfig, load_config
from tansaku.embed.base import Embedder
from tansaku.embed.cache import CachedEmbedder
from tansaku.errors import CollectionNotFound
from tansaku.ingest.pipeline import (
    IngestReport,
    ProgressFn,
    ingest_records,
    load_sources,
)
from tansaku.records import Record
from tansaku.search.engine import SearchServices
from tansaku.search.engine import search as run_search
from tansaku.search.events import SearchEventLog
from tansaku.search.types import SearchRequest, SearchResult
from tansaku.store.base import Filter
from tansaku.workspace import DEFAULT_TEAM, Workspace, validate_name


@dataclass(frozen=True)
class CollectionInfo:
    name: str
    description: str
    source_type: str
    points: int
    teams: tuple[str, ...]
    axes: tuple[str, ...]


class Tansaku:
    """One workspace: collections, the shared embedder and its cache."""

    def __init__(self, home: str | Path | None = None, *, embedder: Embedder | None = None):
        self.workspace = Workspace.from_env(home).ensure()
        self._inner_embedder = embedder
        self._embedder: CachedEmbedder | None = None
        self._collections: dict[str, Collection] = {}
        self._lock = threading.RLock()
        self.events = SearchEventLog(self.workspace.logs_dir / "search_events.jsonl")
        self._services: SearchServices | None = None

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
            for col in self._collections.values():
                col.close()
            self._collections.clear()
            if self._embedder is not None:
                self._embedder.close()
                self._embedder = None
            if self._services is not None:
                self._services.embedder = None
            self.events.close()

    def __enter__(self) -> Tansaku:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- collections --------------------------------------------------------------------
    def collection(self, name: str) -> Collection:
        with self._lock:
            if name not in self._collections:
                self._collections[name] = Collection.open(self.workspace, name)
            return self._collections[name]

    def has_collection(self, name: str) -> bool:
        return (self.workspace.collection_dir(name) / "config.toml").is_file()

    def create_collection(
        self, config: CollectionConfig, *, exist_ok: bool = True, replace_config: bool = False
    ) -> Collection:
        """Create a collection, or open it if it exists (updating its config if asked)."""
        with self._lock:
            if self.has_collection(config.name):
                if not exist_ok:
                    from tansaku.errors import ConfigError

                    raise ConfigError(f"コレクション「{config.name}」は既にあります")
                col = self.collection(config.name)
                if replace_config and col.config != config:
                    col.update_config(config)
                return col
            col = Collection.create(
                self.workspace, config, embedder_name=self.embedder.name, dim=self.embedder.dim
            )
            self._collections[config.name] = col
            return col

    def collections(self) -> list[CollectionInfo]:
        out = []
        for name in self.workspace.collection_names():
            col = self.collection(name)
            teams = tuple(sorted(col.state.bm25))
            out.append(
                CollectionInfo(
                    name=name,
                    description=col.config.description,
                    source_type=col.config.source_type,
                    points=col.store.total(),
                    teams=teams,
                    axes=tuple(f"{a.name}({a.mode.value})" for a in col.config.axes),
                )
            )
        return out

    # -- ingest -------------------------------------------------------------------------
    def _ensure(self, collection: str, config: CollectionConfig | str | Path | None) -> Collection:
        validate_name(collection)
        if isinstance(config, str | Path):
            config = load_config(config, name=collection)
        if config is not None:
            return self.create_collection(config.with_name(collection), replace_config=True)
        if self.has_collection(collection):
            return self.collection(collection)
        return self.create_collection(CollectionConfig(name=collection))

    def _preview(self, collection: str, config: CollectionConfig | str | Path | None) -> Collection:
        """The collection as a dry run sees it: nothing is created or written."""
        validate_name(collection)
        if isinstance(config, str | Path):
            config = load_config(config, name=collection)
        if self.has_collection(collection):
            col = self.collection(collection)
            if config is None:
                return col
            preview = Collection(col.path, config.with_name(collection), col.state)
            preview._store = col.store
            return preview
        cfg = config.with_name(collection) if config else CollectionConfig(name=collection)
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
    ) -> IngestReport:
        """Load files/folders into ``collection`` for ``team``; see :class:`IngestReport`."""
        validate_name(team, "チーム名")
        col = self._preview(collection, config) if dry_run else self._ensure(collection, config)
        records, failures = load_sources(paths, col)  # missing paths are reported there
        return ingest_records(
            col,
            records,
            self.embedder if col.needs_dense else None,
            tenant=team,
            sync_roots=[Path(p) for p in paths if Path(p).exists()] if sync else None,
            dry_run=dry_run,
            failures=failures,
            progress=progress,
        )

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
    ) -> IngestReport:
        """Ingest records you built yourself; ``sync`` makes the collection mirror them."""
        validate_name(team, "チーム名")
        col = self._ensure(collection, config)
        return ingest_records(
            col,
            records,
            self.embedder if col.needs_dense else None,
            tenant=team,
            sync_all=sync,
            dry_run=dry_run,
            progress=progress,
        )

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
        """Classifier, expander, reranker and event log used by every search of this client.

        Replace parts to plug in an LLM expander or a reranker:
        ``ts.services.expander = MyExpander()``.
        """
        with self._lock:
            if self._services is None:
                self._services = SearchServices(events=self.events)
            return self._services

    def run(self, request: SearchRequest) -> SearchResult:
        col = self.collection(request.collection)
        services = self.services
        if services.embedder is None and _dense(col, request):
            services.embedder = self.embedder
        return run_search(col, request, services)


def _dense(col: Collection, request: SearchRequest) -> bool:
    axes = request.axes or col.config.axes
    return any(a.mode is AxisMode.DENSE for a in axes)


def connect(home: str | Path | None = None, *, embedder: Embedder | None = None) -> Tansaku:
    """Open (creating if needed) the workspace at ``home`` / ``$TANSAKU_HOME`` / ``./.tansaku``."""
    return Tansaku(home, embedder=embedder)


__all__ = ["CollectionInfo", "CollectionNotFound", "Tansaku", "connect"]

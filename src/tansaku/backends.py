"""Backends: where a workspace's collections live, picked by ``tansaku.connect(path | url)``.

A backend opens collections — read-only views of the last commit, writers that commit — and
hands each :class:`~tansaku.collection.Collection` its storage
(:class:`~tansaku.store.protocols.CollectionStorage`); the collection never builds one. The
embedded default keeps every collection in the workspace folder as generations of qdrant-edge
shards (``tansaku.generations``). The workspace folder (embedding cache, logs, tables) is local
whatever the backend.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import Protocol
from urllib.parse import urlparse

from tansaku import views
from tansaku.collection import Collection
from tansaku.config import CollectionConfig
from tansaku.errors import ConfigError
from tansaku.locks import WaitFn
from tansaku.workspace import Workspace
from tansaku.writer import remove_collection, writing


class Backend(Protocol):
    """Where collections live: opened, written and removed by name."""

    name: str

    def fingerprint(self, collection: str) -> Hashable:
        """What a view depends on: equal fingerprints, same view."""
        ...

    def open_view(self, collection: str) -> Collection:
        """A read-only view of the collection's last commit."""
        ...

    def writing(
        self,
        collection: str,
        *,
        config: CollectionConfig | None = None,
        embedder: tuple[str, int] | None = None,
        on_wait: WaitFn | None = None,
        lazy: bool = False,
    ) -> AbstractContextManager[Collection]:
        """The collection opened for writing (created if needed), committed when the block
        ends without an exception; one writer per collection."""
        ...

    def remove(self, collection: str) -> None:
        """Delete the collection."""
        ...

    def names(self) -> list[str]:
        """The collections, sorted."""
        ...

    def exists(self, collection: str) -> bool: ...


class EmbeddedBackend:
    """Collections as generations of qdrant-edge shards under ``<home>/collections``."""

    name = "embedded"

    def __init__(self, workspace: Workspace) -> None:
        self.workspace = workspace

    def fingerprint(self, collection: str) -> Hashable:
        col_dir = self.workspace.collection_dir(collection)
        return views.fingerprint(col_dir, collection, self.workspace)

    def open_view(self, collection: str) -> Collection:
        return views.open_view(self.workspace, collection)

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
        with writing(
            self.workspace,
            collection,
            config=config,
            embedder=embedder,
            on_wait=on_wait,
            lazy=lazy,
        ) as col:
            yield col

    def remove(self, collection: str) -> None:
        remove_collection(self.workspace, collection)

    def names(self) -> list[str]:
        return self.workspace.collection_names()

    def exists(self, collection: str) -> bool:
        return (self.workspace.collection_dir(collection) / "config.toml").is_file()


BackendFactory = Callable[[str, Workspace], Backend]
_SCHEMES: dict[str, BackendFactory] = {}


def register_scheme(scheme: str, factory: BackendFactory) -> None:
    """Let ``connect("<scheme>://…")`` open collections through ``factory(url, workspace)``
    (the Qdrant server backend registers ``http`` and ``https``)."""
    _SCHEMES[scheme.lower()] = factory


def is_url(target: str | Path | None) -> bool:
    """Whether ``target`` names a server (``scheme://host…``) rather than a folder."""
    if not isinstance(target, str):
        return False
    parsed = urlparse(target)
    return bool(parsed.scheme) and len(parsed.scheme) > 1 and bool(parsed.netloc)


def backend_for(target: str | Path | None, workspace: Workspace) -> Backend:
    """The backend of ``target``: a folder (or ``None``) is the embedded workspace itself; a
    URL picks the backend registered for its scheme."""
    if not is_url(target):
        return EmbeddedBackend(workspace)
    url = str(target)
    scheme = urlparse(url).scheme.lower()
    factory = _SCHEMES.get(scheme)
    if factory is None:
        known = ", ".join(f"{s}://" for s in sorted(_SCHEMES)) or "なし"
        raise ConfigError(
            f"接続先「{url}」のバックエンドがありません(登録済みの URL 形式: {known})。"
            "ローカルのフォルダを指定すると組み込みのストアを使います"
        )
    return factory(url, workspace)


def workspace_home(target: str | Path | None) -> str | Path | None:
    """The workspace folder of ``target``: the folder itself, or for a URL ``$TANSAKU_HOME``
    (the local cache, logs and tables of a client of a server backend)."""
    return None if is_url(target) else target


__all__ = [
    "Backend",
    "EmbeddedBackend",
    "backend_for",
    "is_url",
    "register_scheme",
    "workspace_home",
]

"""Backends: where a workspace's collections live, picked by ``tansaku.connect(path | url)``.

A backend opens collections — read-only views of the last commit, writers that commit — and
hands each :class:`~tansaku.collection.Collection` its storage
(:class:`~tansaku.store.protocols.CollectionStorage`); the collection never builds one. The
embedded default keeps every collection in the workspace folder as generations of qdrant-edge
shards (``tansaku.backends.embedded.generations``). The workspace folder (embedding cache, logs,
tables) is local whatever the backend.
"""

from __future__ import annotations

import os
from collections.abc import Hashable
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Protocol, TypedDict, Unpack
from urllib.parse import urlparse

from tansaku.backends.embedded import handles, views
from tansaku.backends.embedded.writer import remove_collection, writing
from tansaku.backends.locks import WaitFn
from tansaku.collection import Collection
from tansaku.config import CollectionConfig
from tansaku.errors import ConfigError
from tansaku.workspace import Workspace, settings_table


class WriterOptions(TypedDict, total=False):
    """How a caller opens a collection for writing (:meth:`tansaku.client.Tansaku.writing`);
    every key may be left out.

    ``config``: replaces the stored config (default: the stored one, or a new collection's
    default). ``on_wait``: called while another writer holds the collection. ``lazy``:
    writable from :meth:`Collection.begin_write` on (a writer that changes nothing commits
    nothing)."""

    config: CollectionConfig | None
    on_wait: WaitFn | None
    lazy: bool


class WriteOptions(WriterOptions, total=False):
    """How a backend's writer opens a collection (:meth:`Backend.writing`): a caller's
    :class:`WriterOptions` and ``embedder``, (name, dim) recorded in a new collection's
    state."""

    embedder: tuple[str, int] | None


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
        self, collection: str, **options: Unpack[WriteOptions]
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
        handles.configure(workspace.home)  # [server] open_collections of its tansaku.toml

    def fingerprint(self, collection: str) -> Hashable:
        col_dir = self.workspace.collection_dir(collection)
        return views.fingerprint(col_dir, collection, self.workspace)

    def open_view(self, collection: str) -> Collection:
        return views.open_view(self.workspace, collection)

    def writing(
        self, collection: str, **options: Unpack[WriteOptions]
    ) -> AbstractContextManager[Collection]:
        return writing(self.workspace, collection, **options)

    def remove(self, collection: str) -> None:
        remove_collection(self.workspace, collection)

    def names(self) -> list[str]:
        return self.workspace.collection_names()

    def exists(self, collection: str) -> bool:
        return (self.workspace.collection_dir(collection) / "config.toml").is_file()


class BackendFactory(Protocol):
    """Opens the backend of a URL (``api_key``: the server's, when it needs one)."""

    def __call__(
        self, url: str, workspace: Workspace, *, api_key: str | None = None
    ) -> Backend: ...


_SCHEMES: dict[str, BackendFactory] = {}


def register_scheme(scheme: str, factory: BackendFactory) -> None:
    """Let ``connect("<scheme>://…")`` open collections through ``factory(url, workspace,
    api_key=…)`` (the Qdrant server backend registers ``http``, ``https``, ``qdrant+local``
    and ``qdrant+memory``)."""
    _SCHEMES[scheme.lower()] = factory


def is_url(target: str | Path | None) -> bool:
    """Whether ``target`` names a server (``scheme://host…``, or ``scheme://…`` of a
    registered scheme such as ``qdrant+local:///abs/dir``) rather than a folder."""
    if not isinstance(target, str) or "://" not in target:
        return False
    parsed = urlparse(target)
    scheme = parsed.scheme.lower()
    return len(scheme) > 1 and (bool(parsed.netloc) or scheme in _SCHEMES)


def backend_for(
    target: str | Path | None, workspace: Workspace, *, api_key: str | None = None
) -> Backend:
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
    if api_key is None:  # factories registered before API keys take (url, workspace)
        return factory(url, workspace)
    return factory(url, workspace, api_key=api_key)


def configured_url(workspace: Workspace) -> str | None:
    """The server a workspace's collections live in, when one is configured:
    ``$TANSAKU_QDRANT_URL``, else ``[qdrant] url`` of its ``tansaku.toml``; else None (the
    embedded store)."""
    from tansaku.store.qdrant.settings import ENV_URL

    url = os.environ.get(ENV_URL, "").strip()
    if url:
        return url
    table = settings_table(workspace.home, "qdrant")
    found = table.get("url") if isinstance(table, dict) else None
    return found.strip() if isinstance(found, str) and found.strip() else None


def _qdrant(url: str, workspace: Workspace, *, api_key: str | None = None) -> Backend:
    """The Qdrant server backend (``qdrant-client`` is the ``qdrant`` extra: imported here)."""
    from tansaku.errors import MissingExtra
    from tansaku.store.qdrant.settings import import_qdrant_client

    try:
        import_qdrant_client()
    except MissingExtra as exc:  # a setting to fix, like a wrong URL: the message says how
        raise ConfigError(str(exc)) from exc
    from tansaku.backends.qdrant.backend import open_backend

    return open_backend(url, workspace, api_key=api_key)


for _scheme in ("http", "https", "qdrant+local", "qdrant+memory"):
    register_scheme(_scheme, _qdrant)


def workspace_home(target: str | Path | None) -> str | Path | None:
    """The workspace folder of ``target``: the folder itself, or for a URL ``$TANSAKU_HOME``
    (the local cache, logs and tables of a client of a server backend)."""
    return None if is_url(target) else target


__all__ = [
    "Backend",
    "BackendFactory",
    "EmbeddedBackend",
    "WriteOptions",
    "backend_for",
    "configured_url",
    "is_url",
    "register_scheme",
    "workspace_home",
]

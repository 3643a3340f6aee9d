"""Read-only views of collections: what a view depends on, opening one on the committed
generation, and the lease it holds (see ``tansaku.generations`` and ``tansaku.handles``)."""

from __future__ import annotations

import weakref
from pathlib import Path

from tansaku import generations, handles
from tansaku.collection import Collection, CollectionState, read_config, read_state
from tansaku.config import CollectionConfig
from tansaku.errors import CollectionNotFound, StorageError
from tansaku.migrate import needs_migration
from tansaku.workspace import Workspace
from tansaku.writer import writing


def fingerprint(col_dir: Path, name: str, ws: Workspace) -> tuple[str, int]:
    """What a view depends on: the committed generation and the config file's mtime."""
    try:
        mtime = (col_dir / "config.toml").stat().st_mtime_ns
    except FileNotFoundError:
        raise CollectionNotFound(name, ws.collection_names()) from None
    cur = generations.current(col_dir)
    return (cur.name if cur is not None else "", mtime)


def open_view(ws: Workspace, name: str) -> Collection:
    """A view of the committed generation (migrating a collection of an earlier layout
    first, see ``tansaku.migrate``)."""
    col_dir = ws.collection_dir(name)
    if needs_migration(col_dir):
        with writing(ws, name, lazy=True):  # migrates under the writer lock; nothing more
            pass
    for _ in range(20):  # a writer may remove the generation between CURRENT and the pin
        config = read_config(col_dir, name)
        gen = generations.current(col_dir)
        if gen is None:
            return Collection(col_dir, config, CollectionState())
        try:
            h = handles.lease(gen, dim=384)
        except FileNotFoundError:
            continue
        return snapshot(col_dir, config, read_state(gen), h)
    raise StorageError(f"コレクション「{name}」の現在の世代を開けません")


def snapshot(
    path: Path, config: CollectionConfig, state: CollectionState, h: handles.GenHandles
) -> Collection:
    """A read-only view holding one lease on ``h``, given back when the view is garbage: a
    view is a snapshot, usable for as long as anyone holds it (its generation stays on disk
    until then), and an old one nobody holds lets its generation go at once."""
    view = Collection(path, config, state, h)
    weakref.finalize(view, handles.release, h)
    return view

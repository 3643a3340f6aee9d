"""Read-only views of collections: what a view depends on, opening one on the committed
generation, and the lease it holds (see ``tansaku.backends.embedded.generations`` and
``tansaku.backends.embedded.handles``); the
listing of collections built from views, which leaves out a collection another process removes
while it is being read."""

from __future__ import annotations

import logging
import os
import weakref
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from tansaku.backends.embedded import generations, handles
from tansaku.backends.embedded.migrate import needs_migration
from tansaku.backends.embedded.writer import writing
from tansaku.collection import Collection, CollectionState, read_config, read_state
from tansaku.config import CollectionConfig
from tansaku.errors import CollectionNotFound, StorageError
from tansaku.workspace import Workspace

log = logging.getLogger("tansaku.backends.embedded.views")
T = TypeVar("T")
ATTEMPTS = 3


def fingerprint(col_dir: Path, name: str, ws: Workspace) -> tuple[str, int]:
    """What a view depends on: the committed generation and the config file's mtime."""
    where = os.fspath(col_dir)
    try:
        mtime = os.stat(os.path.join(where, "config.toml")).st_mtime_ns
    except FileNotFoundError:
        raise CollectionNotFound(name, ws.collection_names()) from None
    return (generations.current_name(where), mtime)


def open_view(ws: Workspace, name: str) -> Collection:
    """A view of the committed generation (migrating a collection of an earlier layout
    first, see ``tansaku.backends.embedded.migrate``)."""
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


@dataclass(frozen=True)
class CollectionInfo:
    name: str
    description: str
    source_type: str
    points: int
    teams: tuple[str, ...]
    axes: tuple[str, ...]


def info_of(name: str, col: Collection) -> CollectionInfo:
    """What ``tansaku collections`` shows of a view."""
    teams = tuple(sorted(t for t in col.state.bm25 if col.has_records(t)))
    return CollectionInfo(
        name=name,
        description=col.config.description,
        source_type=col.config.source_type,
        points=_points(col),
        teams=teams,
        axes=tuple(f"{a.name}({a.mode.value})" for a in col.config.axes),
    )


def _points(col: Collection) -> int:
    """The records of a view, from the statistics its commit saved (every record counts once
    in its team's and field's count): a listing never loads an engine shard, which would undo
    the bound on open shards (``handles``). A commit without statistics asks the shard."""
    if col.handles is None:
        return 0
    counts = [st.count for fields in col.state.bm25.values() for st in fields.values()]
    return max(0, sum(counts)) if counts else col.store.total()


def unless_gone(name: str, read: Callable[[str], T], exists: Callable[[str], bool]) -> T | None:
    """``read(name)``, or None when the collection is removed meanwhile (by any process: its
    files vanish under a view that has not opened them yet, and the engine says so in its own
    words). A failure while the collection still exists is tried again, then raised."""
    for attempt in range(ATTEMPTS):
        try:
            return read(name)
        except Exception:
            if not exists(name):
                log.info("collection %s was removed while it was read: left out", name)
                return None
            if attempt == ATTEMPTS - 1:
                raise
    return None  # pragma: no cover - the loop returns or raises


def list_infos(
    names: Iterable[str], read: Callable[[str], T], exists: Callable[[str], bool]
) -> list[T]:
    """``read`` of every name but those removed while the listing runs."""
    found = (unless_gone(name, read, exists) for name in names)
    return [info for info in found if info is not None]

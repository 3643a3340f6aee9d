"""Bring a collection written by an earlier layout into the current one, on open.

Two earlier layouts exist:

- **before generations** (``shard/``, ``units/``, ``state.json`` beside the config; shards with
  a write-ahead log, which locks a shard to one process);
- **layout 1** (generations whose point ids are UUIDv5 strings; layout 2 uses unsigned 64-bit
  integers, ``tansaku.store.ids``).

Migration copies every point — vectors and payloads as stored, nothing re-embedded — under its
layout-2 id (computed from the team, record id and unit number its payload carries) into a new
generation without write-ahead log, recomputes the BM25 length statistics from what the records
carry (which also repairs statistics a crash lost before generations existed) and the unit
counts from the units, and publishes it. It runs under the collection's writer lock, the first
time any process opens the collection. The old data is the backup: the old folders (or the old
generation) stay untouched until the new generation is committed; interrupted, migration leaves
them as they were and starts over at the next open.
"""

from __future__ import annotations

import logging
import shutil
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import qdrant_edge as qe

from tansaku.backends.embedded import generations as g
from tansaku.backends.embedded.handles import GenHandles
from tansaku.collection import (
    STATE_VERSION,
    CollectionState,
    atomic_write,
    read_config,
    read_state,
)
from tansaku.collection.stats import STATE, recount_bm25
from tansaku.faults import crashpoint
from tansaku.store.edge import EdgeStore
from tansaku.store.ids import point_id, unit_point_id
from tansaku.store.shard import settle
from tansaku.store.units import UnitStore
from tansaku.workspace import Workspace

log = logging.getLogger(__name__)
_BATCH = 1_000
LEGACY = ("shard", "units", "state.json")
IdFn = Callable[[dict[str, Any]], int]


def _points(shard: qe.EdgeShard) -> Iterator[list[Any]]:
    offset = None
    while True:
        points, offset = shard.scroll(
            qe.ScrollRequest(offset=offset, limit=_BATCH, with_payload=True, with_vector=True)
        )
        yield points
        if offset is None or not points:
            break


def _record_id(payload: dict[str, Any]) -> int:
    return point_id(str(payload.get("tenant", "")), str(payload.get("rid", "")))


def _unit_id(payload: dict[str, Any]) -> int:
    tenant, rid = str(payload.get("tenant", "")), str(payload.get("rid", ""))
    return unit_point_id(tenant, rid, int(payload.get("unit", 0)))


def _copy(src: Path, dst_shard: qe.EdgeShard, new_id: IdFn) -> set[str]:
    """Copy every point of the shard in ``src`` into ``dst_shard`` under ``new_id(payload)``;
    returns the teams seen."""
    shard = qe.EdgeShard.load(str(src))
    seen: set[str] = set()
    try:
        for points in _points(shard):
            batch = []
            for p in points:
                payload = p.payload or {}
                vector = p.vector if isinstance(p.vector, dict) else {}
                batch.append(qe.Point(new_id(payload), vector, payload))
                seen.add(str(payload.get("tenant", "")))
            if batch:
                dst_shard.update(qe.UpdateOperation.upsert_points(batch))
    finally:
        shard.close()
    return seen


def _has_shard(path: Path) -> bool:
    return (path / "edge_config.json").exists() or (path / "segments").exists()


def _rebuild(col_dir: Path, src: Path, old: CollectionState) -> None:
    """A new generation holding every point of the shards in ``src`` under layout-2 ids,
    with recounted statistics, published."""
    gen = g.start(col_dir, None)
    try:
        h = GenHandles(gen, dim=old.dim or 384, writable=True)
        store = h.store()
        assert isinstance(store, EdgeStore)
        _copy(src / "shard", store._shard, _record_id)
        units_ok: set[str] = set()
        if _has_shard(src / "units"):
            units = h.units()
            assert isinstance(units, UnitStore)
            units_ok = _copy(src / "units", units._shard, _unit_id) & set(old.units)
            units.recount()
        state = CollectionState(
            embedder=old.embedder,
            dim=old.dim,
            bm25=recount_bm25(store.lengths(), old),
            units=units_ok,
            version=STATE_VERSION,
        )
        h.close()
        atomic_write(gen / STATE, state.to_json())
        settle(gen / "shard")
        settle(gen / "units")
        crashpoint("migrated")
        g.publish(col_dir, gen)
    except BaseException:
        g.discard(gen)
        raise


def needs_migration(col_dir: Path) -> bool:
    """Whether the collection is in an earlier layout (cheap: one small file read)."""
    if g.is_legacy(col_dir):
        return True
    cur = g.current(col_dir)
    return cur is not None and read_state(cur).version < STATE_VERSION


def migrate(col_dir: Path, name: str) -> bool:
    """Migrate ``col_dir`` if it needs it (call it holding the collection's writer lock);
    returns whether it did."""
    if g.is_legacy(col_dir):
        migrate_legacy(col_dir, name)
        return True
    cur = g.current(col_dir)
    if cur is None:
        return False
    old = read_state(cur)
    if old.version >= STATE_VERSION:
        return False
    log.info("migrating collection %s from layout %d to %d", name, old.version, STATE_VERSION)
    read_config(col_dir, name)  # fails early on a broken config, before anything moves
    g.collect(col_dir)  # an interrupted earlier attempt
    _rebuild(col_dir, cur, old)
    return True  # the old generation goes with the next collect once nobody reads it


def migrate_legacy(col_dir: Path, name: str) -> None:
    """Migrate a collection written before generations (holding its writer lock)."""
    if not g.is_legacy(col_dir):
        return
    log.info("migrating collection %s to generations", name)
    read_config(col_dir, name)  # fails early on a broken config, before anything moves
    old = read_state(col_dir)  # legacy state.json lives beside the config
    g.collect(col_dir)  # an interrupted earlier attempt
    _rebuild(col_dir, col_dir, old)
    for part in LEGACY:
        target = col_dir / part
        if target.is_dir():
            shutil.rmtree(target, ignore_errors=True)
        elif target.exists():
            target.unlink()


@dataclass(frozen=True)
class Migration:
    """A collection of an earlier layout (``layout`` 0: before generations), and once migrated
    the generation that holds it now with its records."""

    collection: str
    layout: int
    generation: str = ""
    records: int = 0

    def to_dict(self) -> dict[str, Any]:
        return {
            "collection": self.collection,
            "from_layout": self.layout,
            "to_layout": STATE_VERSION,
            "generation": self.generation,
            "records": self.records,
        }


def layout_of(col_dir: Path) -> int:
    """The layout a collection is stored in (0: before generations)."""
    if g.is_legacy(col_dir):
        return 0
    cur = g.current(col_dir)
    return read_state(cur).version if cur is not None else STATE_VERSION


def pending(ws: Workspace) -> list[Migration]:
    """The workspace's collections in an earlier layout (nothing is opened or changed)."""
    return [
        Migration(name, layout_of(ws.collection_dir(name)))
        for name in ws.collection_names()
        if needs_migration(ws.collection_dir(name))
    ]


def migrate_workspace(ws: Workspace, *, wait_s: float | None = None) -> list[Migration]:
    """Migrate every collection of ``ws`` in an earlier layout, by the path opening one takes
    (under its writer lock; the old data kept until the new generation is committed)."""
    from tansaku.backends.embedded.writer import writing

    done = []
    for item in pending(ws):
        col_dir = ws.collection_dir(item.collection)
        with writing(ws, item.collection, lazy=True, wait_s=wait_s):
            pass  # opening it for writing migrates it first, and nothing more
        state = read_state(g.current(col_dir))
        records = sum(st.count for fields in state.bm25.values() for st in fields.values())
        cur = g.current(col_dir)
        done.append(replace(item, generation=cur.name if cur else "", records=records))
    return done

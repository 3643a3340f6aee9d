"""Bring a collection written before generations into the generation layout.

Before generations a collection kept ``shard/`` (with a write-ahead log, which locks the shard
to one process), ``units/`` and ``state.json`` beside its config. Migration copies every point —
vectors and payloads as stored, nothing re-embedded — into a new generation whose shards have no
write-ahead log, recomputes the BM25 length statistics from what the records carry (which also
repairs statistics a crash lost before generations existed) and the unit counts from the unit
shard, publishes it, and only then removes the old folders. It runs under the collection's
writer lock, the first time any process opens the collection; interrupted, it leaves the old
layout untouched and starts over.
"""

from __future__ import annotations

import logging
import shutil
from collections import defaultdict
from pathlib import Path
from typing import Any

import qdrant_edge as qe

from tansaku import generations as g
from tansaku.collection import (
    CollectionState,
    FieldStats,
    atomic_write,
    read_config,
    read_state,
)
from tansaku.handles import GenHandles
from tansaku.store.edge import EdgeStore
from tansaku.store.shard import settle
from tansaku.store.units import UnitStore

log = logging.getLogger(__name__)
_BATCH = 1_000
LEGACY = ("shard", "units", "state.json")


def _points(shard: qe.EdgeShard) -> Any:
    offset = None
    while True:
        points, offset = shard.scroll(
            qe.ScrollRequest(offset=offset, limit=_BATCH, with_payload=True, with_vector=True)
        )
        yield points
        if offset is None or not points:
            break


def _copy(src: Path, dst_shard: qe.EdgeShard) -> set[str]:
    """Copy every point of the shard in ``src`` into ``dst_shard``; returns the teams seen."""
    shard = qe.EdgeShard.load(str(src))
    seen: set[str] = set()
    try:
        for points in _points(shard):
            batch = []
            for p in points:
                payload = p.payload or {}
                vector = p.vector if isinstance(p.vector, dict) else {}
                batch.append(qe.Point(p.id, vector, payload))
                seen.add(str(payload.get("tenant", "")))
            if batch:
                dst_shard.update(qe.UpdateOperation.upsert_points(batch))
    finally:
        shard.close()
    return seen


def recount_bm25(
    lengths: dict[str, dict[str, tuple[int, int]]], old: CollectionState
) -> dict[str, dict[str, FieldStats]]:
    """BM25 length statistics from what the records carry (:meth:`EdgeStore.lengths`), keeping
    the average the stored vectors were encoded with where the old state knew it."""
    stats: dict[str, dict[str, FieldStats]] = defaultdict(dict)
    for tenant, fields in lengths.items():
        for field, (total, count) in fields.items():
            stats[tenant][field] = FieldStats(total_len=total, count=count)
    for tenant, per_field in stats.items():
        for field, st in per_field.items():
            before = old.bm25.get(tenant, {}).get(field)
            # the average the stored vectors were encoded with, if the old state knew it
            st.avgdl_written = before.avgdl_written if before and before.avgdl_written else st.avgdl
    return dict(stats)


def migrate_legacy(col_dir: Path, name: str) -> None:
    """Migrate ``col_dir`` (call it holding the collection's writer lock)."""
    if not g.is_legacy(col_dir):
        return
    log.info("migrating collection %s to generations", name)
    read_config(col_dir, name)  # fails early on a broken config, before anything moves
    old = read_state(col_dir)  # legacy state.json lives beside the config
    g.collect(col_dir)  # an interrupted earlier attempt
    gen = g.start(col_dir, None)
    try:
        h = GenHandles(gen, dim=old.dim or 384, writable=True)
        store: EdgeStore = h.store()
        _copy(col_dir / "shard", store._shard)
        units_ok: set[str] = set()
        if (col_dir / "units" / "edge_config.json").exists() or (
            col_dir / "units" / "segments"
        ).exists():
            units: UnitStore = h.units()
            units_ok = _copy(col_dir / "units", units._shard) & set(old.units)
            units.recount()
        state = CollectionState(
            embedder=old.embedder,
            dim=old.dim,
            bm25=recount_bm25(store.lengths(), old),
            units=units_ok,
        )
        h.close()
        atomic_write(gen / g.STATE, state.to_json())
        settle(gen / "shard")
        settle(gen / "units")
        g.publish(col_dir, gen)
    except BaseException:
        g.discard(gen)
        raise
    for part in LEGACY:
        target = col_dir / part
        if target.is_dir():
            shutil.rmtree(target, ignore_errors=True)
        elif target.exists():
            target.unlink()

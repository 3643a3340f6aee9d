"""One qdrant-edge shard on disk, as the record store and the unit store both hold one.

Opening creates the shard (with the tenant index and the payload indexes every search filters
on) or loads it; :class:`ShardOwner` gives its holder ``optimize``/``flush``/``close`` under the
holder's lock.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path

import qdrant_edge as qe

# payload keys every search may filter on: record id, document, field, the common metadata
INDEXED_KEYWORDS = ("rid", "doc_id", "field", "meta.source_type", "meta.store")


def open_shard(
    path: Path, config: qe.EdgeConfig, keywords: Sequence[str] = INDEXED_KEYWORDS
) -> tuple[qe.EdgeShard, bool]:
    """Load the shard in ``path``, or create it with ``config`` and the payload indexes
    (``tenant`` as the tenant key, ``keywords``, ``date_int``). Returns (shard, created)."""
    if (path / "edge_config.json").exists() or (path / "segments").exists():
        return qe.EdgeShard.load(str(path)), False
    path.mkdir(parents=True, exist_ok=True)
    shard = qe.EdgeShard.create(str(path), config)
    shard.update(
        qe.UpdateOperation.create_field_index("tenant", qe.KeywordIndexParams(is_tenant=True))
    )
    for key in keywords:
        shard.update(qe.UpdateOperation.create_field_index(key, qe.PayloadSchemaType.Keyword))
    shard.update(qe.UpdateOperation.create_field_index("date_int", qe.PayloadSchemaType.Integer))
    return shard, True


class ShardOwner:
    """Lifecycle of a held shard (``self._shard`` guarded by ``self._lock``)."""

    _shard: qe.EdgeShard
    _lock: threading.RLock

    def optimize(self) -> None:
        """Build the indexes and merge segments (minutes per 100k points on 2 cores)."""
        with self._lock:
            self._shard.optimize()

    def flush(self) -> None:
        with self._lock:
            self._shard.flush()

    def close(self) -> None:
        with self._lock:
            if self._shard is not None:
                self._shard.flush()
                self._shard.close()
                self._shard = None  # type: ignore[assignment]

"""Index maintenance during an ingest: BM25 length statistics batch by batch, the sentence
units of ``bigram`` axes, re-encoding after length drift, and checkpoints."""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Sequence
from typing import Any

from tansaku.collection import REWEIGHT_DRIFT, Collection
from tansaku.faults import crashpoint
from tansaku.records import Record
from tansaku.store.base import Filter
from tansaku.store.sparse import doc_vector
from tansaku.text import get_analyzer

BATCH = 256
CHECKPOINT_S = 60.0  # a long ingest publishes what it has written at least this often
ENV_CHECKPOINT = "TANSAKU_CHECKPOINT_S"
ProgressFn = Callable[[str, int, int], None]  # (stage, done, total)


class Checkpoints:
    """Calls ``checkpoint`` at batch boundaries once ``every`` seconds have passed since the
    last one: a long ingest publishes what it has written, and a killed one keeps it."""

    def __init__(self, checkpoint: Callable[[], None] | None, every: float | None) -> None:
        self.checkpoint = checkpoint
        env = os.environ.get(ENV_CHECKPOINT)
        self.every = every if every is not None else float(env) if env else CHECKPOINT_S
        self.last = time.monotonic()

    def tick(self) -> None:
        if self.checkpoint is None or time.monotonic() - self.last < self.every:
            return
        self.checkpoint()
        crashpoint("checkpoint")
        self.last = time.monotonic()


def encode_with_projected_averages(
    collection: Collection,
    tenant: str,
    existing: dict[str, dict[str, Any]],
    deletes: Sequence[str],
    updates: Sequence[Record],
    changed: Sequence[Record],
    terms: dict[str, Any],
) -> None:
    """Fix the average length new BM25 vectors are encoded with (``avgdl_written``) for fields
    that have none yet, from the statistics as they will be once this ingest is done. The
    counts themselves move batch by batch with what is written (:func:`count_lengths`), so every
    commit's statistics describe exactly the records it holds."""
    projected: dict[str, list[int]] = {}
    for fld, st in collection.state.bm25.get(tenant, {}).items():
        projected[fld] = [st.total_len, st.count]
    for rid in [*deletes, *(r.id for r in updates)]:
        old = existing[rid]
        tot = projected.setdefault(str(old.get("field", "")), [0, 0])
        tot[0] -= int(old.get("bm25_len", 0))
        tot[1] -= 1
    for r in changed:
        tot = projected.setdefault(r.field, [0, 0])
        tot[0] += len(terms[r.id])
        tot[1] += 1
    with collection.lock:
        for fld, (total_len, count) in projected.items():
            st = collection.state.stats(tenant, fld)
            if not st.avgdl_written and count > 0:
                st.avgdl_written = total_len / count


def count_lengths(
    collection: Collection,
    tenant: str,
    removed: Sequence[dict[str, Any]],
    added: Sequence[tuple[str, int]],
) -> None:
    """Move the length statistics by what was just removed and written."""
    with collection.lock:
        for old in removed:
            st = collection.state.stats(tenant, str(old.get("field", "")))
            st.total_len -= int(old.get("bm25_len", 0))
            st.count -= 1
        for fld, length in added:
            st = collection.state.stats(tenant, fld)
            st.total_len += length
            st.count += 1


def build_units(collection: Collection, tenant: str, *, progress: ProgressFn | None = None) -> int:
    """Write the sentence units of every stored record of the tenant (a collection that gained
    a ``bigram`` axis, or whose units were not maintained). Returns the units written."""
    rows = collection.store.scan(tenant, keys=["rid", "doc_id", "field", "text", "meta"])
    written = 0
    for i in range(0, len(rows), BATCH):
        batch = [
            Record(
                id=row["rid"],
                doc_id=row["doc_id"],
                field=row["field"],
                text=row.get("text", ""),
                metadata=row.get("meta") or {},
            )
            for row in rows[i : i + BATCH]
        ]
        written += collection.units.replace(tenant, batch)
        if progress is not None:
            progress("units", min(i + BATCH, len(rows)), len(rows))
    collection.state.units.add(tenant)
    return written


def ensure_units(collection: Collection, tenant: str) -> bool:
    """Build the tenant's sentence units in a writer's ``collection`` if they are not complete
    (for searches that ask for a ``bigram`` axis the collection's config does not have).
    Returns whether it built them; the writer commits them."""
    with collection.lock:
        if collection.has_units(tenant):
            return False
        build_units(collection, tenant)
        return True


def reweight_drifted(collection: Collection, tenant: str) -> None:
    """Re-encode the BM25 vectors of fields whose average length drifted past the threshold."""
    cfg = collection.config
    analyzer = get_analyzer(cfg.split_mode)
    for field_name, st in collection.state.bm25.get(tenant, {}).items():
        if not st.count:
            continue
        if (
            st.avgdl_written
            and abs(st.avgdl - st.avgdl_written) / st.avgdl_written <= REWEIGHT_DRIFT
        ):
            continue
        st.avgdl_written = st.avgdl
        rows = collection.store.scan(tenant, Filter(fields=(field_name,)), keys=["rid", "text"])
        vectors = {
            row["rid"]: doc_vector(
                analyzer.terms(row["text"]), k1=cfg.bm25_k1, b=cfg.bm25_b, avgdl=st.avgdl
            )
            for row in rows
        }
        items = list(vectors.items())
        for i in range(0, len(items), BATCH):
            collection.store.update_sparse(tenant, dict(items[i : i + BATCH]))

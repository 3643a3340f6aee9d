"""A collection applies an ingest plan and keeps what derives from its records in line.

The plan (``tansaku.ingest.plan``) says what to add, update and delete; applying it analyses
and embeds what changed, writes records and sentence units a batch at a time, moves the BM25
length statistics with each batch (every commit's statistics describe exactly the records it
holds), re-encodes fields whose average length drifted, and builds the search index after a
large write. A long apply checkpoints: between batches, at least every ``checkpoint_every``
seconds, it commits what it wrote (``tansaku.backends.embedded.writer``).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from tansaku.collection import REWEIGHT_DRIFT, Collection
from tansaku.collection.guard import check_ingest
from tansaku.embed.cache import CachedEmbedder
from tansaku.faults import crashpoint
from tansaku.ingest.plan import IngestPlan
from tansaku.records import Record
from tansaku.store.base import Filter, StoredPoint
from tansaku.store.sparse import doc_vector, term_ids
from tansaku.text import get_analyzer

BATCH = 256
CHECKPOINT_S = 60.0  # a long ingest publishes what it has written at least this often
ENV_CHECKPOINT = "TANSAKU_CHECKPOINT_S"
ProgressFn = Callable[[str, int, int], None]  # (stage, done, total)


@dataclass(frozen=True, kw_only=True)
class ApplyOptions:
    embedder: CachedEmbedder | None = None
    """Embeds the records of dense fields (required when the plan writes any)."""
    progress: ProgressFn | None = None
    """Told (stage, done, total) for analyze, embed, write, units and index."""
    checkpoint: Callable[[], None] | None = None
    """Publishes what is written so far (between batches)."""
    checkpoint_every: float | None = None
    """Seconds between checkpoints (default ``$TANSAKU_CHECKPOINT_S`` or 60)."""


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


def _report(progress: ProgressFn | None, stage: str, done: int, total: int) -> None:
    if progress is not None:
        progress(stage, done, total)


def apply_plan(collection: Collection, plan: IngestPlan, options: ApplyOptions) -> int:
    """Carry out ``plan`` in a writer's ``collection``; returns the texts embedded. A plan
    that changes nothing writes nothing (a lazy writer then commits nothing), unless the
    team's sentence units are missing."""
    tenant = plan.tenant
    progress = options.progress
    units_missing = collection.needs_units and not collection.has_units(tenant)
    if plan.empty and not units_missing:
        return 0
    dense = collection.dense_fields() if collection.needs_dense else set()
    if options.embedder is not None and any(
        dense is None or r.field in dense for r in plan.changed
    ):
        check_ingest(collection, options.embedder)  # the collection's model: before any write
    collection.begin_write()
    cfg = collection.config
    changed = plan.changed
    analyzer = get_analyzer(cfg.split_mode)
    terms = {}
    for i, r in enumerate(changed, 1):  # Sudachi at ~1.5 MB/s: minutes for a large file
        terms[r.id] = term_ids(analyzer.terms(r.text))
        if i % BATCH == 0 or i == len(changed):
            _report(progress, "analyze", i, len(changed))
    removed = [(d.record.field, d.bm25_len) for d in (*plan.deletes, *plan.replaced.values())]
    with collection.lock:
        state = collection.state
        state.fix_averages(tenant, removed, ((r.field, len(terms[r.id])) for r in changed))

    dense_fields = collection.dense_fields() if collection.needs_dense else set()
    to_embed = {r.id for r in changed if dense_fields is None or r.field in dense_fields}
    embedder = options.embedder
    if to_embed and embedder is None:
        raise ValueError("dense axes need an embedder")
    embedded_before = embedder.embedded if embedder is not None else 0
    embedded_so_far = 0

    def point(r: Record, vectors: dict[str, Any]) -> StoredPoint:
        st = state.stats(tenant, r.field)
        ids = terms.pop(r.id)  # built a batch at a time and let go: memory stays bounded
        avgdl = st.avgdl_written or st.avgdl or 1.0
        sparse = doc_vector(ids, k1=cfg.bm25_k1, b=cfg.bm25_b, avgdl=avgdl)
        return StoredPoint(r, sparse, vectors.pop(r.id, None), plan.hashes[r.id], len(ids))

    units = collection.needs_units and collection.has_units(tenant)  # the working copy's
    clock = Checkpoints(options.checkpoint, options.checkpoint_every)
    for i in range(0, len(changed), BATCH):
        batch = changed[i : i + BATCH]
        vectors: dict[str, Any] = {}
        want = [r for r in batch if r.id in to_embed]
        if want and embedder is not None:
            base = embedded_so_far

            def advance(n: int, base: int = base) -> None:
                _report(progress, "embed", min(base + n, len(to_embed)), len(to_embed))

            arr = embedder.embed_passages([r.text for r in want], progress=advance)
            vectors = {r.id: arr[j] for j, r in enumerate(want)}
            embedded_so_far += len(want)
        crashpoint("embed")
        if units:  # units first: a crash in between leaves records that re-ingest rewrites
            collection.units.replace(tenant, batch)
            crashpoint("units")
        points = [point(r, vectors) for r in batch]
        collection.store.upsert(tenant, points)
        crashpoint("records")
        gone = [(o.record.field, o.bm25_len) for r in batch if (o := plan.replaced.get(r.id))]
        with collection.lock:
            state.move(tenant, gone, [(p.record.field, p.bm25_len) for p in points])
        crashpoint("stats")
        _report(progress, "write", min(i + BATCH, len(changed)), len(changed))
        clock.tick()
    for i in range(0, len(plan.deletes), BATCH):
        doomed = plan.deletes[i : i + BATCH]
        rids = [d.record.id for d in doomed]
        collection.store.delete(tenant, rids)
        if units:  # after the records: an orphan unit finds no record and is dropped
            collection.units.delete(tenant, rids)
        with collection.lock:
            state.move(tenant, [(d.record.field, d.bm25_len) for d in doomed], [])
        crashpoint("delete")
        clock.tick()
    if collection.needs_units and not units:
        build_units(collection, tenant, progress=progress)
    elif not collection.needs_units and not plan.empty:
        state.units.discard(tenant)  # no longer maintained: rebuilt when needed
    reweight_drifted(collection, tenant)
    if collection.store.needs_index(len(changed)):
        _report(progress, "index", 0, 1)
        collection.store.optimize()
        if collection.needs_units:
            collection.units.optimize()
        _report(progress, "index", 1, 1)
    return (embedder.embedded - embedded_before) if embedder is not None else 0


def build_units(collection: Collection, tenant: str, *, progress: ProgressFn | None = None) -> int:
    """Write the sentence units of every stored record of the tenant (a collection that gained
    a ``bigram`` axis, or whose units were not maintained). Returns the units written."""
    rows = collection.store.scan(tenant, with_text=True, with_meta=True)
    written = 0
    for i in range(0, len(rows), BATCH):
        batch = [row.record for row in rows[i : i + BATCH]]
        written += collection.units.replace(tenant, batch)
        _report(progress, "units", min(i + BATCH, len(rows)), len(rows))
    collection.state.units.add(tenant)
    return written


def ensure_units(collection: Collection, tenant: str) -> bool:
    """Build the tenant's sentence units in a writer's ``collection`` if they are not complete
    (for searches that ask for a ``bigram`` axis the collection's config does not have).
    Returns whether it built them; the writer commits them."""
    with collection.lock:
        if collection.has_units(tenant):
            return False
        collection.begin_write()
        build_units(collection, tenant)
        return True


def reweight_drifted(collection: Collection, tenant: str) -> None:
    """Re-encode the BM25 vectors of fields whose average length drifted past the threshold."""
    cfg = collection.config
    analyzer = get_analyzer(cfg.split_mode)
    for field_name, avgdl in collection.state.drifted(tenant, REWEIGHT_DRIFT):
        rows = collection.store.scan(tenant, Filter(fields=(field_name,)), with_text=True)
        items = [
            (
                row.record.id,
                doc_vector(
                    analyzer.terms(row.record.text), k1=cfg.bm25_k1, b=cfg.bm25_b, avgdl=avgdl
                ),
            )
            for row in rows
        ]
        for i in range(0, len(items), BATCH):
            collection.store.update_sparse(tenant, dict(items[i : i + BATCH]))

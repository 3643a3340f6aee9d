"""The bulk ingest's pipeline: one run of load → plan and embed → write, in bounded batches.

:class:`BulkRun` does the work of :func:`tansaku.ingest.bulk.bulk_ingest` (see its module for
the stages, checkpoints and resumability); :class:`BulkOptions` paces it.
"""

from __future__ import annotations

import contextlib
import os
import queue
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from tansaku.collection import Collection, guard
from tansaku.embed.cache import CachedEmbedder
from tansaku.faults import crashpoint
from tansaku.ingest.apply import CHECKPOINT_S, ENV_CHECKPOINT, ApplyOptions, apply_plan
from tansaku.ingest.pipeline import stored_for
from tansaku.ingest.plan import IngestPlan, dedupe, plan_ingest
from tansaku.ingest.report import KEPT, AuditRow, Failure, IngestReport
from tansaku.ingest.stream import STREAM_BYTES, LoadedBatch
from tansaku.records import Record

REPEATED = "同じIDのレコードが先にあります"
Loaded = queue.Queue[LoadedBatch | BaseException | None]  # the loader's batches, then None


@dataclass(frozen=True, kw_only=True)
class BulkOptions:
    """How a bulk ingest paces itself (validated on construction)."""

    batch_records: int = 256
    """Records per batch: one plan, one embedding call, one write."""
    inflight: int = 4
    """Batches loaded, planned and embedded ahead of the one being written."""
    embed_workers: int = 2
    """Batches embedded at once (two keep a remote server busy between rounds)."""
    stream_bytes: int = STREAM_BYTES
    """A ``.jsonl`` larger than this is read a line at a time."""
    checkpoint_every: float | None = None
    """Seconds between checkpoints (default ``$TANSAKU_CHECKPOINT_S`` or 60)."""
    collect_audit: bool = False
    """Keep one audit row per record in the report (memory grows with the input)."""

    def __post_init__(self) -> None:
        for name in ("batch_records", "inflight", "embed_workers", "stream_bytes"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{name} must be a positive integer, not {value!r}")

    def every(self) -> float:
        if self.checkpoint_every is not None:
            return self.checkpoint_every
        env = os.environ.get(ENV_CHECKPOINT)
        return float(env) if env else CHECKPOINT_S


class CleanStop(Exception):
    """An error between batches (loading, planning, embedding): what is written is whole."""


class BulkRun:
    """One bulk ingest into a writer's collection."""

    def __init__(
        self,
        col: Collection,
        embedder: CachedEmbedder | None,
        tenant: str,
        options: BulkOptions,
        report: Callable[[str], None],
        publish: Callable[[Collection], None],
    ) -> None:
        self.col, self.embedder, self.tenant, self.options = col, embedder, tenant, options
        self.publish = publish
        if embedder is not None:  # before the pipeline embeds its first batches ahead of apply
            guard.check_ingest(col, embedder)
        self.tell = report
        self.produced: set[str] = set()  # record ids met in this run (first one wins)
        self.touched: set[str] = set()  # ... and ids deleted: no later plan may count them
        self.failures: list[Failure] = []
        self.audit: list[AuditRow] = []
        self.fields: dict[str, int] = {}
        self.counts = dict.fromkeys(
            ("inserted", "updated", "unchanged", "deleted", "skipped", "documents", "chunks"), 0
        )
        self.last = LoadedBatch((), 0, 0, 0)
        self.loaded_chunks = 0
        self.embedded_start = embedder.embedded if embedder is not None else 0
        dense = col.dense_fields() if col.needs_dense else set()
        self.wants: Callable[[Record], bool] = lambda r: dense is None or r.field in dense
        self.dirty = False  # written since the last commit

    @property
    def embedded(self) -> int:
        return (self.embedder.embedded - self.embedded_start) if self.embedder else 0

    # -- the three steps of a batch ----------------------------------------------------
    def plan(self, batch: LoadedBatch) -> IngestPlan:
        recs, skipped = dedupe(batch.records)
        fresh = []
        for r in recs:
            if r.id in self.produced:
                skipped.append(AuditRow(r.id, r.field, len(r.text), "skip", REPEATED, r.doc_id))
            else:
                fresh.append(r)
        stored = stored_for(self.col, self.tenant, fresh, everything=False, meta=False)
        stored = {k: v for k, v in stored.items() if k not in self.touched}
        plan = plan_ingest(fresh, stored, tenant=self.tenant, skipped=skipped)
        self.produced.update(r.id for r in fresh)
        self.touched.update(r.id for r in fresh)
        self.touched.update(d.record.id for d in plan.deletes)
        return plan

    def embed(self, plan: IngestPlan) -> None:
        texts = [r.text for r in plan.changed if self.wants(r)]
        if texts and self.embedder is not None:
            self.embedder.embed_passages(texts)
        crashpoint("bulk-embedded")

    def apply(self, batch: LoadedBatch, plan: IngestPlan) -> None:
        if not plan.empty or self.col.needs_units:
            apply_plan(self.col, plan, ApplyOptions(embedder=self.embedder))
            self.dirty = self.dirty or self.col.writable
        c = self.counts
        c["inserted"] += len(plan.inserts)
        c["updated"] += len(plan.updates)
        c["unchanged"] += plan.unchanged
        c["deleted"] += len(plan.deletes)
        c["skipped"] += plan.skipped
        c["documents"] += batch.documents
        c["chunks"] += len(batch.records)
        for row in plan.audit:  # counted per field, kept only when the audit is asked for
            if row.action in KEPT:
                self.fields[row.field] = self.fields.get(row.field, 0) + 1
        if self.options.collect_audit:
            self.audit.extend(plan.audit)
        self.last = batch
        crashpoint("bulk-batch")

    def checkpoint(self) -> None:
        if self.dirty and self.col.writable:
            self.publish(self.col)
            self.dirty = False
            crashpoint("bulk-checkpoint")

    # -- the pipeline ------------------------------------------------------------------
    def execute(
        self, batches: Iterator[LoadedBatch], *, sync_roots: Sequence[Path] | None, sync_all: bool
    ) -> IngestReport:
        loaded: queue.Queue[LoadedBatch | BaseException | None] = queue.Queue(self.options.inflight)
        stop = threading.Event()
        loader = threading.Thread(
            target=self._load, args=(batches, loaded, stop), name="tansaku-load", daemon=True
        )
        pool = ThreadPoolExecutor(self.options.embed_workers, thread_name_prefix="tansaku-bulk")
        loader.start()
        try:
            try:
                self._pipeline(loaded, pool)
                if sync_roots or sync_all:
                    self.tell("sync")
                    self._sync(sync_roots, sync_all)
            except CleanStop as exc:
                self.checkpoint()  # keep what was written: every batch of it is whole
                raise exc.__cause__ or exc from None
            self._index()
        finally:
            stop.set()
            pool.shutdown(wait=True, cancel_futures=True)
            while loader.is_alive():
                with contextlib.suppress(queue.Empty):
                    loaded.get(timeout=0.05)
            loader.join()
        c = self.counts
        return IngestReport(
            inserted=c["inserted"],
            updated=c["updated"],
            unchanged=c["unchanged"],
            deleted=c["deleted"],
            skipped=c["skipped"],
            embedded=self.embedded,
            failed=tuple(self.failures),
            audit=tuple(self.audit),
            fields=dict(self.fields),
        )

    def _load(self, batches: Iterator[LoadedBatch], out: Loaded, stop: threading.Event) -> None:
        def put(item: LoadedBatch | BaseException | None) -> bool:
            while not stop.is_set():
                try:
                    out.put(item, timeout=0.1)
                    return True
                except queue.Full:
                    continue
            return False

        try:
            for batch in batches:
                self.loaded_chunks += len(batch.records)
                if not put(batch):
                    return
        except BaseException as exc:  # handed to the writer's thread, raised there
            put(exc)
            return
        put(None)

    def _pipeline(self, loaded: Loaded, pool: ThreadPoolExecutor) -> None:
        pending: deque[tuple[LoadedBatch, IngestPlan, Future[None]]] = deque()
        more = True
        every = self.options.every()
        since = time.monotonic()
        while True:
            while more and len(pending) < self.options.inflight:
                try:
                    item = loaded.get(block=not pending)
                except queue.Empty:
                    break
                if item is None:
                    more = False
                elif isinstance(item, BaseException):
                    raise CleanStop() from item
                else:
                    try:
                        plan = self.plan(item)
                    except Exception as exc:
                        raise CleanStop() from exc
                    pending.append((item, plan, pool.submit(self.embed, plan)))
            if not pending:
                return
            batch, plan, future = pending.popleft()
            try:
                future.result()
            except Exception as exc:
                raise CleanStop() from exc
            self.apply(batch, plan)
            self.tell("write")
            if time.monotonic() - since >= every:
                self.checkpoint()
                since = time.monotonic()

    def _sync(self, roots: Sequence[Path] | None, sync_all: bool) -> None:
        store = self.col.store
        rest = {
            s.record.id: s
            for s in store.scan(self.tenant, with_meta=bool(roots))
            if s.record.id not in self.touched
        }
        plan = plan_ingest((), rest, tenant=self.tenant, sync_roots=roots, sync_all=sync_all)
        if not plan.empty:
            apply_plan(self.col, plan, ApplyOptions(embedder=self.embedder))
            self.counts["deleted"] += len(plan.deletes)
            if self.options.collect_audit:
                self.audit.extend(plan.audit)

    def _index(self) -> None:
        """One index build after a large run (each batch is too small to ask for one)."""
        changed = self.counts["inserted"] + self.counts["updated"]
        if not self.col.writable or not changed or not self.col.store.needs_index(changed):
            return
        self.tell("index")
        self.col.store.optimize()
        if self.col.needs_units:
            self.col.units.optimize()

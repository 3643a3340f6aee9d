"""Bulk ingest: a folder or a JSON Lines file of 100k+ documents, in bounded memory, resumable.

::

    report = bulk_ingest(ts, ["corpus.jsonl"], collection="docs", on_progress=print)

Three stages run at once, with a fixed number of batches between them, so memory stays
bounded however large the input:

1. **load** (a thread): files are read one after another (a large ``.jsonl`` a line at a
   time) and cut into batches of whole documents (:mod:`tansaku.ingest.stream`);
2. **embed** (a small pool): each batch is planned against what is stored
   (:mod:`tansaku.ingest.plan`, only its own documents are read) and the texts it changes are
   embedded through the cache (:class:`~tansaku.embed.cache.CachedEmbedder`), up to
   ``inflight`` batches ahead of the writer;
3. **write** (the caller's thread, the collection's one writer): the collection applies each
   plan (``Collection.apply``: analysis, records, units, statistics) — its vectors come from
   the cache — and the writer commits a checkpoint at least every ``checkpoint_every``
   seconds (``$TANSAKU_CHECKPOINT_S``, default 60).

**Resumable.** A run killed at any point (``kill -9`` included) leaves the collection as its
last checkpoint committed it (``tansaku.backends.embedded.generations``); the next run plans every
batch again,
finds the committed ones unchanged (nothing written), and the texts embedded before the kill in
the cache (nothing embedded twice). A run stopped by an error of the loaders or the embedder
commits the batches it wrote before raising.
"""

from __future__ import annotations

import contextlib
import os
import queue
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from tansaku.backends.locks import WaitFn
from tansaku.collection import Collection, guard
from tansaku.config import CollectionConfig, load_config
from tansaku.embed.cache import CachedEmbedder
from tansaku.faults import crashpoint
from tansaku.ingest.apply import CHECKPOINT_S, ENV_CHECKPOINT, ApplyOptions, ProgressFn, apply_plan
from tansaku.ingest.pipeline import stored_for
from tansaku.ingest.plan import IngestPlan, dedupe, plan_ingest
from tansaku.ingest.progress import BulkProgress, Meter
from tansaku.ingest.report import KEPT, AuditRow, Failure, IngestReport
from tansaku.ingest.stream import STREAM_BYTES, LoadedBatch, load_batches, record_batches, walk
from tansaku.records import Record
from tansaku.workspace import DEFAULT_TEAM, validate_name

BulkProgressFn = Callable[[BulkProgress], None]


class IngestTarget(Protocol):
    """Where a bulk ingest writes: the library's facade (:class:`tansaku.client.Tansaku`)."""

    @property
    def embedder(self) -> CachedEmbedder: ...

    def writing(
        self,
        name: str,
        *,
        config: CollectionConfig | None = None,
        on_wait: WaitFn | None = None,
        lazy: bool = False,
    ) -> AbstractContextManager[Collection]:
        """The collection opened for writing, committed when the block ends."""
        ...

    def checkpoint(self, col: Collection) -> None:
        """Publish what the writer wrote so far and go on writing."""
        ...


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


class _Clean(Exception):
    """An error between batches (loading, planning, embedding): what is written is whole."""


class _Run:
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
            except _Clean as exc:
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
                    raise _Clean() from item
                else:
                    try:
                        plan = self.plan(item)
                    except Exception as exc:
                        raise _Clean() from exc
                    pending.append((item, plan, pool.submit(self.embed, plan)))
            if not pending:
                return
            batch, plan, future = pending.popleft()
            try:
                future.result()
            except Exception as exc:
                raise _Clean() from exc
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


def _config(
    collection: str, config: CollectionConfig | str | Path | None
) -> CollectionConfig | None:
    validate_name(collection)
    if isinstance(config, str | Path):
        config = load_config(config, name=collection)
    return config.with_name(collection) if config is not None else None


class _Reporter:
    """Tells ``progress`` (stage, done, total — what the server's jobs keep) and
    ``on_progress`` (a :class:`BulkProgress` with rates and the time left)."""

    def __init__(
        self,
        progress: ProgressFn | None,
        on_progress: BulkProgressFn | None,
        files_total: int,
        bytes_total: int,
    ) -> None:
        self.progress, self.on_progress = progress, on_progress
        self.files_total, self.bytes_total = files_total, bytes_total
        self.meter = Meter()
        self.run: _Run | None = None

    def __call__(self, stage: str) -> None:
        run = self.run
        if run is None:
            return
        c, last = run.counts, run.last
        done = stage in ("sync", "index", "done")
        files = self.files_total if done else last.files_done
        if self.progress is not None:
            self.progress("load", files, self.files_total)
            self.progress("write", c["chunks"], max(run.loaded_chunks, c["chunks"]))
            if stage in ("sync", "index"):
                self.progress(stage, 0, 1)
        if self.on_progress is not None:
            self.on_progress(
                self.meter.report(
                    stage=stage,
                    files_done=files,
                    files_total=self.files_total,
                    bytes_done=self.bytes_total if done else last.bytes_done,
                    bytes_total=self.bytes_total,
                    documents=c["documents"],
                    chunks=c["chunks"],
                    written=c["inserted"] + c["updated"],
                    embedded=run.embedded,
                )
            )


def _ingest(
    ts: IngestTarget,
    batches: Callable[[Collection], Iterator[LoadedBatch]],
    reporter: _Reporter,
    *,
    collection: str,
    team: str,
    config: CollectionConfig | str | Path | None,
    on_wait: WaitFn | None,
    options: BulkOptions,
    sync_roots: Sequence[Path] | None = None,
    sync_all: bool = False,
) -> IngestReport:
    validate_name(team, "チーム名")
    cfg = _config(collection, config)
    with ts.writing(collection, config=cfg, on_wait=on_wait, lazy=True) as col:
        embedder = ts.embedder if col.needs_dense else None
        run = _Run(col, embedder, team, options, reporter, ts.checkpoint)
        reporter.run = run
        report = run.execute(batches(col), sync_roots=sync_roots, sync_all=sync_all)
    reporter("done")
    return report


def bulk_ingest(
    ts: IngestTarget,
    paths: Sequence[str | Path],
    *,
    collection: str,
    team: str = DEFAULT_TEAM,
    config: CollectionConfig | str | Path | None = None,
    sync: bool = False,
    progress: ProgressFn | None = None,
    on_progress: BulkProgressFn | None = None,
    on_wait: WaitFn | None = None,
    follow_symlinks: bool = False,
    options: BulkOptions | None = None,
) -> IngestReport:
    """Load files and folders into ``collection`` for ``team`` as a bounded pipeline (see the
    module docstring); the same report, the same records and the same failures as
    :meth:`Tansaku.ingest <tansaku.client.Tansaku.ingest>`, and the same ``progress``
    stages (``load``, ``write``, then ``sync`` / ``index``), with ``on_progress`` told
    rates and the time left after every batch. The writer lock is held for the whole run."""
    opts = options or BulkOptions()
    sources = walk(paths, follow_symlinks=follow_symlinks)
    reporter = _Reporter(progress, on_progress, len(sources.files), sources.total_bytes)

    def batches(col: Collection) -> Iterator[LoadedBatch]:
        assert reporter.run is not None
        sink = reporter.run.failures
        return load_batches(
            sources,
            col.config,
            batch_records=opts.batch_records,
            stream_bytes=opts.stream_bytes,
            on_failure=sink.append,
        )

    roots = [Path(p) for p in paths if Path(p).exists()] if sync else None
    return _ingest(
        ts,
        batches,
        reporter,
        collection=collection,
        team=team,
        config=config,
        on_wait=on_wait,
        options=opts,
        sync_roots=roots,
    )


def bulk_ingest_records(
    ts: IngestTarget,
    records: Iterable[Record],
    *,
    collection: str,
    team: str = DEFAULT_TEAM,
    config: CollectionConfig | str | Path | None = None,
    sync: bool = False,
    progress: ProgressFn | None = None,
    on_progress: BulkProgressFn | None = None,
    on_wait: WaitFn | None = None,
    options: BulkOptions | None = None,
) -> IngestReport:
    """Records you build yourself (a generator is read as the pipeline goes, never whole);
    ``sync`` makes the collection mirror them. Keep each document's records together."""
    opts = options or BulkOptions()
    reporter = _Reporter(progress, on_progress, 0, 0)
    return _ingest(
        ts,
        lambda _col: record_batches(records, batch_records=opts.batch_records),
        reporter,
        collection=collection,
        team=team,
        config=config,
        on_wait=on_wait,
        options=opts,
        sync_all=sync,
    )


__all__ = [
    "BulkOptions",
    "BulkProgress",
    "BulkProgressFn",
    "IngestTarget",
    "bulk_ingest",
    "bulk_ingest_records",
]

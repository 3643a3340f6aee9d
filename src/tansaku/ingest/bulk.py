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
   plan (``tansaku.ingest.apply``: analysis, records, units, statistics) — its vectors come from
   the cache — and the writer commits a checkpoint at least every ``checkpoint_every``
   seconds (``$TANSAKU_CHECKPOINT_S``, default 60).

**Resumable.** A run killed at any point (``kill -9`` included) leaves the collection as its
last checkpoint committed it (``tansaku.backends.embedded.generations``); the next run plans every
batch again, finds the committed ones unchanged (nothing written), and the texts embedded before the
kill in the cache (nothing embedded twice). A run stopped by an error of the loaders or the embedder
commits the batches it wrote before raising.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import Any, Protocol, TypedDict, Unpack

from tansaku.backends import WriterOptions
from tansaku.backends.locks import WaitFn
from tansaku.collection import Collection
from tansaku.config import CollectionConfig
from tansaku.embed.cache import CachedEmbedder
from tansaku.errors import check_keywords
from tansaku.ingest.apply import ProgressFn
from tansaku.ingest.bulk_run import BulkOptions, BulkRun
from tansaku.ingest.loaders.settings import IngestLimits
from tansaku.ingest.pipeline import collection_config, sync_roots_of
from tansaku.ingest.progress import BulkProgress, Meter
from tansaku.ingest.report import IngestReport
from tansaku.ingest.stream import LoadedBatch, load_batches, record_batches, walk
from tansaku.records import Record
from tansaku.workspace import DEFAULT_TEAM

BulkProgressFn = Callable[[BulkProgress], None]


class IngestTarget(Protocol):
    """Where a bulk ingest writes: the library's facade (:class:`tansaku.client.Tansaku`)."""

    @property
    def embedder(self) -> CachedEmbedder: ...

    def writing(
        self, name: str, **options: Unpack[WriterOptions]
    ) -> AbstractContextManager[Collection]:
        """The collection opened for writing, committed when the block ends."""
        ...

    def checkpoint(self, col: Collection) -> None:
        """Publish what the writer wrote so far and go on writing."""
        ...

    @property
    def ingest_limits(self) -> IngestLimits:
        """What one file may cost (the workspace's ``[ingest]``, ``tansaku.ingest.limits``)."""
        ...


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
        self.run: BulkRun | None = None

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


@contextmanager
def _writer(
    ts: IngestTarget, collection: str, config: CollectionConfig | None, on_wait: WaitFn | None
) -> Iterator[tuple[Collection, CachedEmbedder | None]]:
    """The collection opened for writing (committed when the block ends) and the embedder its
    dense axes need (``None`` without one)."""
    with ts.writing(collection, config=config, on_wait=on_wait, lazy=True) as col:
        yield col, ts.embedder if col.needs_dense else None


class BulkIngestOptions(TypedDict, total=False):
    """The keywords :func:`bulk_ingest` and :func:`bulk_ingest_records` share besides the
    collection, each optional."""

    team: str
    """The team the records belong to (default ``DEFAULT_TEAM``)."""
    config: CollectionConfig | str | Path | None
    """The collection's config, or the path of its TOML (default: the collection's own)."""
    sync: bool
    """Make the collection mirror the input: documents it no longer has are deleted."""
    progress: ProgressFn | None
    """Told (stage, done, total): ``load``, ``write``, then ``sync`` / ``index``."""
    on_progress: BulkProgressFn | None
    """Told a :class:`BulkProgress` (rates, the time left) after every batch."""
    on_wait: WaitFn | None
    """Told once, in Japanese, when the writer lock is busy and the run waits for it."""
    options: BulkOptions | None
    """How the run paces itself (default ``BulkOptions()``)."""


def _ingest(
    ts: IngestTarget,
    batches: Callable[[Collection], Iterator[LoadedBatch]],
    reporter: _Reporter,
    opts: BulkOptions,
    *,
    collection: str,
    sync_roots: Sequence[Path] | None = None,
    sync_all: bool = False,
    **kw: Unpack[BulkIngestOptions],
) -> IngestReport:
    team = kw.get("team", DEFAULT_TEAM)
    cfg = collection_config(collection, kw.get("config"), team)
    with _writer(ts, collection, cfg, kw.get("on_wait")) as (col, embedder):
        run = BulkRun(col, embedder, team, opts, reporter, ts.checkpoint)
        reporter.run = run
        report = run.execute(batches(col), sync_roots=sync_roots, sync_all=sync_all)
    reporter("done")
    return report


def bulk_ingest(
    ts: IngestTarget,
    paths: Sequence[str | Path],
    *,
    collection: str,
    follow_symlinks: bool = False,
    **kw: Unpack[BulkIngestOptions],
) -> IngestReport:
    """Load files and folders into ``collection`` for ``team`` as a bounded pipeline (see the
    module docstring); the same report, the same records and the same failures as
    :meth:`Tansaku.ingest <tansaku.client.Tansaku.ingest>`, and the same ``progress``
    stages (``load``, ``write``, then ``sync`` / ``index``), with ``on_progress`` told
    rates and the time left after every batch. The writer lock is held for the whole run.
    ``follow_symlinks`` also follows links that leave the given folders; the other keywords
    are :class:`BulkIngestOptions`."""
    check_keywords("bulk_ingest", kw, BulkIngestOptions)
    opts = kw.get("options") or BulkOptions()
    sources = walk(paths, follow_symlinks=follow_symlinks)
    files, size = len(sources.files), sources.total_bytes
    reporter = _Reporter(kw.get("progress"), kw.get("on_progress"), files, size)
    limits = ts.ingest_limits  # an invalid [ingest] of tansaku.toml fails before any work

    def batches(col: Collection) -> Iterator[LoadedBatch]:
        assert reporter.run is not None
        sink = reporter.run.failures
        return load_batches(
            sources,
            col.config,
            batch_records=opts.batch_records,
            stream_bytes=opts.stream_bytes,
            on_failure=sink.append,
            limits=limits,
        )

    roots = sync_roots_of(paths) if kw.get("sync") else None
    return _ingest(ts, batches, reporter, opts, collection=collection, sync_roots=roots, **kw)


def bulk_ingest_records(
    ts: IngestTarget,
    records: Iterable[Record],
    *,
    collection: str,
    **kw: Unpack[BulkIngestOptions],
) -> IngestReport:
    """Records you build yourself (a generator is read as the pipeline goes, never whole);
    ``sync`` makes the collection mirror them. Keep each document's records together. The
    keywords besides ``collection`` are :class:`BulkIngestOptions`."""
    check_keywords("bulk_ingest_records", kw, BulkIngestOptions)
    opts = kw.get("options") or BulkOptions()
    reporter = _Reporter(kw.get("progress"), kw.get("on_progress"), 0, 0)
    return _ingest(
        ts,
        lambda _col: record_batches(records, batch_records=opts.batch_records),
        reporter,
        opts,
        collection=collection,
        sync_all=kw.get("sync", False),
        **kw,
    )


def write_records(
    ts: IngestTarget,
    collection: str,
    config: CollectionConfig | None,
    records: Iterable[Record],
    team: str,
    on_wait: WaitFn | None,
    progress: ProgressFn | None,
    **options: Any,
) -> IngestReport:
    """``records`` into ``collection`` as one writer, planned whole then applied
    (:func:`tansaku.ingest.pipeline.ingest_records`): checkpoints publish as it goes."""
    from tansaku.ingest.pipeline import ingest_records

    with _writer(ts, collection, config, on_wait) as (col, embedder):
        return ingest_records(
            col,
            records,
            embedder,
            tenant=team,
            progress=progress,
            checkpoint=lambda: ts.checkpoint(col),
            **options,
        )


__all__ = [
    "BulkIngestOptions",
    "BulkOptions",
    "BulkProgress",
    "BulkProgressFn",
    "IngestTarget",
    "bulk_ingest",
    "bulk_ingest_records",
    "write_records",
]

"""Sources as a stream of record batches: what a bulk ingest reads, one batch at a time.

Files are walked first (paths and sizes only: the total a progress bar needs), then loaded one
after another; their records are cut into batches of about ``batch_records`` at document
boundaries (a document's records always travel together, so each batch can be planned on its
own). A JSON Lines file larger than ``stream_bytes`` is read a line at a time
(:mod:`~tansaku.ingest.loaders.jsonstream`): memory holds a batch, never a whole corpus.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from tansaku.config import CollectionConfig
from tansaku.ingest.loaders import _limits, _os_reason, ingest_settings, load_file
from tansaku.ingest.loaders.base import LoadFailure
from tansaku.ingest.loaders.jsonstream import stream_jsonl
from tansaku.ingest.loaders.settings import IngestLimits
from tansaku.ingest.report import Failure
from tansaku.ingest.sources import SourceFile, iter_source_files
from tansaku.records import Record

STREAM_BYTES = 8_000_000  # a .jsonl larger than this is read a line at a time
FailureFn = Callable[[Failure], None]


@dataclass(frozen=True)
class Sources:
    """The files of an ingest, walked but not read."""

    files: tuple[SourceFile, ...]
    sizes: tuple[int, ...]

    @property
    def total_bytes(self) -> int:
        return sum(self.sizes)


@dataclass(frozen=True)
class LoadedBatch:
    """Records of whole documents, and how far the sources are read once they are handled."""

    records: tuple[Record, ...]
    documents: int
    files_done: int
    """Files completely read when this batch is handled."""
    bytes_done: int
    """Source bytes read when this batch is handled (a streamed file counts line by line)."""


def walk(paths: Sequence[str | Path], *, follow_symlinks: bool = False) -> Sources:
    """The files under ``paths`` (see :func:`~tansaku.ingest.sources.iter_source_files`) and
    their sizes (0 for a file that cannot be stat-ed: its loader reports it)."""
    files = tuple(iter_source_files([Path(p) for p in paths], follow_symlinks=follow_symlinks))
    sizes = []
    for f in files:
        try:
            sizes.append(0 if f.refused else os.stat(f.path).st_size)
        except OSError:
            sizes.append(0)
    return Sources(files, tuple(sizes))


class _Batcher:
    """Groups records by document and cuts batches of about ``size`` records."""

    def __init__(self, size: int) -> None:
        self.size = size
        self.records: list[Record] = []
        self.documents = 0

    def add(self, records: Iterable[Record]) -> Iterator[tuple[tuple[Record, ...], int]]:
        docs: dict[str, list[Record]] = {}
        for r in records:
            docs.setdefault(r.doc_id, []).append(r)
        for group in docs.values():
            if self.records and len(self.records) + len(group) > self.size:
                yield self.flush()
            self.records.extend(group)
            self.documents += 1

    def flush(self) -> tuple[tuple[Record, ...], int]:
        out = (tuple(self.records), self.documents)
        self.records, self.documents = [], 0
        return out


def _streamed(
    source: SourceFile, config: CollectionConfig, lines: int, base: IngestLimits | None
) -> Iterator[tuple[tuple[Record, ...], list[Failure], int]]:
    settings = ingest_settings(config.ingest, base)
    limits = _limits(settings, None, None)
    try:
        for part in stream_jsonl(source, config, settings, limits, lines_per_part=lines):
            yield part.records, [Failure(e.path, e.reason) for e in part.errors], part.offset
    except LoadFailure as exc:
        yield (), [Failure(str(source.path), exc.reason)], 0
    except OSError as exc:
        yield (), [Failure(str(source.path), _os_reason(exc))], 0


def _whole(
    source: SourceFile, config: CollectionConfig, base: IngestLimits | None
) -> Iterator[tuple[tuple[Record, ...], list[Failure], int]]:
    result = load_file(source, config, limits=base)
    yield result.records, [Failure(e.path, e.reason) for e in result.errors], 0


def load_batches(
    sources: Sources,
    config: CollectionConfig,
    *,
    batch_records: int = 256,
    stream_bytes: int = STREAM_BYTES,
    on_failure: FailureFn | None = None,
    limits: IngestLimits | None = None,
) -> Iterator[LoadedBatch]:
    """Load ``sources`` in order and yield their records in batches of whole documents, under
    the workspace's ``limits``.
    Failures (a file, a line) go to ``on_failure`` as they are found; nothing raises for a
    bad file (only an invalid ``[ingest]`` table raises :class:`~tansaku.errors.ConfigError`)."""
    batcher = _Batcher(batch_records)
    done_bytes = 0
    for i, (source, size) in enumerate(zip(sources.files, sources.sizes, strict=True)):
        stream = (
            not source.refused and source.path.suffix.lower() == ".jsonl" and size > stream_bytes
        )
        parts = (
            _streamed(source, config, batch_records, limits)
            if stream
            else _whole(source, config, limits)
        )
        for records, failures, offset in parts:
            for f in failures:
                if on_failure is not None:
                    on_failure(f)
            for recs, docs in batcher.add(records):
                yield LoadedBatch(recs, docs, i, done_bytes + min(offset, size))
        done_bytes += size
    recs, docs = batcher.flush()
    yield LoadedBatch(recs, docs, len(sources.files), done_bytes)


def record_batches(records: Iterable[Record], *, batch_records: int = 256) -> Iterator[LoadedBatch]:
    """Records you built yourself, in batches cut where the document changes (a document's
    records should come together; if they do not, the plan still ends right)."""
    batch: list[Record] = []
    docs = 0
    last = None
    for r in records:
        if r.doc_id != last:
            if len(batch) >= batch_records:
                yield LoadedBatch(tuple(batch), docs, 0, 0)
                batch, docs = [], 0
            docs += 1
            last = r.doc_id
        batch.append(r)
    yield LoadedBatch(tuple(batch), docs, 0, 0)


__all__ = ["STREAM_BYTES", "LoadedBatch", "Sources", "load_batches", "record_batches", "walk"]

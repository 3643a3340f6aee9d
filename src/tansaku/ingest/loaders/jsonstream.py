"""JSON Lines read a line at a time: a bulk ingest of a 100k-object ``.jsonl`` holds one line,
never the file.

The objects become records exactly as :func:`~tansaku.ingest.loaders.jsonrecords.load_json`
makes them (same ids, fields, metadata, per-line errors); what differs is the size cap: the
whole-file cap (``[ingest] max_file_mb``) bounds one *line* here, since memory no longer grows
with the file. A line over it is reported with its number and skipped. The file is opened the
way :func:`~tansaku.ingest.loaders.reading.read_capped` opens one: regular files only, never a
FIFO or a device.
"""

from __future__ import annotations

import io
import json
import os
from collections.abc import Iterator
from dataclasses import dataclass

from tansaku.config import CollectionConfig
from tansaku.errors import LoadError
from tansaku.ingest.loaders.base import LoadFailure
from tansaku.ingest.loaders.jsonrecords import _ObjectLoader
from tansaku.ingest.loaders.reading import _check, _open, size_label
from tansaku.ingest.loaders.settings import IngestLimits, IngestSettings
from tansaku.ingest.sources import SourceFile
from tansaku.records import Record

BOM = b"\xef\xbb\xbf"


@dataclass(frozen=True)
class LinesRead:
    """What some lines of a JSON Lines file produced, and how far into the file they reach."""

    records: tuple[Record, ...]
    errors: tuple[LoadError, ...]
    offset: int
    """Bytes of the file read so far (the end of the last line of this part)."""


def _too_long(number: int, max_bytes: int) -> str:
    return (
        f"{number}行目が大きすぎます(上限は {size_label(max_bytes)})。この行は読み込みません"
        "([ingest] max_file_mb で上限を変えられます)"
    )


def _skip_rest(fh: io.BufferedReader[io.FileIO], block: int) -> int:
    """Read past the end of an over-long line; returns the bytes skipped."""
    skipped = 0
    while True:
        part = fh.readline(block)
        skipped += len(part)
        if not part or part.endswith(b"\n"):
            return skipped


def stream_jsonl(
    source: SourceFile,
    config: CollectionConfig,
    settings: IngestSettings,
    limits: IngestLimits,
    *,
    lines_per_part: int = 256,
) -> Iterator[LinesRead]:
    """The records of ``source`` (JSON Lines), ``lines_per_part`` lines at a time.

    Raises :class:`LoadFailure` when the file cannot be used at all (not a regular file, UTF-16,
    no line of it loads); ``OSError`` for the caller to word (missing, no permission).
    """
    st = os.stat(source.path)
    _check(st.st_mode)
    fd = _open(source.path)
    try:
        _check(os.fstat(fd).st_mode)
        fh = io.BufferedReader(io.FileIO(fd, "rb"), buffer_size=1 << 20)
    except BaseException:
        os.close(fd)
        raise
    loader = _ObjectLoader(source, config, settings)
    cap, max_chunks = limits.max_file_bytes, limits.max_chunks_per_document
    loaded = 0
    with fh:
        head = fh.peek(4)[:4]
        if head.startswith((b"\xff\xfe", b"\xfe\xff")):
            raise LoadFailure(
                "UTF-16 の大きな JSON Lines は読めません。UTF-8 で保存し直してください"
            )
        records: list[Record] = []
        errors: list[LoadError] = []
        offset, number, in_part, failed = 0, 0, 0, 0
        while True:
            raw = fh.readline(cap + 1)
            if not raw:
                break
            number += 1
            offset += len(raw)
            if number == 1 and raw.startswith(BOM):
                raw = raw[len(BOM) :]
            where, label = f"{source.path}:{number}", f"{number}行目"
            if len(raw) > cap and not raw.endswith(b"\n"):
                offset += _skip_rest(fh, 1 << 20)
                errors.append(LoadError(where, _too_long(number, cap)))
            elif raw.strip():
                in_part += 1
                got = _object(loader, raw, where, label, f"{source.doc_prefix}#{number}", errors)
                if len(got) > max_chunks:
                    errors.append(LoadError(where, _over_cap(got[0].doc_id, len(got), max_chunks)))
                else:
                    records.extend(got)
                    loaded += bool(got)
            if in_part >= lines_per_part:
                failed += len(errors)
                yield LinesRead(tuple(records), tuple(errors), offset)
                records, errors, in_part = [], [], 0
        if number == 0:
            errors.append(LoadError(str(source.path), "ファイルが空です"))
        elif not loaded and not failed and not errors:
            errors.append(LoadError(str(source.path), "検索できるテキストがありません"))
        yield LinesRead(tuple(records), tuple(errors), offset)


def _object(
    loader: _ObjectLoader,
    raw: bytes,
    where: str,
    label: str,
    fallback: str,
    errors: list[LoadError],
) -> list[Record]:
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        errors.append(
            LoadError(
                where, f"{label}が UTF-8 として読めません({exc.start}バイト目)。読み込みません"
            )
        )
        return []
    try:
        obj = json.loads(text)
    except json.JSONDecodeError as exc:
        errors.append(LoadError(where, f"{label}のJSONが不正です: {exc.msg}({exc.colno}文字目)"))
        return []
    return loader.records((where, label, fallback, obj), errors)


def _over_cap(doc_id: str, n: int, cap: int) -> str:
    return (
        f"文書「{doc_id}」のチャンク数({n:,})が上限({cap:,})を超えるため、"
        "この文書は読み込みません([ingest] max_chunks_per_document で上限を変えられます)"
    )


__all__ = ["LinesRead", "stream_jsonl"]

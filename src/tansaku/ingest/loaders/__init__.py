"""File loaders: one module per format, dispatched by suffix.

:func:`load_file` never raises for a bad file: a whole-file problem (missing, unreadable,
corrupt, empty, unsupported, refused by the walk, not a regular file, over the size cap) comes
back as ``LoadResult((), (LoadError(path, 理由),))``, and per-line problems as errors beside the
records that did load. A document over the chunk cap is dropped and reported. Only an invalid
``[ingest]`` table raises (:class:`~tansaku.errors.ConfigError`), since no file could fix it.

Loaders never open a path: :func:`load_file` reads the bytes (:mod:`reading`) and hands them
over.
"""

from __future__ import annotations

import dataclasses
import json
from collections import Counter
from collections.abc import Mapping

from tansaku.config import CollectionConfig
from tansaku.errors import ConfigError, LoadError
from tansaku.ingest.loaders.archive import check_archive, is_archive
from tansaku.ingest.loaders.base import Loader, LoadFailure, LoadResult
from tansaku.ingest.loaders.delimited import load_csv
from tansaku.ingest.loaders.jsonrecords import load_json
from tansaku.ingest.loaders.markdown import load_markdown
from tansaku.ingest.loaders.pdf import load_pdf
from tansaku.ingest.loaders.plaintext import load_text
from tansaku.ingest.loaders.reading import read_capped
from tansaku.ingest.loaders.settings import IngestLimits, IngestSettings, ingest_settings
from tansaku.ingest.loaders.word import load_docx
from tansaku.ingest.sources import SUPPORTED_SUFFIXES, SourceFile

COMBINED = "combined"  # the field of a document's whole text (sections, json, csv)

LOADERS: Mapping[str, Loader] = {
    ".md": load_markdown,
    ".markdown": load_markdown,
    ".txt": load_text,
    ".pdf": load_pdf,
    ".docx": load_docx,
    ".csv": load_csv,
    ".tsv": load_csv,
    ".jsonl": load_json,
    ".json": load_json,
}
NOT_FOUND = "ファイルが見つかりません"


def _failure(source: SourceFile, reason: str) -> LoadResult:
    return LoadResult((), (LoadError(str(source.path), reason),))


def _os_reason(exc: OSError) -> str:
    if isinstance(exc, PermissionError):
        return "読み取り権限がありません"
    if isinstance(exc, FileNotFoundError):
        return NOT_FOUND
    if isinstance(exc, IsADirectoryError):
        return "ファイルではなくディレクトリです"
    return f"ファイルを読み込めません: {exc.strerror or exc}"


def _limits(
    settings: IngestSettings, max_file_bytes: int | None, max_chunks_per_document: int | None
) -> IngestLimits:
    limits = settings.limits
    if max_file_bytes is not None:
        limits = dataclasses.replace(limits, max_file_bytes=max_file_bytes)
    if max_chunks_per_document is not None:
        limits = dataclasses.replace(limits, max_chunks_per_document=max_chunks_per_document)
    return limits


def _cap_chunks(source: SourceFile, result: LoadResult, cap: int) -> LoadResult:
    """Drop every document with more than ``cap`` records, and say so."""
    counts = Counter(r.doc_id for r in result.records)
    over = {doc: n for doc, n in counts.items() if n > cap}
    if not over:
        return result
    hint = "([ingest] max_chunks_per_document で上限を変えられます)"
    errors = list(result.errors)
    for doc, n in over.items():
        if len(counts) == 1 and doc == source.doc_prefix:
            what = "このファイル"
            reason = f"チャンク数({n:,})が上限({cap:,})を超えるため、{what}は読み込みません{hint}"
        else:
            reason = (
                f"文書「{doc}」のチャンク数({n:,})が上限({cap:,})を超えるため、"
                f"この文書は読み込みません{hint}"
            )
        errors.append(LoadError(str(source.path), reason))
    kept = tuple(r for r in result.records if r.doc_id not in over)
    return LoadResult(kept, tuple(errors))


def _metadata_cost(metadata: Mapping[str, object]) -> int:
    return len(json.dumps(metadata, ensure_ascii=False, default=str).encode("utf-8"))


def _cap_metadata(source: SourceFile, result: LoadResult, limits: IngestLimits) -> LoadResult:
    """Drop every document whose metadata has too many keys or bytes, and say so."""
    over: dict[str, str] = {}
    for r in result.records:
        if r.doc_id in over:
            continue
        keys, size = len(r.metadata), _metadata_cost(r.metadata)
        if keys > limits.max_metadata_keys:
            over[r.doc_id] = f"メタデータの項目数({keys:,})が上限({limits.max_metadata_keys:,})"
        elif size > limits.max_metadata_bytes:
            over[r.doc_id] = (
                f"メタデータの大きさ({size:,} バイト)が上限({limits.max_metadata_bytes:,} バイト)"
            )
    if not over:
        return result
    errors = list(result.errors)
    for doc, what in over.items():
        errors.append(
            LoadError(
                str(source.path),
                f"ファイル「{source.path.name}」の文書「{doc}」は{what}を超えるため読み込みません",
            )
        )
    kept = tuple(r for r in result.records if r.doc_id not in over)
    return LoadResult(kept, tuple(errors))


def load_file(
    source: SourceFile,
    config: CollectionConfig,
    *,
    limits: IngestLimits | None = None,
    max_file_bytes: int | None = None,
    max_chunks_per_document: int | None = None,
) -> LoadResult:
    """Load one file into records under the collection's ``[ingest]`` settings.

    ``limits``: the workspace's (``tansaku.ingest.limits.workspace_limits``; default: the
    built-in ones), under the collection's own ``[ingest] max_file_mb`` /
    ``max_chunks_per_document``. ``max_file_bytes`` / ``max_chunks_per_document`` override
    both for this call. A file refused by
    :func:`~tansaku.ingest.sources.iter_source_files`, or that is not a regular file, is
    reported without being opened; a larger file is reported without being read.

    Raises :class:`~tansaku.errors.ConfigError` only for an invalid ``[ingest]`` table, and
    ``ValueError`` for a cap that is not positive.
    """
    settings: IngestSettings = ingest_settings(config.ingest, limits)
    limits = _limits(settings, max_file_bytes, max_chunks_per_document)
    if source.refused:
        return _failure(source, source.refused)
    path = source.path
    try:
        if not path.exists():
            return _failure(source, NOT_FOUND)
        if path.is_dir():
            return _failure(source, "ファイルではなくディレクトリです")
    except OSError as exc:
        return _failure(source, _os_reason(exc))
    suffix = path.suffix.lower()
    loader = LOADERS.get(suffix)
    if loader is None:
        supported = " ".join(sorted(SUPPORTED_SUFFIXES))
        return _failure(
            source, f"対応していない形式です({suffix or '拡張子なし'})。対応形式: {supported}"
        )
    try:
        data = read_capped(path, limits.max_file_bytes)
        if is_archive(suffix, data):  # before any loader inflates it
            check_archive(data, path.name, limits)
        result = loader(source, data, config, settings)
    except LoadFailure as exc:
        return _failure(source, exc.reason)
    except OSError as exc:
        return _failure(source, _os_reason(exc))
    except ConfigError:
        raise
    except Exception as exc:  # one odd file must not stop an ingest of thousands
        return _failure(
            source, f"読み込み中に予期しないエラーが起きました: {type(exc).__name__}: {exc}"
        )
    if not settings.combined:
        kept = tuple(r for r in result.records if r.field != COMBINED)
        result = dataclasses.replace(result, records=kept)
    if not result.records and not result.errors:
        return _failure(source, "検索できるテキストがありません")
    result = _cap_metadata(source, result, limits)
    return _cap_chunks(source, result, limits.max_chunks_per_document)


__all__ = [
    "LOADERS",
    "IngestLimits",
    "LoadResult",
    "SourceFile",
    "ingest_settings",
    "load_file",
]

"""File loaders: one module per format, dispatched by suffix.

:func:`load_file` never raises for a bad file: a whole-file problem (missing, unreadable,
corrupt, empty, unsupported) comes back as ``LoadResult((), (LoadError(path, 理由),))``, and
per-line problems as errors beside the records that did load. Only an invalid ``[ingest]``
table raises (:class:`~tansaku.errors.ConfigError`), since no file could fix it.
"""

from __future__ import annotations

from collections.abc import Mapping

from tansaku.config import CollectionConfig
from tansaku.errors import ConfigError, LoadError
from tansaku.ingest.loaders.base import Loader, LoadFailure, LoadResult
from tansaku.ingest.loaders.delimited import load_csv
from tansaku.ingest.loaders.jsonrecords import load_json
from tansaku.ingest.loaders.markdown import load_markdown
from tansaku.ingest.loaders.pdf import load_pdf
from tansaku.ingest.loaders.plaintext import load_text
from tansaku.ingest.loaders.settings import IngestSettings, ingest_settings
from tansaku.ingest.loaders.word import load_docx
from tansaku.ingest.sources import SUPPORTED_SUFFIXES, SourceFile

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


def load_file(source: SourceFile, config: CollectionConfig) -> LoadResult:
    """Load one file into records under the collection's ``[ingest]`` settings.

    Raises :class:`~tansaku.errors.ConfigError` only for an invalid ``[ingest]`` table.
    """
    settings: IngestSettings = ingest_settings(config.ingest)
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
        result = loader(source, config, settings)
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
    if not result.records and not result.errors:
        return _failure(source, "検索できるテキストがありません")
    return result


__all__ = ["LOADERS", "LoadResult", "SourceFile", "ingest_settings", "load_file"]

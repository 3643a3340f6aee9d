"""Shared pieces of the loaders: the result type, decoding, metadata and record building."""

from __future__ import annotations

import datetime as dt
import math
import re
import unicodedata
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from tansaku.config import CollectionConfig
from tansaku.errors import LoadError
from tansaku.ingest.chunking import chunk_spans
from tansaku.ingest.loaders.settings import ENCODINGS_AUTO, IngestSettings
from tansaku.ingest.sources import SourceFile
from tansaku.records import Record, record_id

# Labels of header lines / columns / keys that become well-known metadata keys.
KNOWN_KEYS: Mapping[str, str] = {
    "日付": "date",
    "作成日": "date",
    "実施日": "date",
    "実験日": "date",
    "date": "date",
    "担当": "author",
    "担当者": "author",
    "作成者": "author",
    "著者": "author",
    "記入者": "author",
    "author": "author",
    "バージョン": "version",
    "版": "version",
    "version": "version",
    "カテゴリ": "category",
    "カテゴリー": "category",
    "分類": "category",
    "category": "category",
    "店舗": "store",
    "店舗名": "store",
    "store": "store",
    "タイトル": "title",
    "件名": "title",
    "title": "title",
}
SHORT_VALUE = 64


@dataclass(frozen=True)
class LoadResult:
    """What one file produced: its records and its problems (whole-file or per line)."""

    records: tuple[Record, ...] = ()
    errors: tuple[LoadError, ...] = ()


class LoadFailure(Exception):
    """Raised inside a loader for a whole-file failure; :func:`load_file` turns it into a
    :class:`LoadResult` with one :class:`LoadError`. Never leaves the package."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


Loader = Callable[[SourceFile, bytes, CollectionConfig, IngestSettings], LoadResult]
"""``(source, its bytes, config, settings) -> LoadResult``: :func:`load_file` reads the bytes
(regular files only, under the size cap) so that no loader opens a path itself."""


@dataclass(frozen=True)
class Chunk:
    """A piece of text on its way to a Record, with its own metadata (page, chapter...)."""

    text: str
    metadata: Mapping[str, Any]


# --- decoding -----------------------------------------------------------------------------


def decode(data: bytes, encoding: str = ENCODINGS_AUTO, *, allow_cp932: bool = False) -> str:
    """Bytes → text. ``auto``: UTF-16 by BOM, UTF-8 (BOM or not), then cp932 if allowed."""
    if not data.strip():
        raise LoadFailure("ファイルが空です")
    if encoding != ENCODINGS_AUTO:
        name = "utf-8-sig" if encoding.lower().replace("_", "-") in ("utf-8", "utf8") else encoding
        try:
            text = data.decode(name)
        except UnicodeDecodeError as exc:
            raise LoadFailure(f"文字コード {encoding} として読めません: {exc}") from None
    elif data.startswith((b"\xff\xfe", b"\xfe\xff")):
        text = data.decode("utf-16", errors="replace")
    elif b"\x00" in data:
        raise LoadFailure("テキストではありません(バイナリファイルのようです)")
    else:
        try:
            text = data.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            if not allow_cp932:
                raise LoadFailure(
                    f"UTF-8 として読めません({exc.start}バイト目)。UTF-8 で保存し直してください"
                ) from None
            try:
                text = data.decode("cp932")
            except UnicodeDecodeError:
                raise LoadFailure(
                    "文字コードを判別できません(UTF-8 でも Shift_JIS(cp932) でもありません)"
                ) from None
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    if not text.strip():
        raise LoadFailure("ファイルが空です")
    return text


# --- metadata -----------------------------------------------------------------------------

_DATE = re.compile(r"^(\d{4})\s*[-/.年]\s*(\d{1,2})\s*[-/.月]\s*(\d{1,2})\s*日?(?:[T\s].*)?$")
_DATE_COMPACT = re.compile(r"^(\d{4})(\d{2})(\d{2})$")


def normalize_date(value: Any) -> str | None:
    """``2024-05-01`` / ``2024/5/1`` / ``2024年5月1日`` / a date object → ``YYYY-MM-DD``."""
    if isinstance(value, dt.datetime):
        return value.date().isoformat()
    if isinstance(value, dt.date):
        return value.isoformat()
    if not isinstance(value, str | int):
        return None
    text = unicodedata.normalize("NFKC", str(value)).strip()
    m = _DATE.match(text) or _DATE_COMPACT.match(text)
    if not m:
        return None
    try:
        return dt.date(int(m[1]), int(m[2]), int(m[3])).isoformat()
    except ValueError:
        return None


def canonical_key(label: str, extra: Mapping[str, str] | None = None) -> str | None:
    """The well-known metadata key for a header label or column name (``担当`` → ``author``)."""
    key = unicodedata.normalize("NFKC", label).strip()
    if extra and key in extra:
        return extra[key]
    return KNOWN_KEYS.get(key) or KNOWN_KEYS.get(key.lower())


def json_value(value: Any) -> Any:
    """A metadata value as a JSON scalar or a list of strings; ``None`` to drop it."""
    if value is None:
        return None
    if isinstance(value, bool | int | str):
        return value if value != "" else None
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dt.date):
        return value.isoformat()
    if isinstance(value, list | tuple):
        items = [str(json_value(v)) for v in value if json_value(v) is not None]
        return items or None
    return str(value)


def set_metadata(
    metadata: dict[str, Any], key: str, value: Any, errors: list[LoadError], where: str
) -> None:
    """Set one metadata value; ``date`` is normalised, an unreadable date is reported."""
    if key == "date":
        date = normalize_date(value)
        if date is None:
            if value not in (None, ""):
                errors.append(
                    LoadError(where, f"日付「{value}」を読めません(YYYY-MM-DD で書いてください)")
                )
            return
        metadata["date"] = date
        return
    clean = json_value(value)
    if clean is not None:
        metadata[key] = clean


def source_type(settings_type: str, config: CollectionConfig, default: str) -> str:
    """Per-format ``source_type`` > the collection's ``source_type`` > the loader default."""
    return settings_type or config.source_type or default


def base_metadata(
    source: SourceFile, *, title: str, source_type: str, extra: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    meta: dict[str, Any] = {}
    for key, value in (extra or {}).items():
        clean = json_value(value)
        if clean is not None:
            meta[key] = clean
    meta["title"] = title
    # A row that names its own type (a daily report beside a bulletin post) is more specific
    # than the collection's default.
    if not isinstance(meta.get("source_type"), str) or not meta["source_type"]:
        meta["source_type"] = source_type
    meta["source"] = str(source.path)
    return meta


# --- records ------------------------------------------------------------------------------


MetadataAt = Callable[[int, int], Mapping[str, Any]]


def chunked(
    text: str, config: CollectionConfig, metadata_at: MetadataAt | None = None
) -> list[Chunk]:
    """Chunk ``text`` with the collection's size/overlap; ``metadata_at(start, end)`` gives
    the metadata of a chunk from its offsets (page, chapter, section...)."""
    return [
        Chunk(text[s:e], metadata_at(s, e) if metadata_at else {})
        for s, e in chunk_spans(text, config.chunk_size, config.chunk_overlap)
    ]


def field_records(
    doc_id: str, field: str, chunks: Iterable[Chunk], metadata: Mapping[str, Any]
) -> list[Record]:
    """Records of one field: ``{doc}:{field}`` for one chunk, ``{doc}:{field}:{n}`` (n from 0,
    ``chunk_index`` = n) when there are several. Blank chunks are dropped."""
    kept = [c for c in chunks if c.text.strip()]
    records = []
    for n, chunk in enumerate(kept):
        meta = dict(metadata)
        meta.update({k: v for k, v in chunk.metadata.items() if v is not None})
        number = n if len(kept) > 1 else None
        if number is not None:
            meta["chunk_index"] = number
        records.append(
            Record(
                id=record_id(doc_id, field, number),
                doc_id=doc_id,
                field=field,
                text=chunk.text.strip(),
                metadata=meta,
            )
        )
    return records


def item_record(
    doc_id: str, field: str, n: int | None, text: str, metadata: Mapping[str, Any]
) -> Record | None:
    """One record for a list item (``n`` from 1) or a whole short value; ``None`` if blank."""
    text = text.strip()
    if not text:
        return None
    return Record(record_id(doc_id, field, n), doc_id, field, text, dict(metadata))


def line_error(source: SourceFile, line: int, reason: str) -> LoadError:
    """A per-line problem: ``path:行番号``; ``reason`` names the line too (「3行目の…」)."""
    return LoadError(f"{source.path}:{line}", reason)


__all__ = [
    "KNOWN_KEYS",
    "Chunk",
    "LoadFailure",
    "LoadResult",
    "Loader",
    "MetadataAt",
    "base_metadata",
    "canonical_key",
    "chunked",
    "decode",
    "field_records",
    "item_record",
    "json_value",
    "line_error",
    "normalize_date",
    "set_metadata",
    "source_type",
]

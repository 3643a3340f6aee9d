"""The ``[ingest]`` table of a collection config, parsed and checked (see docs/ingest.md).

Unknown keys are a :class:`ConfigError` (a typo must not silently change what gets indexed).
Besides the per-format tables, two top-level keys cap what one file may cost
(:class:`IngestLimits`): ``max_file_mb`` and ``max_chunks_per_document``.
"""

from __future__ import annotations

import codecs
import dataclasses
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from tansaku.errors import ConfigError

ENCODINGS_AUTO = "auto"
MB = 1_000_000
# 50 MB holds the largest documents people index (a PDF manual with photos, a Word file with
# screenshots; their text is a small part of the bytes) and table exports of ~100k rows, while a
# file read whole stays a few hundred MB in memory once decoded and chunked.
DEFAULT_MAX_FILE_MB = 50
# 5,000 chunks of 400 characters (overlap 80) are ~1.6 million characters, ~1,000 pages of
# Japanese: more than any manual; a document past it is a log or a dump, and would cost an hour
# of CPU embedding for results that drown every other document.
DEFAULT_MAX_CHUNKS_PER_DOCUMENT = 5_000
_PATH_SEGMENT = re.compile(r"^[^.\[\]]+(\[\])?$")


@dataclass(frozen=True, kw_only=True)
class SectionSettings:
    """``[ingest.markdown]`` / ``[ingest.docx]``: headings → fields."""

    fields: tuple[tuple[str, tuple[str, ...]], ...] = ()
    whole_field: str = ""
    header_keys: Mapping[str, str] = field(default_factory=dict)
    source_type: str = ""


@dataclass(frozen=True, kw_only=True)
class TextSettings:
    """``[ingest.text]`` / ``[ingest.pdf]``."""

    encoding: str = ENCODINGS_AUTO
    source_type: str = ""


@dataclass(frozen=True, kw_only=True)
class CsvSettings:
    """``[ingest.csv]`` (also used for ``.tsv``)."""

    id_column: str | None = None
    title_column: str | None = None
    text_fields: tuple[tuple[str, tuple[str, ...]], ...] = ()
    metadata_columns: tuple[tuple[str, str], ...] = ()
    encoding: str = ENCODINGS_AUTO
    delimiter: str | None = None
    source_type: str = ""


@dataclass(frozen=True, kw_only=True)
class JsonSettings:
    """``[ingest.json]`` (``.jsonl`` and ``.json``)."""

    id_key: str | None = None
    title_key: str | None = None
    records_key: str | None = None
    fields: tuple[tuple[str, str], ...] = ()
    combined: bool | tuple[str, ...] = False
    metadata_keys: tuple[tuple[str, str], ...] = ()
    source_type: str = ""


@dataclass(frozen=True, kw_only=True)
class IngestLimits:
    """``[ingest] max_file_mb`` / ``max_chunks_per_document``: what one file may cost."""

    max_file_bytes: int = DEFAULT_MAX_FILE_MB * MB
    """A larger file is reported with its size and never read (nor read past this, even if it
    grows while being read)."""
    max_chunks_per_document: int = DEFAULT_MAX_CHUNKS_PER_DOCUMENT
    """A document (a Markdown/text/PDF/Word file; a CSV row; a JSON object) that makes more
    records than this is reported and skipped whole."""
    max_columns: int = 200
    """A CSV/TSV file with more columns than this is reported and not read."""
    max_metadata_keys: int = 256
    """A document whose metadata has more keys than this is reported and skipped."""
    max_metadata_bytes: int = 32 * 1024
    """… or whose metadata takes more bytes than this (as UTF-8 JSON)."""
    max_inflated_bytes: int = 200 * MB
    """An archive-based document (``.docx``: a zip) whose members would inflate to more bytes
    than this in all is reported and not opened (a zip bomb)."""
    max_inflate_ratio: int = 200
    """… or with a member over 1 MB that inflates more than this many times its stored size."""

    def __post_init__(self) -> None:
        if self.max_file_bytes <= 0:
            raise ValueError(
                f"max_file_bytes must be greater than 0. Currently, it is {self.max_file_bytes}"
            )
        if self.max_chunks_per_document <= 0:
            raise ValueError(
                "max_chunks_per_document must be greater than 0. "
                f"Currently, it is {self.max_chunks_per_document}"
            )


@dataclass(frozen=True, kw_only=True)
class IngestSettings:
    limits: IngestLimits = field(default_factory=IngestLimits)
    combined: bool = True
    """``[ingest] combined = false`` (``tansaku ingest --no-combined``): no record of the field
    ``combined`` is written, whatever the sections below would make."""
    markdown: SectionSettings = field(default_factory=SectionSettings)
    docx: SectionSettings = field(default_factory=SectionSettings)
    text: TextSettings = field(default_factory=TextSettings)
    pdf: TextSettings = field(default_factory=TextSettings)
    csv: CsvSettings = field(default_factory=CsvSettings)
    json: JsonSettings = field(default_factory=JsonSettings)


def _table(raw: Mapping[str, Any], key: str, section: str) -> Mapping[str, Any]:
    value = raw.get(key, {})
    if not isinstance(value, Mapping):
        raise ConfigError(f"[{section}.{key}] は表(テーブル)で指定してください(現在: {value!r})")
    return value


def _check_keys(table: Mapping[str, Any], allowed: set[str], section: str) -> None:
    unknown = set(table) - allowed
    if unknown:
        raise ConfigError(
            f"[{section}] に不明なキーがあります: {sorted(unknown)}。使えるキー: {sorted(allowed)}"
        )


def _keys(settings: type) -> set[str]:
    """The keys a per-format table accepts: the fields of its settings."""
    return {f.name for f in dataclasses.fields(settings)}


def _str(table: Mapping[str, Any], key: str, section: str, default: str | None) -> str | None:
    value = table.get(key, default)
    if value is None or isinstance(value, str):
        return value
    raise ConfigError(f"[{section}] の {key} は文字列で指定してください(現在: {value!r})")


def _source_type(table: Mapping[str, Any], section: str) -> str:
    return _str(table, "source_type", section, "") or ""


def _names(value: Any, where: str) -> tuple[str, ...]:
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not value or not all(isinstance(v, str) and v for v in value):
        raise ConfigError(f"{where} は文字列のリストで指定してください(現在: {value!r})")
    return tuple(value)


def _field_map(
    table: Mapping[str, Any], key: str, section: str
) -> tuple[tuple[str, tuple[str, ...]], ...]:
    raw = _table(table, key, section)
    return tuple((str(name), _names(v, f"[{section}] {key}.{name}")) for name, v in raw.items())


def _key_map(value: Any, where: str) -> tuple[tuple[str, str], ...]:
    """A list ``["date", "store"]`` or a table ``{ date = "日付" }`` → (metadata key, source)."""
    if isinstance(value, Mapping):
        pairs = tuple((str(k), v) for k, v in value.items())
        if all(isinstance(v, str) and v for _, v in pairs):
            return pairs  # type: ignore[return-value]
    elif isinstance(value, list) and all(isinstance(v, str) and v for v in value):
        return tuple((v.rsplit(".", 1)[-1].removesuffix("[]"), v) for v in value)
    raise ConfigError(
        f'{where} はリスト(["date", "store"])か表({{ date = "日付" }})で指定してください'
        f"(現在: {value!r})"
    )


def _check_path(path: str, where: str) -> str:
    if not path or not all(_PATH_SEGMENT.match(seg) for seg in path.split(".")):
        raise ConfigError(
            f'{where} のキーパス「{path}」が不正です。例: "flavorText", "effects[]", '
            '"qa[].question"'
        )
    return path


def _encoding(raw: Mapping[str, Any], section: str) -> str:
    name = _str(raw, "encoding", section, ENCODINGS_AUTO) or ENCODINGS_AUTO
    if name != ENCODINGS_AUTO:
        try:
            codecs.lookup(name)
        except LookupError:
            raise ConfigError(
                f'[{section}] の encoding「{name}」は使えません。例: "auto", "utf-8", "cp932"'
            ) from None
    return name


def _sections(raw: Mapping[str, Any], section: str) -> SectionSettings:
    _check_keys(raw, _keys(SectionSettings), section)
    fields = _field_map(raw, "fields", section)
    whole = _str(raw, "whole_field", section, "combined" if fields else "")
    header_raw = _table(raw, "header_keys", section)
    header: dict[str, str] = {}
    for label, key in header_raw.items():
        if not isinstance(key, str) or not key:
            raise ConfigError(f"[{section}] header_keys.{label} は文字列で指定してください")
        header[str(label)] = key
    return SectionSettings(
        fields=fields,
        whole_field=whole or "",
        header_keys=header,
        source_type=_source_type(raw, section),
    )


def _text(raw: Mapping[str, Any], section: str, *, encoding: bool) -> TextSettings:
    allowed = _keys(TextSettings) if encoding else {"source_type"}
    _check_keys(raw, allowed, section)
    return TextSettings(
        encoding=_encoding(raw, section),
        source_type=_source_type(raw, section),
    )


def _csv(raw: Mapping[str, Any]) -> CsvSettings:
    section = "ingest.csv"
    _check_keys(raw, _keys(CsvSettings), section)
    delimiter = _str(raw, "delimiter", section, None)
    if delimiter is not None and len(delimiter) != 1:
        raise ConfigError(f"[{section}] の delimiter は1文字にしてください(現在: {delimiter!r})")
    meta = raw.get("metadata_columns")
    return CsvSettings(
        id_column=_str(raw, "id_column", section, None),
        title_column=_str(raw, "title_column", section, None),
        text_fields=_field_map(raw, "text_fields", section),
        metadata_columns=_key_map(meta, f"[{section}] metadata_columns")
        if meta is not None
        else (),
        encoding=_encoding(raw, section),
        delimiter=delimiter,
        source_type=_source_type(raw, section),
    )


def _json(raw: Mapping[str, Any]) -> JsonSettings:
    section = "ingest.json"
    _check_keys(raw, _keys(JsonSettings), section)
    fields_raw = _table(raw, "fields", section)
    fields: list[tuple[str, str]] = []
    for name, path in fields_raw.items():
        if not isinstance(path, str):
            raise ConfigError(f"[{section}] fields.{name} はキーパス(文字列)で指定してください")
        fields.append((str(name), _check_path(path, f"[{section}] fields.{name}")))
    combined_raw = raw.get("combined", False)
    combined: bool | tuple[str, ...]
    if isinstance(combined_raw, bool):
        combined = combined_raw
        if combined and not fields:
            raise ConfigError(f"[{section}] combined = true には fields の指定が必要です")
    else:
        combined = tuple(
            _check_path(p, f"[{section}] combined")
            for p in _names(combined_raw, f"[{section}] combined")
        )
    meta = raw.get("metadata_keys")
    metadata = _key_map(meta, f"[{section}] metadata_keys") if meta is not None else ()
    for _, path in metadata:
        _check_path(path, f"[{section}] metadata_keys")
    return JsonSettings(
        id_key=_str(raw, "id_key", section, None),
        title_key=_str(raw, "title_key", section, None),
        records_key=_str(raw, "records_key", section, None),
        fields=tuple(fields),
        combined=combined,
        metadata_keys=metadata,
        source_type=_source_type(raw, section),
    )


_SECTIONS = {"markdown", "docx", "text", "pdf", "csv", "json"}
_LIMIT_KEYS = {"max_file_mb", "max_chunks_per_document"}
_SWITCHES = {"combined"}


def _positive(raw: Mapping[str, Any], key: str, default: float, *, integer: bool) -> float:
    value = raw.get(key, default)
    ok = isinstance(value, int) if integer else isinstance(value, int | float)
    if not ok or isinstance(value, bool) or not value > 0:
        kind = "正の整数" if integer else "正の数"
        raise ConfigError(f"[ingest] の {key} は{kind}で指定してください(現在: {value!r})")
    return value


def _limits(raw: Mapping[str, Any], base: IngestLimits) -> IngestLimits:
    """``base`` (the workspace's limits) with the collection's own caps where it sets them."""
    changes: dict[str, int] = {}
    if "max_file_mb" in raw:
        mb = _positive(raw, "max_file_mb", DEFAULT_MAX_FILE_MB, integer=False)
        changes["max_file_bytes"] = max(1, int(mb * MB))
    if "max_chunks_per_document" in raw:
        chunks = _positive(
            raw, "max_chunks_per_document", DEFAULT_MAX_CHUNKS_PER_DOCUMENT, integer=True
        )
        changes["max_chunks_per_document"] = int(chunks)
    return dataclasses.replace(base, **changes) if changes else base


def ingest_settings(ingest: Mapping[str, Any], base: IngestLimits | None = None) -> IngestSettings:
    """Parse a config's raw ``[ingest]`` table; raises :class:`ConfigError` on bad values.
    ``base``: the workspace's limits (``tansaku.ingest.limits``), which the collection's
    ``max_file_mb`` / ``max_chunks_per_document`` override; default: the built-in ones."""
    if not isinstance(ingest, Mapping):
        raise ConfigError(f"[ingest] は表(テーブル)で指定してください(現在: {ingest!r})")
    _check_keys(ingest, _SECTIONS | _LIMIT_KEYS | _SWITCHES, "ingest")
    combined = ingest.get("combined", True)
    if not isinstance(combined, bool):
        raise ConfigError(f"[ingest] combined は true か false です(現在: {combined!r})")
    markdown = _sections(_table(ingest, "markdown", "ingest"), "ingest.markdown")
    docx = (
        _sections(_table(ingest, "docx", "ingest"), "ingest.docx") if "docx" in ingest else markdown
    )
    return IngestSettings(
        limits=_limits(ingest, base or IngestLimits()),
        combined=combined,
        markdown=markdown,
        docx=docx,
        text=_text(_table(ingest, "text", "ingest"), "ingest.text", encoding=True),
        pdf=_text(_table(ingest, "pdf", "ingest"), "ingest.pdf", encoding=False),
        csv=_csv(_table(ingest, "csv", "ingest")),
        json=_json(_table(ingest, "json", "ingest")),
    )


__all__ = [
    "DEFAULT_MAX_CHUNKS_PER_DOCUMENT",
    "DEFAULT_MAX_FILE_MB",
    "CsvSettings",
    "IngestLimits",
    "IngestSettings",
    "JsonSettings",
    "SectionSettings",
    "TextSettings",
    "ingest_settings",
]

"""A field mapping chosen for an upload (the web form's): checked, then saved into the
collection's ``[ingest.csv]`` / ``[ingest.json]`` so later uploads and ``tansaku ingest --sync``
read the files the same way.

MAPPING (JSON)::

    {"id_column": "店舗コード" | null, "title_column": "店舗名" | null,
     "text_fields": {"body": ["店舗名", "説明"]}, "metadata_columns": {"date": "開店日"},
     "source_type": ""}

For CSV/TSV these are the keys of :class:`~tansaku.ingest.loaders.settings.CsvSettings`. For
JSON they are read as ``id_key``, ``title_key``, ``fields`` (one key path per field: a JSON
field takes one key, ``{"body": ["説明"]}``) and ``metadata_keys`` of
:class:`~tansaku.ingest.loaders.settings.JsonSettings`; ``source_type`` is the same. Empty
``source_type``: the loader's default. Other keys of the section (``encoding``, ``delimiter``,
``records_key``) are kept as they were.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import replace
from typing import Any

from tansaku.config import CollectionConfig
from tansaku.errors import ConfigError, InvalidRequest
from tansaku.ingest.loaders.settings import ingest_settings
from tansaku.ingest.preview import FIELD_NAME as _FIELD
from tansaku.ingest.preview import Table

MAX_MAPPING_BYTES = 8 * 1024
KEYS = ("id_column", "title_column", "text_fields", "metadata_columns", "source_type")
RESERVED_METADATA = ("title", "source", "chunk_index")  # the loaders set these themselves
_META_KEY = re.compile(r"^[^\s=<>,＝＜＞，]{1,64}$")
_CSV = {"id_column": "id_column", "title_column": "title_column"}
_JSON = {"id_column": "id_key", "title_column": "title_key"}


class MappingError(InvalidRequest):
    """A mapping that cannot be used: what is wrong, in Japanese."""


def _column(value: Any, where: str) -> str:
    if not isinstance(value, str) or not value.strip() or len(value) > 200:
        raise MappingError(f"{where} は列名(1〜200文字の文字列)で指定してください")
    return value.strip()


def _optional(value: Any, where: str) -> str | None:
    return None if value is None or value == "" else _column(value, where)


def parse_mapping(raw: str | Mapping[str, Any]) -> dict[str, Any]:
    """A MAPPING from its JSON text (at most 8 KB) or a parsed object, normalised; raises
    :class:`MappingError` naming what is wrong."""
    if isinstance(raw, str):
        if len(raw.encode("utf-8")) > MAX_MAPPING_BYTES:
            raise MappingError(f"mapping が大きすぎます({MAX_MAPPING_BYTES:,} バイトまで)")
        try:
            raw = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise MappingError(
                f"mapping の JSON が不正です({exc.lineno}行目 {exc.colno}文字目): {exc.msg}"
            ) from None
    if not isinstance(raw, Mapping):
        raise MappingError("mapping は JSON オブジェクトで指定してください")
    unknown = sorted(set(raw) - set(KEYS))
    if unknown:
        raise MappingError(f"mapping に不明なキーがあります: {unknown}。使えるキー: {list(KEYS)}")
    fields_raw = raw.get("text_fields") or {}
    meta_raw = raw.get("metadata_columns") or {}
    if not isinstance(fields_raw, Mapping) or not isinstance(meta_raw, Mapping):
        raise MappingError("text_fields と metadata_columns は JSON オブジェクトで指定してください")
    fields: dict[str, list[str]] = {}
    for name, cols in fields_raw.items():
        if not _FIELD.match(name):
            raise MappingError(
                f"フィールド名「{name}」は使えません(空白・: / # を含まない64文字まで)"
            )
        cols = [cols] if isinstance(cols, str) else cols
        if not isinstance(cols, list) or not cols:
            raise MappingError(f"text_fields.{name} は列名のリストで指定してください")
        fields[name] = [_column(c, f"text_fields.{name}") for c in cols]
    metadata: dict[str, str] = {}
    for key, col in meta_raw.items():
        if not _META_KEY.match(key) or key in RESERVED_METADATA:
            raise MappingError(f"メタデータのキー「{key}」は使えません")
        metadata[key] = _column(col, f"metadata_columns.{key}")
    source_type = raw.get("source_type") or ""
    if not isinstance(source_type, str) or len(source_type) > 64:
        raise MappingError("source_type は64文字までの文字列で指定してください")
    return {
        "id_column": _optional(raw.get("id_column"), "id_column"),
        "title_column": _optional(raw.get("title_column"), "title_column"),
        "text_fields": fields,
        "metadata_columns": metadata,
        "source_type": source_type.strip(),
    }


def columns_of(mapping: Mapping[str, Any]) -> list[str]:
    """Every column the mapping names, in order, once."""
    named = [mapping.get("id_column"), mapping.get("title_column")]
    named += [c for cols in mapping["text_fields"].values() for c in cols]
    named += list(mapping["metadata_columns"].values())
    return list(dict.fromkeys(c for c in named if c))


def check_against(mapping: Mapping[str, Any], table: Table) -> None:
    """Raise :class:`MappingError` when ``mapping`` names a column ``table`` lacks (for JSON,
    the first key of a key path) or gives a JSON field more than one key."""
    for col in columns_of(mapping):
        head = col.split(".", 1)[0].removesuffix("[]") if table.family == "json" else col
        if head not in table.columns:
            raise MappingError(
                f"ファイル「{table.name}」に列「{col}」がありません"
                f"(このファイルの列: {', '.join(table.columns)})"
            )
    if table.family == "json":
        for name, cols in mapping["text_fields"].items():
            if len(cols) > 1:
                raise MappingError(
                    f"JSON ではフィールド「{name}」に1つのキーだけを指定してください"
                    f"(指定: {', '.join(cols)})"
                )


def _section(old: Mapping[str, Any], mapping: Mapping[str, Any], family: str) -> dict[str, Any]:
    names = _CSV if family == "csv" else _JSON
    fields_key, meta_key = (
        ("text_fields", "metadata_columns") if family == "csv" else ("fields", "metadata_keys")
    )
    section = {k: v for k, v in old.items() if k not in (*names.values(), fields_key, meta_key)}
    section.pop("source_type", None)
    for ours, theirs in names.items():
        if mapping[ours]:
            section[theirs] = mapping[ours]
    if mapping["text_fields"]:
        section[fields_key] = (
            {k: list(v) for k, v in mapping["text_fields"].items()}
            if family == "csv"
            else {k: v[0] for k, v in mapping["text_fields"].items()}
        )
    elif family == "json":
        section.pop("combined", None)  # combined = true needs fields
    if mapping["metadata_columns"]:
        section[meta_key] = dict(mapping["metadata_columns"])
    if mapping["source_type"]:
        section["source_type"] = mapping["source_type"]
    return section


def with_mapping(
    ingest: Mapping[str, Any], mapping: Mapping[str, Any], families: Iterable[str]
) -> dict[str, Any]:
    """``ingest`` (a config's ``[ingest]``) with ``mapping`` as its ``csv`` and/or ``json``
    section; checked as ``tansaku.toml`` is (:class:`MappingError` if it does not parse)."""
    out = {k: dict(v) if isinstance(v, Mapping) else v for k, v in ingest.items()}
    for family in sorted(set(families)):
        out[family] = _section(out.get(family) or {}, mapping, family)
    try:
        ingest_settings(out)
    except ConfigError as exc:
        raise MappingError(f"マッピングを設定にできません: {exc}") from None
    return out


def config_with_mapping(
    name: str, current: CollectionConfig | None, payload: Mapping[str, Any]
) -> CollectionConfig:
    """The collection's config (or a new one) with ``payload`` = ``{"mapping", "formats"}``
    (an upload's mapping and the families it applies to) merged into ``[ingest]``."""
    config = current or CollectionConfig(name=name)
    ingest = with_mapping(config.ingest, payload["mapping"], payload["formats"])
    return replace(config, ingest=ingest).with_name(name)


def saved_mapping(ingest: Mapping[str, Any], family: str) -> dict[str, Any] | None:
    """The MAPPING saved in a config's ``[ingest]`` for ``family`` (``csv`` / ``json``), or
    None when that section maps nothing (or does not parse)."""
    try:
        settings = ingest_settings(ingest)
    except ConfigError:
        return None
    if family == "csv":
        c = settings.csv
        fields = {k: list(v) for k, v in c.text_fields}
        out = {
            "id_column": c.id_column,
            "title_column": c.title_column,
            "text_fields": fields,
            "metadata_columns": dict(c.metadata_columns),
            "source_type": c.source_type,
        }
    else:
        j = settings.json
        out = {
            "id_column": j.id_key,
            "title_column": j.title_key,
            "text_fields": {k: [v] for k, v in j.fields},
            "metadata_columns": dict(j.metadata_keys),
            "source_type": j.source_type,
        }
    mapped = out["id_column"] or out["title_column"] or out["text_fields"]
    return out if mapped or out["metadata_columns"] else None


__all__ = [
    "MAX_MAPPING_BYTES",
    "MappingError",
    "check_against",
    "columns_of",
    "config_with_mapping",
    "parse_mapping",
    "saved_mapping",
    "with_mapping",
]

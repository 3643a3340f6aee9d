"""BEIR corpora (``corpus.jsonl``: ``{"_id", "title", "text", "metadata"}`` per line).

Doc id = ``_id``; field ``body`` = title + newline + text (chunked if long); metadata ``title``
(the ``_id`` when the title is empty), ``source_type`` ``beir`` and the scalar values of the
object's ``metadata`` (``url``...).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from tansaku.config import CollectionConfig
from tansaku.errors import LoadError
from tansaku.ingest.loaders.base import (
    base_metadata,
    chunked,
    field_records,
    json_value,
    source_type,
)
from tansaku.ingest.loaders.sections import BODY_FIELD
from tansaku.ingest.loaders.settings import IngestSettings
from tansaku.ingest.sources import SourceFile
from tansaku.records import Record

DEFAULT_SOURCE_TYPE = "beir"
BEIR_FILE = "corpus.jsonl"


def is_beir_file(path: Path) -> bool:
    return path.name.lower() == BEIR_FILE


def is_beir_object(obj: Mapping[str, Any]) -> bool:
    return "_id" in obj and "text" in obj


def beir_records(
    obj: Mapping[str, Any],
    source: SourceFile,
    config: CollectionConfig,
    settings: IngestSettings,
    label: str,
) -> list[Record] | LoadError:
    """Records of one corpus line, or a :class:`LoadError` (without path) saying what is
    missing."""
    doc_id = obj.get("_id")
    if not isinstance(doc_id, str | int) or isinstance(doc_id, bool) or str(doc_id).strip() == "":
        return LoadError("", f"{label}に _id がありません")
    doc_id = str(doc_id).strip()
    text = obj.get("text")
    title = obj.get("title")
    title = title.strip() if isinstance(title, str) else ""
    if not isinstance(text, str) or not (text.strip() or title):
        return LoadError("", f"{label}(_id「{doc_id}」)に text がありません")
    extra = {}
    inner = obj.get("metadata")
    if isinstance(inner, Mapping):
        extra = {str(k): json_value(v) for k, v in inner.items() if not isinstance(v, Mapping)}
    meta = base_metadata(
        source,
        title=title or doc_id,
        source_type=source_type(settings.json.source_type, config, DEFAULT_SOURCE_TYPE),
        extra=extra,
    )
    body = f"{title}\n{text.strip()}" if title else text.strip()
    return field_records(doc_id, BODY_FIELD, chunked(body, config), meta)


__all__ = ["BEIR_FILE", "beir_records", "is_beir_file", "is_beir_object"]

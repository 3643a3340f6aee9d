"""Plain text (``.txt``) → field ``body``, chunked across the document.

Encoding: UTF-8 (with or without BOM), UTF-16 with BOM, then cp932 (Shift_JIS) — or the
``[ingest.text] encoding``. Title: the first line when it looks like one (at most 40
characters, not ending like a sentence), else the file stem. ``日付: …`` / ``担当: …`` lines
at the top (after the title line) become metadata, as in Markdown.
"""

from __future__ import annotations

import re
from typing import Any

from tansaku.config import CollectionConfig
from tansaku.errors import LoadError
from tansaku.ingest.loaders.base import (
    LoadResult,
    base_metadata,
    chunked,
    decode,
    field_records,
    source_type,
)
from tansaku.ingest.loaders.sections import BODY_FIELD, split_header
from tansaku.ingest.loaders.settings import IngestSettings
from tansaku.ingest.sources import SourceFile

DEFAULT_SOURCE_TYPE = "document"
TITLE_MAX = 40
_BLANK_RUNS = re.compile(r"\n[ \t\u3000]*(?:\n[ \t\u3000]*)+")


def _looks_like_title(line: str) -> bool:
    line = line.strip()
    return 0 < len(line) <= TITLE_MAX and not line.endswith(
        ("。", ".", "、", ",", "!", "?", "！", "？")
    )


def normalize_paragraphs(text: str) -> str:
    """Trailing spaces dropped, runs of blank lines collapsed to one (a paragraph break)."""
    text = "\n".join(line.rstrip() for line in text.split("\n"))
    return _BLANK_RUNS.sub("\n\n", text).strip()


def load_text(
    source: SourceFile, data: bytes, config: CollectionConfig, settings: IngestSettings
) -> LoadResult:
    text = normalize_paragraphs(decode(data, settings.text.encoding, allow_cp932=True))
    lines = text.split("\n")
    meta: dict[str, Any] = {}
    errors: list[LoadError] = []
    title = source.path.stem
    start = 0
    if lines and _looks_like_title(lines[0]) and split_header(lines[:1], {}, {}, [], "") == 0:
        title, start = lines[0].strip(), 1
    start += split_header(
        lines[start:], settings.markdown.header_keys, meta, errors, str(source.path)
    )
    title = str(meta.pop("title", "") or title)
    body = "\n".join(lines[start:]).strip()
    if not body and start:
        body = text  # a one-line file: the line is both the title and the text
    metadata = base_metadata(
        source,
        title=title,
        source_type=source_type(settings.text.source_type, config, DEFAULT_SOURCE_TYPE),
        extra=meta,
    )
    records = field_records(source.doc_prefix, BODY_FIELD, chunked(body, config), metadata)
    return LoadResult(tuple(records), tuple(errors))


__all__ = ["load_text", "normalize_paragraphs"]

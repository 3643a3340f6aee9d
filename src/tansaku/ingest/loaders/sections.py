"""Headed documents (Markdown, Word) → records: chapters/sections or heading-mapped fields.

A document is a title, header metadata and a list of :class:`Block` s. Heading levels follow
Markdown: ``1`` title-level, ``2`` chapter, ``3`` section, deeper levels are just headings.

* Default (no ``fields``): each chapter is chunked into field ``body``; record ids
  ``{doc}:body:{n}`` run across the document; metadata ``chapter`` / ``section``.
* ``fields = { materials_methods = ["材料", "方法"] }``: a field joins every section whose
  heading (numbering stripped: ``2. 材料``, ``(1)方法``, ``第3章 結果``) equals or starts with
  one of its names, sub-headings included; a section may feed several fields.
* ``whole_field`` (``"combined"`` by default when ``fields`` is set): the whole document,
  title first, as one more field.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from tansaku.config import CollectionConfig
from tansaku.errors import LoadError
from tansaku.ingest.loaders.base import (
    Chunk,
    LoadResult,
    MetadataAt,
    base_metadata,
    canonical_key,
    chunked,
    field_records,
    set_metadata,
    source_type,
)
from tansaku.ingest.loaders.settings import SectionSettings
from tansaku.ingest.sources import SourceFile
from tansaku.records import Record

BODY_FIELD = "body"
DEFAULT_SOURCE_TYPE = "document"
CHAPTER_LEVEL = 2
SECTION_LEVEL = 3

_HEADER_LINE = re.compile(r"^(?:[-*・]\s*)?([^:：]{1,20}?)\s*[:：]\s*(.*?)\s*$")
_NUMBERING = re.compile(
    r"^\s*(?:第[0-9一二三四五六七八九十百〇]+[章節項部]"
    r"|\(?[0-9]+(?:\.[0-9]+)*(?:[).、:]|\s|$)(?![0-9])"
    r"|[A-Za-z][.)]"
    r"|[一二三四五六七八九十]+[、.])\s*"
)


@dataclass(frozen=True)
class Block:
    """A line or paragraph (``level`` 0) or a heading (``level`` >= 1)."""

    level: int
    text: str


@dataclass
class ParsedDocument:
    title: str
    blocks: list[Block]
    metadata: dict[str, Any] = field(default_factory=dict)
    errors: list[LoadError] = field(default_factory=list)


def split_header(
    lines: Sequence[str],
    header_keys: Mapping[str, str],
    metadata: dict[str, Any],
    errors: list[LoadError],
    where: str,
) -> int:
    """Read ``日付: 2024-05-01`` / ``担当: 佐藤`` lines at the top of ``lines`` into
    ``metadata``; return the index of the first line that is not part of the header."""
    i = 0
    found = 0
    while i < len(lines):
        line = lines[i].replace("**", "").replace("__", "").strip()
        if not line:
            i += 1
            continue
        m = _HEADER_LINE.match(line)
        key = canonical_key(m[1], header_keys) if m else None
        if m is None or key is None:
            break
        if m[2]:
            set_metadata(metadata, key, m[2], errors, where)
        found += 1
        i += 1
    return i if found else 0


def headed_document(
    title: str,
    blocks: Sequence[Block],
    header_keys: Mapping[str, str],
    *,
    fallback_title: str,
    where: str,
    metadata: dict[str, Any] | None = None,
    errors: list[LoadError] | None = None,
) -> ParsedDocument:
    """The document of ``blocks`` once the header lines before its first heading are read into
    ``metadata`` (:func:`split_header`): titled ``title``, else by a ``タイトル:`` header line,
    else ``fallback_title``."""
    meta = {} if metadata is None else metadata
    errs = [] if errors is None else errors
    limit = next((i for i, b in enumerate(blocks) if b.level), len(blocks))
    skip = split_header([b.text for b in blocks[:limit]], header_keys, meta, errs, where)
    title = title or str(meta.get("title", "") or "") or fallback_title
    meta.pop("title", None)
    return ParsedDocument(title=title, blocks=list(blocks[skip:]), metadata=meta, errors=errs)


def heading_key(text: str) -> str:
    """Heading text for matching: NFKC, numbering and markup stripped, casefolded."""
    t = unicodedata.normalize("NFKC", text).replace("*", "").replace("_", " ").strip()
    t = _NUMBERING.sub("", t, count=1)
    return t.strip().rstrip(":").strip().casefold()


def _compose(blocks: Sequence[Block], lead: str = "") -> tuple[str, list[tuple[int, int, str]]]:
    """Blocks → text and heading marks ``(offset, level, title)``.

    Headings become plain lines, preceded by a blank line (a paragraph break for the chunker)
    unless they follow another heading; runs of blank lines collapse into one.
    """
    lines: list[str] = [lead] if lead else []
    offset = len(lead) + 1 if lead else 0
    marks: list[tuple[int, int, str]] = []
    blank = not lines
    after_heading = False
    for block in blocks:
        text = block.text.rstrip()
        if not text.strip() and blank:
            continue
        if (block.level and not blank and not after_heading) or not text.strip():
            lines.append("")
            offset += 1
            blank = True
            if not text.strip():
                continue
        if block.level:
            marks.append((offset, block.level, text.strip()))
        lines.append(text)
        offset += len(text) + 1
        blank = False
        after_heading = bool(block.level)
    return "\n".join(lines).rstrip(), marks


def _outline_at(marks: Sequence[tuple[int, int, str]]) -> MetadataAt:
    """Chapter/section of a chunk: the headings in force at its start, else the first
    section heading inside it."""

    def at(start: int, end: int) -> dict[str, Any]:
        chapter: str | None = None
        section: str | None = None
        for offset, level, title in marks:
            if offset > start:
                if section is None and level == SECTION_LEVEL and offset < end:
                    section = title
                if level <= SECTION_LEVEL:
                    break
                continue
            if level <= CHAPTER_LEVEL:
                chapter, section = title, None
            elif level == SECTION_LEVEL:
                section = title
        return {"chapter": chapter, "section": section}

    return at


def _chapters(blocks: Sequence[Block]) -> list[list[Block]]:
    groups: list[list[Block]] = [[]]
    for block in blocks:
        if 0 < block.level <= CHAPTER_LEVEL and groups[-1]:
            groups.append([])
        groups[-1].append(block)
    return [g for g in groups if g]


def _body_chunks(blocks: Sequence[Block], config: CollectionConfig) -> list[Chunk]:
    chunks: list[Chunk] = []
    for group in _chapters(blocks):
        text, marks = _compose(group)
        chunks.extend(chunked(text, config, _outline_at(marks)))
    return chunks


def _section_spans(blocks: Sequence[Block]) -> list[tuple[int, int]]:
    """``(heading index, end index)`` of every heading: up to the next of the same or higher
    rank."""
    spans = []
    for i, block in enumerate(blocks):
        if not block.level:
            continue
        j = i + 1
        while j < len(blocks) and not (blocks[j].level and blocks[j].level <= block.level):
            j += 1
        spans.append((i, j))
    return spans


def _matches(heading: str, names: Sequence[str]) -> bool:
    key = heading_key(heading)
    for name in names:
        want = heading_key(name)
        if want and key.startswith(want):
            return True
    return False


def _field_chunks(
    blocks: Sequence[Block], names: Sequence[str], config: CollectionConfig
) -> list[Chunk]:
    parts: list[tuple[str, str]] = []
    covered = -1
    for i, j in _section_spans(blocks):
        if i < covered or not _matches(blocks[i].text, names):
            continue
        text, _ = _compose(blocks[i:j])
        if text.strip():
            parts.append((blocks[i].text.strip(), text))
        covered = j
    starts: list[tuple[int, str]] = []
    offset = 0
    for heading, text in parts:
        starts.append((offset, heading))
        offset += len(text) + 2

    def at(start: int, end: int) -> dict[str, Any]:
        current = None
        for off, heading in starts:
            if off > start:
                break
            current = heading
        return {"section": current}

    return chunked("\n\n".join(text for _, text in parts), config, at)


def document_records(
    doc_id: str,
    doc: ParsedDocument,
    settings: SectionSettings,
    config: CollectionConfig,
    metadata: Mapping[str, Any],
) -> list[Record]:
    """Records of one headed document under ``settings`` (see the module docstring)."""
    records: list[Record] = []
    if not settings.fields:
        records.extend(
            field_records(doc_id, BODY_FIELD, _body_chunks(doc.blocks, config), metadata)
        )
    for name, names in settings.fields:
        records.extend(
            field_records(doc_id, name, _field_chunks(doc.blocks, names, config), metadata)
        )
    if settings.whole_field:
        text, marks = _compose(doc.blocks, lead=doc.title)
        chunks = chunked(text, config, _outline_at(marks))
        records.extend(field_records(doc_id, settings.whole_field, chunks, metadata))
    return records


def headed_result(
    source: SourceFile, doc: ParsedDocument, settings: SectionSettings, config: CollectionConfig
) -> LoadResult:
    """What a headed document of ``source`` loads as: its records under ``settings``, with the
    document's title and header metadata, and the problems its header had."""
    meta = base_metadata(
        source,
        title=doc.title,
        source_type=source_type(settings.source_type, config, DEFAULT_SOURCE_TYPE),
        extra=doc.metadata,
    )
    records = document_records(source.doc_prefix, doc, settings, config, meta)
    return LoadResult(tuple(records), tuple(doc.errors))


__all__ = [
    "BODY_FIELD",
    "Block",
    "ParsedDocument",
    "document_records",
    "headed_document",
    "headed_result",
    "heading_key",
    "split_header",
]

"""Markdown (``.md``, ``.markdown``) → headed document → records.

Title: the first ``# H1`` (else the file stem). Metadata: YAML front matter and the
``日付: 2024-05-01`` / ``担当: 佐藤`` lines right under the title. ATX headings only
(``## 第2章 食中毒予防``); ``#`` lines inside fenced code blocks are text. Links and images keep
their text, emphasis markers are dropped.
"""

from __future__ import annotations

import re
from typing import Any

from tansaku.config import CollectionConfig
from tansaku.errors import LoadError
from tansaku.ingest.loaders.base import LoadResult, canonical_key, decode, set_metadata
from tansaku.ingest.loaders.sections import Block, ParsedDocument, headed_document, headed_result
from tansaku.ingest.loaders.settings import IngestSettings, SectionSettings
from tansaku.ingest.sources import SourceFile

_HEADING = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$")
_FENCE = re.compile(r"^ {0,3}(```|~~~)")
_TABLE_RULE = re.compile(r"^\s*\|?\s*:?-{3,}:?\s*(\|\s*:?-{3,}:?\s*)*\|?\s*$")
_COMMENT = re.compile(r"<!--.*?-->", re.DOTALL)
_IMAGE = re.compile(r"!\[([^\]]*)\]\([^)]*\)")
_LINK = re.compile(r"\[([^\]]+)\]\([^)]*\)")
_EMPHASIS = re.compile(r"(\*\*|__)(.+?)\1")
_CODE = re.compile(r"`([^`]+)`")


def _inline(text: str) -> str:
    text = _IMAGE.sub(r"\1", text)
    text = _LINK.sub(r"\1", text)
    text = _EMPHASIS.sub(r"\2", text)
    return _CODE.sub(r"\1", text)


def _front_matter(
    lines: list[str],
    settings: SectionSettings,
    meta: dict[str, Any],
    errors: list[LoadError],
    where: str,
) -> int:
    """Parse a leading ``---`` YAML block into ``meta``; return the first line after it."""
    if not lines or lines[0].strip() != "---":
        return 0
    end = next((i for i in range(1, len(lines)) if lines[i].strip() in ("---", "...")), None)
    if end is None:
        return 0
    import yaml

    try:
        data = yaml.safe_load("\n".join(lines[1:end]))
    except yaml.YAMLError as exc:
        errors.append(LoadError(where, f"先頭のYAML(front matter)が不正です: {exc}"))
        return end + 1
    if isinstance(data, dict):
        for key, value in data.items():
            set_metadata(
                meta,
                canonical_key(str(key), settings.header_keys) or str(key),
                value,
                errors,
                where,
            )
    return end + 1


def _blocks(lines: list[str]) -> list[Block]:
    blocks: list[Block] = []
    fence: str | None = None
    for line in lines:
        fm = _FENCE.match(line)
        if fence is not None:
            if fm and fm[1] == fence:
                fence = None
            else:
                blocks.append(Block(0, line))
            continue
        if fm:
            fence = fm[1]
            continue
        hm = _HEADING.match(line)
        if hm:
            text = _inline(hm[2] or "").strip()
            if text:
                blocks.append(Block(len(hm[1]), text))
            continue
        if _TABLE_RULE.match(line) and "-" in line and "|" in line:
            continue
        blocks.append(Block(0, _inline(line)))
    return blocks


def parse_markdown(
    text: str, settings: SectionSettings, *, fallback_title: str, where: str
) -> ParsedDocument:
    """Markdown text → :class:`ParsedDocument` (title, header metadata, blocks)."""
    lines = _COMMENT.sub("", text).split("\n")
    meta: dict[str, Any] = {}
    errors: list[LoadError] = []
    start = _front_matter(lines, settings, meta, errors, where)
    blocks = _blocks(lines[start:])
    first = next((i for i, b in enumerate(blocks) if b.text.strip()), None)
    title = str(meta.pop("title", "") or "")
    if first is not None and blocks[first].level == 1:
        title = title or blocks[first].text.strip()
        rest = blocks[first + 1 :]
    else:
        h1 = next((b for b in blocks if b.level == 1), None)
        if h1 is not None and not title:
            title = h1.text.strip()
            blocks = [b for b in blocks if b is not h1]
        rest = blocks
    return headed_document(
        title,
        rest,
        settings.header_keys,
        fallback_title=fallback_title,
        where=where,
        metadata=meta,
        errors=errors,
    )


def load_markdown(
    source: SourceFile, data: bytes, config: CollectionConfig, settings: IngestSettings
) -> LoadResult:
    text = decode(data)
    section = settings.markdown
    doc = parse_markdown(text, section, fallback_title=source.path.stem, where=str(source.path))
    return headed_result(source, doc, section, config)


__all__ = ["load_markdown", "parse_markdown"]

"""Word (``.docx``, via python-docx, extra ``docx``) → headed document → records.

Paragraph styles map to Markdown levels: ``Title`` → the title, ``Heading 1`` (見出し 1) →
chapter, ``Heading 2`` → section, deeper headings stay headings. Tables become one line per
row, cells joined by `` | ``. Title: the ``Title`` paragraph, else the document property
title, else the file stem. Fields follow ``[ingest.docx]`` or, when absent,
``[ingest.markdown]``.
"""

from __future__ import annotations

import io
import re
from typing import Any

from tansaku.config import CollectionConfig
from tansaku.errors import MissingExtra
from tansaku.ingest.loaders.base import LoadFailure, LoadResult
from tansaku.ingest.loaders.sections import Block, ParsedDocument, headed_document, headed_result
from tansaku.ingest.loaders.settings import IngestSettings
from tansaku.ingest.sources import SourceFile

CORRUPT = "Word文書(docx)を読み込めません(破損している可能性があります)"
_HEADING_STYLE = re.compile(r"^(?:heading|見出し)\s*(\d)$", re.IGNORECASE)


def _import_docx() -> Any:
    try:
        import docx
    except ImportError:
        raise LoadFailure(
            str(MissingExtra("python-docx", "docx", "Word文書(.docx)の読み込み"))
        ) from None
    return docx


def _level(paragraph: Any) -> int:
    """0 for text, 1 for Title, n + 1 for Heading n."""
    try:
        name = (paragraph.style.name or "") if paragraph.style is not None else ""
    except Exception:
        return 0
    if name.lower() == "title" or name == "表題":
        return 1
    m = _HEADING_STYLE.match(name.strip())
    return int(m[1]) + 1 if m else 0


def _row_text(row: Any) -> str:
    cells: list[str] = []
    for cell in row.cells:
        text = " ".join(cell.text.split())
        if text and (not cells or cells[-1] != text):  # merged cells repeat their text
            cells.append(text)
    return " | ".join(cells)


def _blocks(document: Any) -> list[Block]:
    blocks: list[Block] = []
    for item in document.iter_inner_content():
        if hasattr(item, "rows"):
            blocks.extend(Block(0, _row_text(row)) for row in item.rows)
            blocks.append(Block(0, ""))
        else:
            blocks.append(Block(_level(item), item.text.strip()))
    return blocks


def _parse(document: Any, source: SourceFile, settings: IngestSettings) -> ParsedDocument:
    blocks = _blocks(document)
    title = next((b.text for b in blocks if b.level == 1 and b.text), "")
    blocks = [b for b in blocks if not (b.level == 1 and b.text == title)] if title else blocks
    if not title:
        try:
            title = (document.core_properties.title or "").strip()
        except Exception:
            title = ""
    return headed_document(
        title,
        blocks,
        settings.docx.header_keys,
        fallback_title=source.path.stem,
        where=str(source.path),
    )


def load_docx(
    source: SourceFile, data: bytes, config: CollectionConfig, settings: IngestSettings
) -> LoadResult:
    docx = _import_docx()
    if not data:
        raise LoadFailure("ファイルが空です")
    # load_file checked the archive's inflated size before this (loaders.archive)
    try:
        document = docx.Document(io.BytesIO(data))
        doc = _parse(document, source, settings)
    except OSError:
        raise
    except Exception as exc:  # not a zip, missing parts, bad XML...
        raise LoadFailure(f"{CORRUPT}: {type(exc).__name__}: {exc}") from None
    return headed_result(source, doc, settings.docx, config)


__all__ = ["load_docx"]

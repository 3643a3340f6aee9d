"""PDF (``.pdf``, via pypdf) → field ``body``, chunked across pages, ``page`` = the page
(from 1) where each chunk starts. Title: the PDF's ``/Title`` if set, else the file stem.

Scanned PDFs (images, no text layer) are reported: OCR is not done here.
"""

from __future__ import annotations

import io
from bisect import bisect_right
from typing import Any

from tansaku.config import CollectionConfig
from tansaku.errors import LoadError
from tansaku.ingest.loaders.base import (
    LoadFailure,
    LoadResult,
    base_metadata,
    chunked,
    field_records,
    source_type,
)
from tansaku.ingest.loaders.plaintext import normalize_paragraphs
from tansaku.ingest.loaders.sections import BODY_FIELD
from tansaku.ingest.loaders.settings import IngestSettings
from tansaku.ingest.sources import SourceFile

DEFAULT_SOURCE_TYPE = "document"
CORRUPT = "PDFを読み込めません(破損している可能性があります)"
NO_TEXT = "PDFから文字を抽出できません(スキャン画像のPDFは未対応です。OCR済みのPDFを使ってください)"


def _reader(data: bytes) -> Any:
    import pypdf

    if not data:
        raise LoadFailure("ファイルが空です")
    try:
        reader = pypdf.PdfReader(io.BytesIO(data))
        if reader.is_encrypted and not reader.decrypt(""):
            raise LoadFailure("パスワードで保護されたPDFは読み込めません")
        _ = len(reader.pages)
    except LoadFailure:
        raise
    except OSError:
        raise
    except Exception as exc:  # pypdf raises many types on broken files
        raise LoadFailure(f"{CORRUPT}: {type(exc).__name__}: {exc}") from None
    return reader


def _title(reader: Any) -> str:
    try:
        meta = reader.metadata
        title = meta.title if meta is not None else None
    except Exception:  # a broken info dictionary must not lose the text
        return ""
    return title.strip() if isinstance(title, str) else ""


def load_pdf(
    source: SourceFile, data: bytes, config: CollectionConfig, settings: IngestSettings
) -> LoadResult:
    reader = _reader(data)
    errors: list[LoadError] = []
    parts: list[str] = []
    starts: list[int] = []
    pages: list[int] = []
    offset = 0
    for number, page in enumerate(reader.pages, start=1):
        try:
            text = normalize_paragraphs(page.extract_text() or "")
        except Exception as exc:
            errors.append(
                LoadError(
                    f"{source.path}:{number}",
                    f"{number}ページ目の文字を抽出できません: {type(exc).__name__}: {exc}",
                )
            )
            continue
        if not text:
            continue
        starts.append(offset)
        pages.append(number)
        parts.append(text)
        offset += len(text) + 2
    if not parts:
        if errors:
            raise LoadFailure(f"{CORRUPT}: {errors[0].reason}")
        raise LoadFailure(NO_TEXT)

    def page_at(start: int, end: int) -> dict[str, Any]:
        return {"page": pages[max(0, bisect_right(starts, start) - 1)]}

    metadata = base_metadata(
        source,
        title=_title(reader) or source.path.stem,
        source_type=source_type(settings.pdf.source_type, config, DEFAULT_SOURCE_TYPE),
        extra={"pages": len(reader.pages)},
    )
    chunks = chunked("\n\n".join(parts), config, page_at)
    return LoadResult(
        tuple(field_records(source.doc_prefix, BODY_FIELD, chunks, metadata)), tuple(errors)
    )


__all__ = ["load_pdf"]

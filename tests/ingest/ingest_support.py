"""Helpers shared by the ingest tests: configs, loading, and hand-made PDF fixtures."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from tansaku.config import CollectionConfig
from tansaku.ingest.loaders import LoadResult, load_file
from tansaku.ingest.sources import SourceFile, iter_source_files


def config(
    ingest: dict[str, Any] | None = None,
    *,
    source_type: str = "",
    chunk_size: int = 400,
    chunk_overlap: int = 80,
) -> CollectionConfig:
    return CollectionConfig(
        name="test",
        source_type=source_type,
        chunk_size=chunk_size,
        chunk_overlap=chunk_overlap,
        ingest=ingest or {},
    )


def write(path: Path, text: str, encoding: str = "utf-8") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(text.encode(encoding))
    return path


def load(path: Path, cfg: CollectionConfig | None = None) -> LoadResult:
    """Load one file given directly (doc id = its stem)."""
    (source,) = iter_source_files([path])
    return load_file(source, cfg or config())


def load_all(paths: Sequence[Path], cfg: CollectionConfig | None = None) -> list[LoadResult]:
    return [load_file(s, cfg or config()) for s in iter_source_files(list(paths))]


def by_id(result: LoadResult) -> dict[str, Any]:
    return {r.id: r for r in result.records}


def reasons(result: LoadResult) -> list[str]:
    return [e.reason for e in result.errors]


def assert_json_metadata(result: LoadResult) -> None:
    for record in result.records:
        json.dumps(dict(record.metadata), ensure_ascii=False)
        for value in record.metadata.values():
            assert isinstance(value, str | int | float | bool) or (
                isinstance(value, list) and all(isinstance(v, str) for v in value)
            ), (record.id, value)


def text_pdf(pages: Sequence[str], *, title: str | None = None) -> bytes:
    """A minimal valid PDF with one Helvetica text line per page (ASCII only)."""
    objects: list[bytes] = []
    n_pages = len(pages)
    font_id = 3
    first_page_id = 4
    kids = " ".join(f"{first_page_id + 2 * i} 0 R" for i in range(n_pages))
    objects.append(b"<< /Type /Catalog /Pages 2 0 R >>")
    objects.append(f"<< /Type /Pages /Kids [{kids}] /Count {n_pages} >>".encode())
    objects.append(b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>")
    for i, text in enumerate(pages):
        content_id = first_page_id + 2 * i + 1
        objects.append(
            (
                f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] "
                f"/Resources << /Font << /F1 {font_id} 0 R >> >> /Contents {content_id} 0 R >>"
            ).encode()
        )
        escaped = text.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")
        stream = f"BT /F1 12 Tf 72 720 Td ({escaped}) Tj ET".encode("ascii")
        objects.append(b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream")
    info_id = None
    if title is not None:
        objects.append(f"<< /Title ({title}) >>".encode("ascii"))
        info_id = len(objects)
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    for offset in offsets:
        out += b"%010d 00000 n \n" % offset
    trailer = f"<< /Size {len(objects) + 1} /Root 1 0 R"
    if info_id is not None:
        trailer += f" /Info {info_id} 0 R"
    out += f"trailer\n{trailer} >>\nstartxref\n{xref}\n%%EOF\n".encode("ascii")
    return bytes(out)


def blank_pdf() -> bytes:
    """A one-page PDF with no text layer (like a scan without OCR)."""
    import io

    import pypdf

    writer = pypdf.PdfWriter()
    writer.add_blank_page(width=595, height=842)
    buffer = io.BytesIO()
    writer.write(buffer)
    return buffer.getvalue()


__all__ = [
    "SourceFile",
    "assert_json_metadata",
    "blank_pdf",
    "by_id",
    "config",
    "load",
    "load_all",
    "reasons",
    "text_pdf",
    "write",
]

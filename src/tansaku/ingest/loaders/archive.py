"""Archive-based documents (``.docx``, ``.xlsx``, ``.pptx`` and the OpenDocument formats are zips
of XML parts): :func:`~tansaku.ingest.loaders.load_file` checks every file of these suffixes,
and every file that starts like a zip whatever its name, before a loader sees it. The members'
declared sizes are what a reader gets at most (Python's ``zipfile`` stops a member at its
declared size and checks its CRC, so a member cannot inflate past what it declares while it is
read), so refusing on the declared sizes — the sum over every member, and the ratio of a large
member to its stored size — keeps a zip bomb from ever being inflated."""

from __future__ import annotations

import io
import zipfile

from tansaku.ingest.loaders.base import LoadFailure
from tansaku.ingest.loaders.settings import IngestLimits

RATIO_FLOOR = 1_000_000
"""Members smaller than this when inflated are not held to the ratio (small XML parts of
repeated markup compress very well and cost nothing)."""
MAX_MEMBERS = 10_000
ZIP_BASED = frozenset({".docx", ".xlsx", ".xlsm", ".pptx", ".odt", ".ods", ".odp", ".epub"})
"""Suffixes of zip-based document formats: a loader added for one of them is checked too."""
ZIP_MAGIC = b"PK\x03\x04"


def is_archive(suffix: str, data: bytes) -> bool:
    """Whether a file is checked as an archive: a zip-based suffix, or zip bytes."""
    return suffix.lower() in ZIP_BASED or data[:4] == ZIP_MAGIC


def check_archive(data: bytes, name: str, limits: IngestLimits) -> None:
    """Raise :class:`LoadFailure` (Japanese, naming ``name`` and the limit) when the zip in
    ``data`` would inflate past ``limits``; a file that is not a zip is left to its loader."""
    try:
        members = zipfile.ZipFile(io.BytesIO(data)).infolist()
    except (zipfile.BadZipFile, OSError, ValueError, EOFError):
        return
    if len(members) > MAX_MEMBERS:
        raise LoadFailure(
            f"ファイル「{name}」の中の部品が多すぎます({len(members):,} 個、"
            f"上限 {MAX_MEMBERS:,} 個)。読み込みません"
        )
    total = sum(m.file_size for m in members)
    if total > limits.max_inflated_bytes:
        raise LoadFailure(
            f"ファイル「{name}」は展開すると {total:,} バイトになり、上限"
            f"({limits.max_inflated_bytes:,} バイト)を超えるため読み込みません"
            "(圧縮爆弾の疑い)"
        )
    for m in members:
        if m.file_size < RATIO_FLOOR:
            continue
        ratio = m.file_size / max(1, m.compress_size)
        if ratio > limits.max_inflate_ratio:
            raise LoadFailure(
                f"ファイル「{name}」の部品 {m.filename[:80]} の圧縮率({ratio:,.0f} 倍)が上限"
                f"({limits.max_inflate_ratio:,} 倍)を超えるため読み込みません(圧縮爆弾の疑い)"
            )


__all__ = ["ZIP_BASED", "check_archive", "is_archive"]

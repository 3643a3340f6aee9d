"""Reading one file's bytes safely: regular files only, never past a size cap.

The file is ``stat``-ed before it is opened: a FIFO, socket or device is reported and never
opened (opening a FIFO blocks until a writer comes; reading ``/dev/zero`` never ends). It is
opened with ``O_NONBLOCK`` (so a file swapped for a FIFO after the check cannot block), checked
again on the open descriptor, and read at most ``max_bytes`` bytes plus one to see whether it
goes on: a file that grows past the cap while it is read is reported, not read further.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from tansaku.ingest.loaders.base import LoadFailure
from tansaku.ingest.loaders.settings import MB
from tansaku.ingest.sources import not_regular_reason

BLOCK = 1 << 20
# O_NONBLOCK, O_CLOEXEC and O_NOCTTY are POSIX; Windows has no FIFOs to block on.
_FLAGS = os.O_RDONLY | getattr(os, "O_BINARY", 0)
for _name in ("O_NONBLOCK", "O_CLOEXEC", "O_NOCTTY"):
    _FLAGS |= getattr(os, _name, 0)


def size_label(n: int) -> str:
    """``50000000`` → ``50 MB``; other sizes in bytes with separators."""
    return f"{n // MB} MB" if n % MB == 0 else f"{n:,} バイト"


def too_large_reason(size: int, max_bytes: int) -> str:
    return (
        f"ファイルが大きすぎます({size:,} バイト。上限は {size_label(max_bytes)})。"
        "読み込みません([ingest] max_file_mb で上限を変えられます)"
    )


def _check(mode: int) -> None:
    if stat.S_ISDIR(mode):
        raise LoadFailure("ファイルではなくディレクトリです")
    if not stat.S_ISREG(mode):
        raise LoadFailure(not_regular_reason(mode))


def _open(path: Path) -> int:
    return os.open(path, _FLAGS)


def read_capped(path: Path, max_bytes: int) -> bytes:
    """The bytes of the regular file at ``path`` (links followed), at most ``max_bytes``.

    Raises :class:`LoadFailure` for a non-regular file (without opening it) and for a file
    larger than ``max_bytes`` (before reading it, or as soon as it grows past it), and
    ``OSError`` (missing, no permission) for :func:`load_file` to word.
    """
    st = os.stat(path)
    _check(st.st_mode)
    if st.st_size > max_bytes:
        raise LoadFailure(too_large_reason(st.st_size, max_bytes))
    fd = _open(path)
    try:
        st = os.fstat(fd)
        _check(st.st_mode)
        if st.st_size > max_bytes:
            raise LoadFailure(too_large_reason(st.st_size, max_bytes))
        parts: list[bytes] = []
        total = 0
        while total < max_bytes:
            block = os.read(fd, min(BLOCK, max_bytes - total))
            if not block:
                break
            parts.append(block)
            total += len(block)
        if total >= max_bytes and os.read(fd, 1):
            raise LoadFailure(
                f"読み込み中にファイルが上限({size_label(max_bytes)})を超えて大きくなりました。"
                "読み込みません"
            )
    finally:
        os.close(fd)
    return b"".join(parts)


__all__ = ["read_capped", "size_label", "too_large_reason"]

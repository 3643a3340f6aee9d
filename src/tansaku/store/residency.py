"""Handing back the page cache a freshly loaded read-only shard holds.

When qdrant-edge loads a shard it reads some of its files through whole: the payload indexes
of an appendable segment always (whatever their memory placement), and every structure of a
shard written with the engine's default ``Cached`` placement. Its files are preallocated (4 MiB
per payload index, 32 MiB per vector or payload store), so a shard of a few hundred records
ended up holding 25–70 MiB of resident file pages, nearly all of them the zeros of unwritten
space, in every process that searched it.

:func:`release_file_pages` asks the kernel to reclaim the pages mapped from a folder
(``madvise(MADV_PAGEOUT)``, Linux 5.4+): clean file pages are dropped and read again from disk
or the page cache when a search touches them; the advice never discards data (a page that
cannot be reclaimed stays). Elsewhere, or on an older kernel, it does nothing.
"""

from __future__ import annotations

import ctypes
import logging
import sys
from pathlib import Path

log = logging.getLogger(__name__)

MADV_PAGEOUT = 21  # linux/mman.h
_MAPS = Path("/proc/self/maps")
_libc: ctypes.CDLL | None = None
_unsupported = not sys.platform.startswith("linux")


def _madvise() -> ctypes.CDLL | None:
    global _libc, _unsupported
    if _libc is None and not _unsupported:
        try:
            libc = ctypes.CDLL(None, use_errno=True)
            libc.madvise.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
            libc.madvise.restype = ctypes.c_int
            _libc = libc
        except (OSError, AttributeError):
            _unsupported = True
    return _libc


def mapped_ranges(folder: Path) -> list[tuple[int, int]]:
    """(start, end) of this process's mappings of files inside ``folder``."""
    prefix = str(folder.resolve()) + "/"
    out = []
    try:
        lines = _MAPS.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return []
    for line in lines:
        parts = line.split(maxsplit=5)
        if len(parts) == 6 and parts[5].startswith(prefix):
            start, _, end = parts[0].partition("-")
            out.append((int(start, 16), int(end, 16)))
    return out


def release_file_pages(folder: Path) -> int:
    """Advise the kernel to reclaim the pages mapped from files in ``folder``; returns how
    many mappings took the advice (0 where the platform has no ``MADV_PAGEOUT``)."""
    global _unsupported
    libc = _madvise()
    if libc is None:
        return 0
    done = 0
    for start, end in mapped_ranges(folder):
        if libc.madvise(start, end - start, MADV_PAGEOUT) == 0:
            done += 1
        elif ctypes.get_errno() == 22 and not done:  # EINVAL: a kernel before 5.4
            _unsupported = True
            log.info("this kernel has no MADV_PAGEOUT: loaded shards keep their file pages")
            return 0
    return done


__all__ = ["MADV_PAGEOUT", "mapped_ranges", "release_file_pages"]

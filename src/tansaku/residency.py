"""Handing back the resident pages of files a process maps and no longer needs in memory.

Two libraries read more of their files at load than their searches use afterwards:

* **qdrant-edge** reads some of a shard's files through whole when it loads it: the payload
  indexes of an appendable segment always (whatever their memory placement), and every
  structure of a shard written with the engine's default ``Cached`` placement. Its files are
  preallocated (4 MiB per payload index, 32 MiB per vector or payload store), so a shard of a
  few hundred records ended up holding 25–70 MiB of resident file pages, nearly all of them
  the zeros of unwritten space, in every process that searched it
  (:func:`tansaku.store.shard.load_read_only`).
* **Sudachi** maps its 193 MiB dictionary and reads 72 MiB of it while loading; analysing a
  question then touches a few MiB. Every process that analyses text (a server, each of its
  search processes) held those 72 MiB, and after a minute of new questions ~125 MiB of the
  file (:func:`tansaku.text.analyzer.dictionary_folder`).

:func:`release_file_pages` drops the pages from this process's page tables. A shared mapping
(the engine's) and a read-only private one (Sudachi's) get ``madvise(MADV_DONTNEED)``: the
pages stay in the kernel's page cache, so a read that touches them again maps them back
without reading the disk; dirty shared pages are written back as usual, and a mapping that
cannot be written holds no private copies, so the advice never discards data. A writable
private mapping gets ``MADV_PAGEOUT`` (Linux 5.4+), which reclaims its clean pages. Elsewhere
(not Linux) it does nothing.
"""

from __future__ import annotations

import ctypes
import logging
import sys
from pathlib import Path
from typing import NamedTuple

log = logging.getLogger(__name__)

MADV_DONTNEED = 4  # linux/mman.h
MADV_PAGEOUT = 21
_MAPS = Path("/proc/self/maps")
_SMAPS = Path("/proc/self/smaps")
_libc: ctypes.CDLL | None = None
_unsupported = not sys.platform.startswith("linux")
_no_pageout = False


class MappedRange(NamedTuple):
    """One mapping of a file: its addresses, whether it is shared and whether it is writable."""

    start: int
    end: int
    shared: bool
    writable: bool


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


def mapped_ranges(folder: Path) -> list[MappedRange]:
    """This process's mappings of files inside ``folder`` (``/proc/self/maps``)."""
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
            perms = parts[1]
            out.append(MappedRange(int(start, 16), int(end, 16), perms[3:4] == "s", "w" in perms))
    return out


def resident_kib(folder: Path) -> int:
    """KiB of this process's mappings of files inside ``folder`` resident now
    (``/proc/self/smaps``; 0 where there is none)."""
    prefix, total, inside = str(folder.resolve()) + "/", 0, False
    try:
        lines = _SMAPS.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return 0
    for line in lines:
        head = line.split(maxsplit=5)
        if len(head) >= 5 and "-" in head[0] and not head[0].endswith(":"):
            inside = len(head) == 6 and head[5].startswith(prefix)
        elif inside and line.startswith("Rss:"):
            total += int(line.split()[1])
    return total


def release_file_pages(folder: Path) -> int:
    """Drop this process's resident pages of the files mapped from ``folder`` (see the module
    docstring); returns how many mappings took the advice (0 off Linux)."""
    global _no_pageout
    libc = _madvise()
    if libc is None:
        return 0
    done = 0
    for start, end, shared, writable in mapped_ranges(folder):
        keep_cache = shared or not writable
        if not keep_cache and _no_pageout:
            continue
        if libc.madvise(start, end - start, MADV_DONTNEED if keep_cache else MADV_PAGEOUT) == 0:
            done += 1
        elif not keep_cache and ctypes.get_errno() == 22:  # EINVAL: a kernel before 5.4
            _no_pageout = True
            log.info("this kernel has no MADV_PAGEOUT: private mappings keep their pages")
    return done


__all__ = [
    "MADV_DONTNEED",
    "MADV_PAGEOUT",
    "MappedRange",
    "mapped_ranges",
    "release_file_pages",
    "resident_kib",
]

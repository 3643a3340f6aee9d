"""Generations: how a collection's data changes while other processes read it.

A collection folder holds its config and numbered *generations*; ``CURRENT`` names the committed
one::

    collections/<name>/
      config.toml
      CURRENT                 "g000007"
      write.lock              the writer's lock (holder: pid, command, start)
      gens/g000007/           shard/ (records), units/ (sentence units + df.sqlite),
                              state.json (BM25 statistics, manifest), .readers

A committed generation is never written again. A writer (ingest, delete, repair) takes the
collection's :class:`~tansaku.backends.locks.WriterLock`, copies the committed generation to a new
one, writes there, flushes, closes and *settles* it (opens and closes each shard once, so that
loading it changes no file), then replaces ``CURRENT`` in one atomic rename. Readers — any number of
threads and processes — open the generation ``CURRENT`` names, read-only (the shards are created
without a write-ahead log, which is what lets several processes load one shard), and move to a
newer one between searches. Records, BM25 statistics, unit counts and the manifest therefore
commit together or not at all: a writer killed at any point leaves ``CURRENT`` on the last commit
and a working folder that the next writer removes.

Each process holding a generation open keeps a shared ``flock`` on its ``.readers`` file; a writer
deletes an old generation only when it can lock that file exclusively.
"""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Iterable
from pathlib import Path

from tansaku.backends.locks import try_exclusive

GENS = "gens"
CURRENT = "CURRENT"
READERS = ".readers"
WRITE_LOCK = "write.lock"
_GEN_RE = re.compile(r"^g(\d{6,})$")
TRASH = ".trash-"


def gen_name(n: int) -> str:
    return f"g{n:06d}"


def current(col_dir: Path) -> Path | None:
    """The committed generation's folder, or ``None`` before the first commit."""
    name = current_name(os.fspath(col_dir))
    return col_dir / GENS / name if name else None


def current_name(col_dir: str) -> str:
    """The committed generation's name (``g000007``), or ``""`` before the first commit. Every
    search asks (through the view's fingerprint): plain ``os`` calls on a string path, a third
    of ``Path.read_text``'s cost."""
    try:
        fd = os.open(os.path.join(col_dir, CURRENT), os.O_RDONLY)
    except FileNotFoundError:
        return ""
    try:
        name = os.read(fd, 64).decode("utf-8", "replace").strip()
    finally:
        os.close(fd)
    return name if _GEN_RE.match(name) else ""


def is_legacy(col_dir: Path) -> bool:
    """A collection written before generations (``shard/`` beside ``config.toml``)."""
    return not (col_dir / CURRENT).exists() and (col_dir / "shard").is_dir()


def _numbers(col_dir: Path) -> list[int]:
    gens = col_dir / GENS
    if not gens.is_dir():
        return []
    return [int(m.group(1)) for p in gens.iterdir() if (m := _GEN_RE.match(p.name))]


def next_dir(col_dir: Path) -> Path:
    """A folder for the next generation (numbers only grow, even past abandoned ones)."""
    return col_dir / GENS / gen_name(max(_numbers(col_dir), default=0) + 1)


def start(col_dir: Path, base: Path | None) -> Path:
    """A new working generation: a copy of ``base`` (the committed one), or empty."""
    target = next_dir(col_dir)
    if base is not None:
        shutil.copytree(
            base,
            target,
            ignore=shutil.ignore_patterns(READERS, "*.tmp"),
            copy_function=copy_sparse,
        )
    else:
        target.mkdir(parents=True)
    return target


def copy_sparse(src: str, dst: str) -> str:
    """Copy a file keeping its holes: the engine preallocates its memory-mapped files sparse
    (a 10k-record shard is 28 MB on disk in 150 MB of file sizes), and a plain copy would
    write every zero."""
    with open(src, "rb") as fin, open(dst, "wb") as fout:
        size = os.fstat(fin.fileno()).st_size
        fd_in, fd_out = fin.fileno(), fout.fileno()
        pos = 0
        while pos < size:
            try:
                data = os.lseek(fd_in, pos, os.SEEK_DATA)
            except OSError:  # no data past pos (ENXIO), or holes not supported: copy the rest
                data = size if _holes_supported(fd_in) else pos
            if data >= size:
                break
            hole = os.lseek(fd_in, data, os.SEEK_HOLE)
            _copy_range(fd_in, fd_out, data, hole - data)
            pos = hole
        os.ftruncate(fd_out, size)
    shutil.copystat(src, dst)
    return dst


def _holes_supported(fd: int) -> bool:
    try:
        os.lseek(fd, 0, os.SEEK_HOLE)
    except OSError:
        return False
    return True


def _copy_range(fd_in: int, fd_out: int, offset: int, length: int) -> None:
    done = 0
    while done < length:
        n = os.copy_file_range(fd_in, fd_out, length - done, offset + done, offset + done)
        if n == 0:
            raise OSError(f"short copy at offset {offset + done}")
        done += n


def _fsync(path: Path, *, directory: bool = False) -> None:
    fd = os.open(path, os.O_RDONLY | (os.O_DIRECTORY if directory else 0))
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def fsync_tree(root: Path) -> None:
    """Every file and folder under ``root`` on disk (a published generation survives a power
    cut as well as a killed process)."""
    for dirpath, _, files in os.walk(root):
        for f in files:
            _fsync(Path(dirpath) / f)
        _fsync(Path(dirpath), directory=True)


def publish(col_dir: Path, gen: Path) -> None:
    """Make ``gen`` the committed generation: one atomic rename of ``CURRENT``."""
    (gen / READERS).touch()
    fsync_tree(gen)
    tmp = col_dir / f".{CURRENT}.{os.getpid()}.tmp"
    with tmp.open("w", encoding="utf-8") as fh:
        fh.write(gen.name + "\n")
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, col_dir / CURRENT)
    _fsync(col_dir, directory=True)


def discard(gen: Path) -> None:
    """Remove a working generation that was never published."""
    _remove(gen)


def _remove(path: Path) -> None:
    trash = path.with_name(f"{TRASH}{path.name}-{os.getpid()}")
    try:
        os.replace(path, trash)
    except FileNotFoundError:
        return
    shutil.rmtree(trash, ignore_errors=True)


def collect(col_dir: Path, keep: Iterable[Path] = ()) -> list[str]:
    """Remove generations that are neither committed, kept, nor open in any process (and the
    leftovers of interrupted removals). Call it holding the writer lock. Returns the names
    removed."""
    gens = col_dir / GENS
    if not gens.is_dir():
        return []
    live = {p.resolve() for p in keep}
    cur = current(col_dir)
    if cur is not None:
        live.add(cur.resolve())
    removed: list[str] = []
    for p in sorted(gens.iterdir()):
        if p.name.startswith(TRASH):
            shutil.rmtree(p, ignore_errors=True)
            continue
        if not _GEN_RE.match(p.name) or p.resolve() in live:
            continue
        readers = p / READERS
        if not readers.exists():  # never published: a writer died before committing it
            _remove(p)
            removed.append(p.name)
            continue
        fd = try_exclusive(readers)
        if fd is None:  # a process still reads it; a later writer removes it
            continue
        try:
            _remove(p)
        finally:
            os.close(fd)
        removed.append(p.name)
    return removed

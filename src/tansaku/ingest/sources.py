"""Which files an ingest reads, and the stable document id prefix of each.

A file given directly yields itself (whatever its suffix: the loader reports unsupported or
missing files); a directory yields every supported file under it, recursively, sorted, skipping
hidden files and folders (``.git``, ``.DS_Store``) and Office lock files (``~$報告書.docx``).

``doc_prefix`` is the document id of a one-document file (Markdown, text, PDF, Word) and the
prefix of row-numbered ids in table files: the path relative to the directory it was found
under, POSIX style, without suffix (``notes/2024/note-01.md`` found under ``notes/`` →
``2024/note-01``); for a file given directly, its stem (``note-01``). Moving the folder keeps
the ids; renaming a file changes them.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

SUPPORTED_SUFFIXES: frozenset[str] = frozenset(
    {".md", ".markdown", ".txt", ".pdf", ".docx", ".csv", ".tsv", ".jsonl", ".json"}
)


@dataclass(frozen=True)
class SourceFile:
    """One file to load. ``path`` is as given (relative stays relative); ``root`` is the
    directory it was found under (its parent when given directly)."""

    path: Path
    root: Path
    doc_prefix: str


def _skipped(name: str) -> bool:
    return name.startswith((".", "~$"))


def _walk(root: Path) -> list[Path]:
    found: list[Path] = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if not _skipped(d))
        base = Path(dirpath)
        for name in filenames:
            if _skipped(name) or Path(name).suffix.lower() not in SUPPORTED_SUFFIXES:
                continue
            found.append(base / name)
    return sorted(found, key=lambda p: p.relative_to(root).as_posix())


def _doc_prefix(path: Path, root: Path) -> str:
    return path.relative_to(root).with_suffix("").as_posix()


def _is_dir(path: Path) -> bool:
    try:
        return path.is_dir()
    except OSError:
        return False


def _key(path: Path) -> str:
    try:
        return str(path.resolve())
    except (OSError, RuntimeError):
        return str(path.absolute())


def iter_source_files(paths: Sequence[Path]) -> list[SourceFile]:
    """Expand files and directories into :class:`SourceFile` s, in order, without duplicates.

    Never raises for a missing path: it is returned as a file so the loader reports
    「ファイルが見つかりません」.
    """
    out: list[SourceFile] = []
    seen: set[str] = set()

    def add(source: SourceFile) -> None:
        key = _key(source.path)
        if key not in seen:
            seen.add(key)
            out.append(source)

    for raw in paths:
        path = Path(raw)
        if _is_dir(path):
            for file in _walk(path):
                add(SourceFile(path=file, root=path, doc_prefix=_doc_prefix(file, path)))
        else:
            add(SourceFile(path=path, root=path.parent, doc_prefix=path.stem or path.name))
    return out


__all__ = ["SUPPORTED_SUFFIXES", "SourceFile", "iter_source_files"]

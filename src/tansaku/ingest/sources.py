"""Which files an ingest reads, and the stable document id prefix of each.

A file given directly yields itself (whatever its suffix: the loader reports unsupported or
missing files); a directory yields every supported file under it, recursively, sorted, skipping
hidden files and folders (``.git``, ``.DS_Store``) and Office lock files (``~$報告書.docx``).

Only **regular files inside the folder** are read (a folder from a fresh clone may hold
anything):

* a FIFO, socket or device is never opened: it comes back *refused* (:attr:`SourceFile.refused`
  holds the Japanese reason) and :func:`~tansaku.ingest.loaders.load_file` reports it;
* a symbolic link is followed when its target, resolved, lies inside the folder given (for a
  path given directly: the folder it is in); a target outside is refused unless
  ``follow_symlinks=True``; a broken or looping link is refused; a link to a device or FIFO is
  refused even then;
* a folder reached through a link is walked after the real folders, and only if its target was
  not walked yet, so link cycles end and no file is read twice (the real path wins over a link);
* a folder that cannot be listed is refused.

The walk only calls ``lstat``/``stat``/``scandir``: it never opens a file.

``doc_prefix`` is the document id of a one-document file (Markdown, text, PDF, Word) and the
prefix of row-numbered ids in table files: the path relative to the directory it was found
under, POSIX style, without suffix (``notes/2024/note-01.md`` found under ``notes/`` →
``2024/note-01``); for a file given directly, its stem (``note-01``). Moving the folder keeps
the ids; renaming a file changes them.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

SUPPORTED_SUFFIXES: frozenset[str] = frozenset(
    {".md", ".markdown", ".txt", ".pdf", ".docx", ".csv", ".tsv", ".jsonl", ".json"}
)
FOLLOW_HINT = "読み込むには --follow-symlinks(follow_symlinks=True)を指定してください"
LOOP = "シンボリックリンクが循環しています"


@dataclass(frozen=True)
class SourceFile:
    """One file to load. ``path`` is as given (relative stays relative); ``root`` is the
    directory it was found under (its parent when given directly)."""

    path: Path
    root: Path
    doc_prefix: str
    refused: str = ""
    """Why the walk refused this path (a Japanese reason), ``""`` to load it. A refused path
    is reported by ``load_file`` without being opened."""


def file_kind(mode: int) -> str:
    """The Japanese name of a non-regular file type (``st_mode``)."""
    if stat.S_ISFIFO(mode):
        return "名前付きパイプ(FIFO)"
    if stat.S_ISSOCK(mode):
        return "ソケット"
    if stat.S_ISCHR(mode):
        return "キャラクタデバイス"
    if stat.S_ISBLK(mode):
        return "ブロックデバイス"
    if stat.S_ISDIR(mode):
        return "ディレクトリ"
    return "特殊なファイル"


def not_regular_reason(mode: int, target: str = "") -> str:
    where = f": {target}" if target else ""
    owner = "リンク先が" if target else ""
    return f"{owner}通常のファイルではありません({file_kind(mode)}{where})。読み込みません"


def _os_reason(exc: OSError) -> str:
    if isinstance(exc, PermissionError):
        return "読み取り権限がありません"
    if isinstance(exc, FileNotFoundError):
        return "見つかりません"
    return exc.strerror or str(exc)


def _link_problem(path: Path, exc: OSError) -> str:
    if isinstance(exc, FileNotFoundError):
        try:
            target = os.readlink(path)
        except OSError:
            target = "?"
        return f"シンボリックリンクの先がありません(→ {target})"
    if exc.errno == errno.ELOOP:
        return LOOP
    return f"シンボリックリンクの先を確かめられません: {_os_reason(exc)}"


def _outside_reason(real: str) -> str:
    return f"シンボリックリンクの先が取り込むフォルダの外です(→ {real})。{FOLLOW_HINT}"


def _inside(real: str, real_root: Path) -> bool:
    return Path(real).is_relative_to(real_root)


def _skipped(name: str) -> bool:
    return name.startswith((".", "~$"))


def _supported(name: str) -> bool:
    return Path(name).suffix.lower() in SUPPORTED_SUFFIXES


def _doc_prefix(path: Path, root: Path) -> str:
    return path.relative_to(root).with_suffix("").as_posix()


class _Walk:
    """One folder given to an ingest: what it holds, by the rules of the module docstring."""

    def __init__(self, root: Path, *, follow_symlinks: bool) -> None:
        self.root = root
        self.real_root = Path(os.path.realpath(root))
        self.follow = follow_symlinks
        self.visited: set[tuple[int, int]] = set()
        self.deferred: list[Path] = []  # folders reached through a link, walked last
        self.found: list[tuple[SourceFile, bool]] = []  # (source, reached through a link)

    def run(self) -> list[tuple[SourceFile, bool]]:
        self._walk(self.root, via_link=False)
        while self.deferred:
            self._walk(self.deferred.pop(0), via_link=True)
        return sorted(self.found, key=lambda f: f[0].path.relative_to(self.root).as_posix())

    def _source(self, path: Path, refused: str = "") -> SourceFile:
        return SourceFile(path, self.root, _doc_prefix(path, self.root), refused)

    def _refuse(self, path: Path, reason: str) -> None:
        self.found.append((self._source(path, reason), False))

    def _walk(self, top: Path, *, via_link: bool) -> None:
        """Walk ``top`` and the real folders under it, with a stack: a folder nested thousands
        deep must not hit Python's recursion limit."""
        stack = [top]
        while stack:
            for entry in self._list(stack.pop()):
                self._entry(entry, stack, via_link=via_link)

    def _list(self, path: Path) -> list[os.DirEntry[str]]:
        try:
            st = os.stat(path)
            key = (st.st_dev, st.st_ino)
            if key in self.visited:
                return []  # already walked under its real path or another link: no loop
            self.visited.add(key)
            with os.scandir(path) as it:
                return sorted((e for e in it if not _skipped(e.name)), key=lambda e: e.name)
        except OSError as exc:
            self._refuse(path, f"フォルダを読み取れません: {_os_reason(exc)}")
            return []

    def _entry(self, entry: os.DirEntry[str], stack: list[Path], *, via_link: bool) -> None:
        path = Path(entry.path)
        supported = _supported(entry.name)
        try:
            mode = entry.stat(follow_symlinks=False).st_mode
        except OSError:
            return  # gone since the folder was listed
        if stat.S_ISLNK(mode):
            self._link(path, supported=supported)
        elif stat.S_ISDIR(mode):
            stack.append(path)
        elif stat.S_ISREG(mode):
            if supported:
                self.found.append((self._source(path), via_link))
        elif supported:  # FIFO, socket, device: reported, never opened
            self._refuse(path, not_regular_reason(mode))

    def _link(self, path: Path, *, supported: bool) -> None:
        try:
            real = os.path.realpath(path, strict=True)
            mode = os.stat(path).st_mode
        except OSError as exc:
            if supported:  # a broken link named like a folder is skipped, as it always was
                self._refuse(path, _link_problem(path, exc))
            return
        allowed = self.follow or _inside(real, self.real_root)
        if stat.S_ISDIR(mode):
            if allowed:
                self.deferred.append(path)
            else:
                self._refuse(path, _outside_reason(real))
        elif not supported:
            return
        elif not allowed:
            self._refuse(path, _outside_reason(real))
        elif not stat.S_ISREG(mode):
            self._refuse(path, not_regular_reason(mode, real))
        else:
            self.found.append((self._source(path), True))


def _given_file(path: Path, *, follow_symlinks: bool) -> tuple[SourceFile, bool]:
    """A path given directly that is not a folder; refused if it is not a regular file, or a
    link out of the folder it is in."""
    source = SourceFile(path=path, root=path.parent, doc_prefix=path.stem or path.name)
    try:
        mode = os.lstat(path).st_mode
    except OSError:
        return source, False  # missing or unreadable: load_file reports it
    if not stat.S_ISLNK(mode):
        if stat.S_ISREG(mode):
            return source, False
        return replace(source, refused=not_regular_reason(mode)), False
    try:
        real = os.path.realpath(path, strict=True)
        mode = os.stat(path).st_mode
    except OSError as exc:
        return replace(source, refused=_link_problem(path, exc)), True
    if not follow_symlinks and not _inside(real, Path(os.path.realpath(path.parent))):
        return replace(source, refused=_outside_reason(real)), True
    if not stat.S_ISREG(mode):
        return replace(source, refused=not_regular_reason(mode, real)), True
    return source, True


def _given_folder_refusal(path: Path, *, follow_symlinks: bool) -> str:
    """A folder given directly through a link is walked only if the link stays in its parent."""
    if follow_symlinks or not path.is_symlink():
        return ""
    real = os.path.realpath(path)
    if _inside(real, Path(os.path.realpath(path.parent))):
        return ""
    return _outside_reason(real)


def _is_dir(path: Path) -> bool:
    try:
        return path.is_dir()
    except OSError:
        return False


def _key(source: SourceFile) -> str:
    if source.refused:  # every refused path is reported, even two links to one target
        return f"refused:{source.path.absolute()}"
    try:
        return str(source.path.resolve())
    except (OSError, RuntimeError):
        return str(source.path.absolute())


def iter_source_files(paths: Sequence[Path], *, follow_symlinks: bool = False) -> list[SourceFile]:
    """Expand files and directories into :class:`SourceFile` s, in order, without duplicates.

    Never raises for a bad path: a missing path is returned as a file so the loader reports
    「ファイルが見つかりません」; a FIFO, device, link out of the folder (unless
    ``follow_symlinks``), broken or looping link, or unreadable folder is returned with
    :attr:`SourceFile.refused` set, so the loader reports it without opening it. A file
    reached both under its real path and through a link is returned once, under its real path.
    """
    found: list[tuple[SourceFile, bool]] = []
    for raw in paths:
        path = Path(raw)
        if _is_dir(path):
            refusal = _given_folder_refusal(path, follow_symlinks=follow_symlinks)
            if refusal:
                found.append((SourceFile(path, path.parent, path.name, refusal), True))
            else:
                found.extend(_Walk(path, follow_symlinks=follow_symlinks).run())
        else:
            found.append(_given_file(path, follow_symlinks=follow_symlinks))
    chosen: dict[str, int] = {}
    for i, (source, via_link) in enumerate(found):
        key = _key(source)
        first = chosen.get(key)
        if first is None or (found[first][1] and not via_link):
            chosen[key] = i
    keep = set(chosen.values())
    return [source for i, (source, _) in enumerate(found) if i in keep]


__all__ = [
    "SUPPORTED_SUFFIXES",
    "SourceFile",
    "file_kind",
    "iter_source_files",
    "not_regular_reason",
]

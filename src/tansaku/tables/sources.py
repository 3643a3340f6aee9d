"""Where a ``TableDatabase`` loads each table from, and which tables changed since.

At open and at each reload the table's file is copied into a private folder (a *snapshot*),
and every database of the sandbox — the shared one, each tool scope's, a worker restarted
after a timeout — loads the table from that copy. So:

- all of them hold the same rows, also a scope loaded later or a worker started later;
- when a changed file cannot be read, the databases are rebuilt from the last good copy: the
  old table stays in place;
- a file is stale when its signature (modification time in ns, size, inode) differs from the
  one taken *before* its copy — a file appended to while it was copied is read again.

The folder (``tansaku-tables-*`` in the temp directory, mode 0700) is removed when the database
is closed or collected. It costs the size of the registered files on disk.
"""

from __future__ import annotations

import itertools
import re
import shutil
import tempfile
import weakref
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from tansaku.errors import LoadError
from tansaku.tables.registry import TablesConfig, TableSpec
from tansaku.tables.reload import ReloadRequests, file_signature

Signature = tuple[int, int, int]


@dataclass(frozen=True)
class Snapshot:
    path: Path
    """The private copy."""
    signature: Signature | None
    """The original file's, taken before the copy."""


def signature(path: Path) -> Signature | None:
    """``(mtime_ns, size, inode)`` of ``path``, None when it cannot be read."""
    return file_signature(path)


def missing(table: TableSpec) -> LoadError:
    return LoadError(str(table.path), f"テーブル「{table.name}」のファイルがありません")


class TableSources:
    """The snapshot of each table and what changed since it was taken (not thread-safe: the
    ``TableDatabase`` calls it under its reload lock)."""

    def __init__(self, config: TablesConfig) -> None:
        self.config = config
        self.folder = Path(tempfile.mkdtemp(prefix="tansaku-tables-"))
        self._cleanup = weakref.finalize(self, shutil.rmtree, str(self.folder), True)
        self._numbers = itertools.count(1)
        self._loaded: dict[str, Snapshot] = {}
        self._failed: dict[str, Signature | None] = {}
        """The signature of a file that could not be loaded: not tried again until it changes."""
        self.requests = ReloadRequests(config.source)

    def take_all(self) -> None:
        """Snapshots of every table (``LoadError`` for a missing file)."""
        for table in self.config.tables:
            self._loaded[table.name] = self.take(table)

    def take(self, table: TableSpec) -> Snapshot:
        """A new private copy of ``table``'s file (``LoadError`` when it cannot be read)."""
        before = signature(table.path)
        if before is None or not table.path.is_file():
            raise missing(table)
        suffix = re.sub(r"[^a-z0-9.]", "", "".join(table.path.suffixes).lower())[-16:]
        target = self.folder / f"{table.name}-{next(self._numbers)}{suffix}"
        try:
            shutil.copyfile(table.path, target)
        except OSError as e:
            target.unlink(missing_ok=True)
            reason = e.strerror or type(e).__name__
            raise LoadError(
                str(table.path), f"テーブル「{table.name}」のファイルを読めません: {reason}"
            ) from None
        return Snapshot(target, before)

    def files(self, fresh: Mapping[str, Snapshot] | None = None) -> dict[str, str]:
        """Table → the copy to load it from (``fresh`` ones in place of the loaded ones)."""
        current = {**self._loaded, **(fresh or {})}
        return {name: str(snapshot.path) for name, snapshot in current.items()}

    def stale(self) -> list[str]:
        """Tables whose file changed since its copy (and not to a version that already failed
        to load), or that ``tansaku tables reload`` asked for, in registry order."""
        asked = self.requests.pending()
        out = []
        for table in self.config.tables:
            if table.name in asked:
                out.append(table.name)
                continue
            now = signature(table.path)
            loaded = self._loaded.get(table.name)
            if loaded is not None and now == loaded.signature:
                continue
            if table.name in self._failed and self._failed[table.name] == now:
                continue
            out.append(table.name)
        return out

    def commit(self, fresh: Mapping[str, Snapshot]) -> None:
        """``fresh`` copies are now the loaded ones; the copies they replace are deleted."""
        for name, snapshot in fresh.items():
            old = self._loaded.get(name)
            self._loaded[name] = snapshot
            self._failed.pop(name, None)
            if old is not None and old.path != snapshot.path:
                old.path.unlink(missing_ok=True)

    def reject(self, name: str, snapshot: Snapshot | None, failed: Signature | None) -> None:
        """``name``'s file at ``failed`` could not be loaded: its copy (if any) is deleted and the
        loaded one kept."""
        self._failed[name] = failed
        if snapshot is not None:
            snapshot.path.unlink(missing_ok=True)

    def close(self) -> None:
        self._cleanup()

"""How the agent's stores in appdb (the unanswered log, the conversation history) reach the
database: given open, or opened on first use from the legacy file path of earlier versions
(``<home>/appdb.sqlite``: the workspace is its folder, and its rows are imported into appdb
once, on first use; the file is left as is). Nothing here imports appdb until it is used.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tansaku.appdb import AppDB

ImportLegacy = Callable[["AppDB", Path], object]
"""Copy the legacy file's rows into appdb (called once, only when the file was given)."""


class AppDBHandle:
    """``target``: the legacy file path or an open :class:`AppDB`."""

    def __init__(self, target: Path | str | AppDB, import_legacy: ImportLegacy) -> None:
        if isinstance(target, Path | str):
            self.path: Path | None = Path(target)
            self._home: Path | None = self.path.parent
            self._db: AppDB | None = None
        else:
            self.path = self._home = None
            self._db = target
        self._import_legacy = import_legacy
        self._lock = threading.Lock()
        self._imported = False

    def get(self) -> AppDB:
        """The application database (opened, and the legacy rows imported, on first use)."""
        with self._lock:
            db = self._db
            if db is None:
                from tansaku.appdb import shared_appdb

                db = self._db = shared_appdb(self._home)
            if not self._imported and self.path is not None:
                self._import_legacy(db, self.path)
                self._imported = True
            return db

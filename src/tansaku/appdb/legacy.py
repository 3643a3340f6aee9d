"""Copying a raw-SQLite file of earlier versions (``<home>/appdb.sqlite``) into appdb once.

A copy is marked by a ``Setting`` named after what is copied and the file's path, so it runs
once per file, also with several processes starting at once: the copy's write transaction
takes a lock on the marker and looks again before it writes.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from tansaku.appdb.models import Setting, utcnow

if TYPE_CHECKING:
    from sqlalchemy.orm import Session

    from tansaku.appdb.db import AppDB

T = TypeVar("T")


class LegacyFile:
    """One earlier file and what is copied from it (``kind``: the marker's prefix)."""

    def __init__(self, db: AppDB, path: Path, kind: str) -> None:
        self.db = db
        self.path = path
        self.where = str(path.resolve())
        self.marker = f"{kind}:" + hashlib.sha256(self.where.encode("utf-8")).hexdigest()[:32]

    def pending(self) -> bool:
        """Whether the file exists and has not been copied yet."""
        if not self.path.is_file():
            return False
        with self.db.read() as s:
            return s.get(Setting, self.marker) is None

    def read(self, query: Callable[[sqlite3.Connection, set[str]], T]) -> T:
        """``query(connection, table names)`` over the file, opened read-only."""
        con = sqlite3.connect(self.path.resolve().as_uri() + "?mode=ro", uri=True, timeout=30)
        try:
            return query(con, {r[0] for r in con.execute("SELECT name FROM sqlite_master")})
        finally:
            con.close()

    def copy_once(
        self,
        query: Callable[[sqlite3.Connection, set[str]], T],
        insert: Callable[[Session, T], int],
        *,
        counted: str,
    ) -> int:
        """Copy the file unless it was copied before: ``query`` reads it (:meth:`read`),
        ``insert(session, what query read)`` adds the rows in one write transaction and returns
        how many it copied, kept in the marker under ``counted``. Returns that number; 0 when
        the file is missing or was copied before (also by another process meanwhile)."""
        if not self.pending():
            return 0
        found = self.read(query)
        with self.db.write() as s:
            self.db.lock_in(s, self.marker)
            if s.get(Setting, self.marker) is not None:  # another process copied it meanwhile
                return 0
            copied = insert(s, found)
            s.add(Setting(key=self.marker, value=json.dumps({"path": self.where, counted: copied})))
        return copied


def json_list(raw: str | None) -> Any:
    """A JSON column of the earlier file, ``[]`` when empty or unreadable."""
    try:
        return json.loads(raw or "[]")
    except ValueError:
        return []


def parse_time(raw: str) -> datetime:
    """An ISO time of the earlier file (naive: UTC); now when it cannot be read."""
    try:
        t = datetime.fromisoformat(raw)
    except ValueError:
        return utcnow()
    return t if t.tzinfo else t.replace(tzinfo=UTC)

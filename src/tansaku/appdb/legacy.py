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
from typing import TYPE_CHECKING, TypeVar

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

    def claim(self, s: Session) -> bool:
        """In the copy's write transaction: lock the marker; False when another process copied
        the file meanwhile."""
        self.db.lock_in(s, self.marker)
        return s.get(Setting, self.marker) is None

    def mark(self, s: Session, **counts: int) -> None:
        """Record the copy (with what it copied) in the same transaction."""
        s.add(Setting(key=self.marker, value=json.dumps({"path": self.where, **counts})))


def parse_time(raw: str) -> datetime:
    """An ISO time of the earlier file (naive: UTC); now when it cannot be read."""
    try:
        t = datetime.fromisoformat(raw)
    except ValueError:
        return utcnow()
    return t if t.tzinfo else t.replace(tzinfo=UTC)

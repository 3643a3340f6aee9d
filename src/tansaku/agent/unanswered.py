"""The unanswered log: questions with no supporting source, for the team to fill the gap.

A SQLite table in the workspace (``appdb.sqlite``); the application issue moves it behind
SQLAlchemy with PostgreSQL as an option."""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

_SCHEMA = """
CREATE TABLE IF NOT EXISTS unanswered (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    asked_at TEXT NOT NULL,
    team TEXT NOT NULL,
    collection TEXT NOT NULL,
    question TEXT NOT NULL,
    reason TEXT NOT NULL,
    tools TEXT NOT NULL
);
"""


@dataclass(frozen=True)
class Unanswered:
    id: int
    asked_at: str
    team: str
    collection: str
    question: str
    reason: str
    tools: tuple[str, ...]

    def to_dict(self) -> dict[str, Any]:
        return {**vars(self), "tools": list(self.tools)}


class UnansweredLog:
    def __init__(self, path: Path) -> None:
        self.path = path

    def _connect(self) -> sqlite3.Connection:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        con = sqlite3.connect(self.path, timeout=30)
        con.executescript(_SCHEMA)
        return con

    def add(
        self, *, team: str, collection: str, question: str, reason: str, tools: list[str]
    ) -> None:
        with self._connect() as con:
            con.execute(
                "INSERT INTO unanswered (asked_at, team, collection, question, reason, tools) "
                "VALUES (?, ?, ?, ?, ?, ?)",
                (
                    datetime.now(UTC).isoformat(timespec="seconds"),
                    team,
                    collection,
                    question,
                    reason,
                    json.dumps(tools, ensure_ascii=False),
                ),
            )
        con.close()

    def list(self, *, team: str) -> list[Unanswered]:
        """The team's unanswered questions, newest first (a team sees only its own)."""
        if not self.path.is_file():
            return []
        with self._connect() as con:
            rows = con.execute(
                "SELECT id, asked_at, team, collection, question, reason, tools FROM unanswered "
                "WHERE team = ? ORDER BY id DESC",
                (team,),
            ).fetchall()
        con.close()
        return [
            Unanswered(
                id=int(r[0]),
                asked_at=str(r[1]),
                team=str(r[2]),
                collection=str(r[3]),
                question=str(r[4]),
                reason=str(r[5]),
                tools=tuple(json.loads(r[6])),
            )
            for r in rows
        ]

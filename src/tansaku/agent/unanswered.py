"""The unanswered log: questions with no supporting source, for the team to fill the gap.

Stored in the application database (:mod:`tansaku.appdb`: ``<home>/app.db``, or PostgreSQL when
``$TANSAKU_DATABASE_URL`` is set). ``UnansweredLog(home / "appdb.sqlite")`` keeps the signature
of earlier versions, whose log was that raw SQLite file: the workspace is the file's folder, and
the rows of an existing file are copied into appdb once, on first use (the file is left as is).
"""

from __future__ import annotations

import builtins
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tansaku.appdb.handle import AppDBHandle

if TYPE_CHECKING:
    from tansaku.appdb import AppDB
    from tansaku.appdb.unanswered import UnansweredRecord


@dataclass(frozen=True)
class Unanswered:
    id: int
    asked_at: str
    team: str
    collection: str
    question: str
    reason: str
    tools: tuple[str, ...]
    resolved_at: str | None = None
    resolution: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {**vars(self), "tools": list(self.tools), "resolved": self.resolved_at is not None}

    @classmethod
    def from_record(cls, r: UnansweredRecord) -> Unanswered:
        """The record's fields of the same names, its times as ISO text to the second."""
        from tansaku.appdb.rows import record_of

        return record_of(
            cls,
            r,
            asked_at=r.asked_at.isoformat(timespec="seconds"),
            resolved_at=r.resolved_at.isoformat(timespec="seconds") if r.resolved_at else None,
        )


class UnansweredLog:
    """The unanswered log of a workspace. ``target``: the legacy file path
    (``<home>/appdb.sqlite``, whose folder is the workspace) or an open :class:`AppDB`."""

    def __init__(self, target: Path | AppDB) -> None:
        self._handle = AppDBHandle(target, lambda db, path: db.unanswered.import_legacy(path))
        self.path = self._handle.path

    @property
    def db(self) -> AppDB:
        """The application database (opened, and the legacy rows imported, on first use)."""
        return self._handle.get()

    def add(
        self, *, team: str, collection: str, question: str, reason: str, tools: list[str]
    ) -> None:
        self.db.unanswered.add(
            team, collection=collection, question=question, reason=reason, tools=tools
        )

    def list(
        self,
        *,
        team: str,
        collection: str | None = None,
        resolved: bool | None = None,
        limit: int | None = None,
        offset: int = 0,
    ) -> builtins.list[Unanswered]:
        """The team's unanswered questions, newest first (a team sees only its own)."""
        from tansaku.appdb.rows import Page
        from tansaku.appdb.unanswered import QuestionFilter

        where = QuestionFilter(collection=collection, resolved=resolved)
        records = self.db.unanswered.find(team, where, Page(limit, offset))
        return [Unanswered.from_record(r) for r in records]

    def resolve(self, *, team: str, question_id: int, resolution: str = "") -> Unanswered:
        """Mark one of the team's questions resolved (``NotFound`` for another team's)."""
        return Unanswered.from_record(self.db.unanswered.resolve(team, question_id, resolution))

"""The unanswered log in the database: questions no source supported, until a team resolves them.

:meth:`UnansweredRepo.import_legacy` copies the rows of the raw-SQLite log of earlier versions
(``<home>/appdb.sqlite``, table ``unanswered``) once; the file itself is left untouched.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sqlalchemy import func, select

from tansaku.appdb.legacy import LegacyFile, json_list, parse_time
from tansaku.appdb.models import UnansweredQuestion, utcnow
from tansaku.appdb.rows import EVER, Page, Period, Repo, owned, record_of

if TYPE_CHECKING:
    import sqlite3

    from sqlalchemy import Select
    from sqlalchemy.orm import Session


LEGACY_FILE = "appdb.sqlite"
MAX_RESOLUTION_CHARS = 2000


@dataclass(frozen=True, slots=True)
class UnansweredRecord:
    id: int
    asked_at: datetime
    team: str
    collection: str
    question: str
    reason: str
    tools: tuple[str, ...]
    resolved_at: datetime | None
    resolution: str | None

    @property
    def resolved(self) -> bool:
        return self.resolved_at is not None

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "asked_at": self.asked_at.isoformat(timespec="seconds"),
            "team": self.team,
            "collection": self.collection,
            "question": self.question,
            "reason": self.reason,
            "tools": list(self.tools),
            "resolved": self.resolved,
            "resolved_at": self.resolved_at.isoformat(timespec="seconds")
            if self.resolved_at
            else None,
            "resolution": self.resolution,
        }


def _record(row: UnansweredQuestion) -> UnansweredRecord:
    return record_of(UnansweredRecord, row)


@dataclass(frozen=True, slots=True)
class QuestionFilter:
    """Which of a team's unanswered questions a listing shows: of one ``collection``, asked in
    ``period``, resolved or not (``None``: any)."""

    collection: str | None = None
    period: Period = EVER
    resolved: bool | None = None

    def of(self, stmt: Select[Any], team: str) -> Select[Any]:
        """``stmt`` over the team's questions that pass the filter."""
        stmt = stmt.where(
            UnansweredQuestion.team == team, *self.period.of(UnansweredQuestion.asked_at)
        )
        if self.collection is not None:
            stmt = stmt.where(UnansweredQuestion.collection == self.collection)
        if self.resolved is not None:
            col = UnansweredQuestion.resolved_at
            stmt = stmt.where(col.is_not(None) if self.resolved else col.is_(None))
        return stmt


#: Every question of the team.
ANY_QUESTION = QuestionFilter()
#: The questions :meth:`UnansweredRepo.find` lists unless asked for another page.
FIRST = Page(100)


class UnansweredRepo(Repo):
    """Unanswered questions of a team (``db.unanswered``)."""

    def add(
        self,
        team: str,
        *,
        collection: str,
        question: str,
        reason: str,
        tools: list[str] | tuple[str, ...] = (),
        asked_at: datetime | None = None,
    ) -> UnansweredRecord:
        row = UnansweredQuestion(
            team=team,
            collection=collection,
            question=question,
            reason=reason,
            tools=list(tools),
            asked_at=asked_at or utcnow(),
        )
        with self.db.write() as s:
            s.add(row)
            s.flush()
            return _record(row)

    def find(
        self, team: str, where: QuestionFilter = ANY_QUESTION, page: Page = FIRST
    ) -> list[UnansweredRecord]:
        """The team's questions ``where`` selects, newest first."""
        stmt = where.of(select(UnansweredQuestion), team).order_by(UnansweredQuestion.id.desc())
        with self.db.read() as s:
            return [_record(r) for r in s.scalars(page.of(stmt))]

    def count(self, team: str, where: QuestionFilter = ANY_QUESTION) -> int:
        stmt = where.of(select(func.count()).select_from(UnansweredQuestion), team)
        with self.db.read() as s:
            return int(s.scalar(stmt) or 0)

    @staticmethod
    def _row(s: Session, team: str, question_id: int) -> UnansweredQuestion:
        """The team's question ``question_id`` (``NotFound`` for another team's)."""
        return owned(s, UnansweredQuestion, team, question_id, "未回答の質問")

    def get(self, team: str, question_id: int) -> UnansweredRecord:
        with self.db.read() as s:
            return _record(self._row(s, team, question_id))

    def resolve(self, team: str, question_id: int, resolution: str = "") -> UnansweredRecord:
        """Mark the question resolved with a note (what was added, where); resolving again
        keeps the first time and updates the note."""
        note = (resolution or "").strip()[:MAX_RESOLUTION_CHARS]
        with self.db.write() as s:
            row = self._row(s, team, question_id)
            if row.resolved_at is None:
                row.resolved_at = utcnow()
            row.resolution = note
            s.flush()
            return _record(row)

    def import_legacy(self, path: Path) -> int:
        """Copy the rows of an earlier raw-SQLite unanswered log once; returns how many rows
        were copied now (0 when the file is missing or was imported before)."""
        legacy = LegacyFile(self.db, path, "legacy_unanswered")
        return legacy.copy_once(_legacy_rows, _insert_legacy, counted="rows")


def _legacy_rows(con: sqlite3.Connection, tables: set[str]) -> list[Any]:
    if "unanswered" not in tables:
        return []
    return con.execute(
        "SELECT asked_at, team, collection, question, reason, tools FROM unanswered ORDER BY id"
    ).fetchall()


def _insert_legacy(s: Session, rows: list[Any]) -> int:
    for asked_at, team, collection, question, reason, tools in rows:
        s.add(
            UnansweredQuestion(
                asked_at=parse_time(str(asked_at)),
                team=str(team),
                collection=str(collection),
                question=str(question),
                reason=str(reason),
                tools=[str(t) for t in json_list(tools)],
            )
        )
    return len(rows)

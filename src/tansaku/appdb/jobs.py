"""Background jobs (ingest, Q/A generation) and their progress, kept across restarts.

A job is ``queued`` → ``running`` → ``done`` | ``failed`` | ``cancelled`` (a queued job can be
cancelled or fail before it runs). Each job records the worker that owns it
(``host:pid``). When a server starts it calls :meth:`JobRepo.recover`: the unfinished jobs of a
worker that is gone — a dead pid on this host, or no heartbeat for ``stale_after`` from another
host — become ``failed`` with ``error_code="interrupted"``, unless they are ``resumable``, in
which case they go back to ``queued`` for the new worker to pick up.
"""

from __future__ import annotations

import os
import socket
import uuid
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from sqlalchemy import select

from tansaku.appdb.errors import InvalidInput, InvalidTransition
from tansaku.appdb.models import Job, utcnow
from tansaku.appdb.rows import Page, Repo, owned, record_of

if TYPE_CHECKING:
    from sqlalchemy import Select
    from sqlalchemy.orm import Session


STATUSES = ("queued", "running", "done", "failed", "cancelled")
UNFINISHED = ("queued", "running")
INTERRUPTED = "interrupted"
INTERRUPTED_MESSAGE = "サーバーの停止で処理が中断されました。もう一度実行してください"
STATUS_LABELS = {
    "queued": "待機中",
    "running": "実行中",
    "done": "完了",
    "failed": "失敗",
    "cancelled": "取り消し",
}
_NEXT: dict[str, tuple[str, ...]] = {
    "queued": ("running", "failed", "cancelled"),
    "running": ("done", "failed", "cancelled"),
}


def this_worker() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


@dataclass(frozen=True, slots=True)
class JobRecord:
    id: str
    team: str
    kind: str
    collection: str | None
    status: str
    params: dict[str, Any]
    progress: dict[str, Any]
    error: str | None
    error_code: str | None
    resumable: bool
    worker: str | None
    created_at: datetime
    updated_at: datetime
    finished: bool = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "finished", self.status not in UNFINISHED)

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "team": self.team,
            "kind": self.kind,
            "collection": self.collection,
            "status": self.status,
            "status_label": STATUS_LABELS[self.status],
            "params": self.params,
            "progress": self.progress,
            "error": self.error,
            "error_code": self.error_code,
            "resumable": self.resumable,
            "finished": self.finished,
            "created_at": self.created_at.isoformat(),
            "updated_at": self.updated_at.isoformat(),
        }


def _record(row: Job) -> JobRecord:
    return record_of(JobRecord, row)


@dataclass(frozen=True, slots=True)
class JobFilter:
    """Which of a team's jobs a listing shows: in one ``status``, of one ``kind``, on one
    ``collection`` (``None``: any). A status that is none of :data:`STATUSES` is
    :class:`InvalidInput`."""

    status: str | None = None
    kind: str | None = None
    collection: str | None = None

    def __post_init__(self) -> None:
        if self.status is not None and self.status not in STATUSES:
            raise InvalidInput(
                f"状態は {', '.join(STATUSES)} のいずれかです(指定値: {self.status})"
            )

    def of(self, stmt: Select[Any], team: str) -> Select[Any]:
        """``stmt`` over the team's jobs that pass the filter."""
        stmt = stmt.where(Job.team == team)
        for column, value in (
            (Job.status, self.status),
            (Job.kind, self.kind),
            (Job.collection, self.collection),
        ):
            if value is not None:
                stmt = stmt.where(column == value)
        return stmt


#: Every job of the team.
ANY_JOB = JobFilter()
#: The jobs :meth:`JobRepo.find` lists unless asked for another page.
RECENT = Page(50)


@dataclass(frozen=True, slots=True)
class Recovery:
    """What :meth:`JobRepo.recover` did: jobs failed as interrupted, jobs queued again."""

    interrupted: tuple[JobRecord, ...]
    requeued: tuple[JobRecord, ...]


def _worker_gone(worker: str | None, updated_at: datetime, now: datetime, stale: timedelta) -> bool:
    if not worker:
        return True
    host, _, pid = worker.rpartition(":")
    if host == socket.gethostname() and pid.isdigit():
        if int(pid) == os.getpid():
            return False
        try:
            os.kill(int(pid), 0)
        except ProcessLookupError:
            return True
        except PermissionError:
            return False  # alive, another user's
        return False
    return now - updated_at > stale


class JobRepo(Repo):
    """Jobs of a team (``db.jobs``)."""

    def create(
        self,
        team: str,
        kind: str,
        *,
        collection: str | None = None,
        params: dict[str, Any] | None = None,
        resumable: bool = False,
        worker: str | None = None,
    ) -> JobRecord:
        if not kind or len(kind) > 32:
            raise InvalidInput(f"ジョブの種類「{kind}」は 1〜32 文字で指定してください")
        now = utcnow()
        row = Job(
            id=uuid.uuid4().hex,
            team=team,
            kind=kind,
            collection=collection,
            status="queued",
            params=dict(params or {}),
            progress={},
            resumable=resumable,
            worker=worker or this_worker(),
            created_at=now,
            updated_at=now,
        )
        with self.db.write() as s:
            s.add(row)
            s.flush()
            return _record(row)

    def get(self, team: str, job_id: str) -> JobRecord:
        with self.db.read() as s:
            return _record(self._row(s, team, job_id))

    def find(self, team: str, where: JobFilter = ANY_JOB, page: Page = RECENT) -> list[JobRecord]:
        """The team's jobs ``where`` selects, newest first."""
        stmt = where.of(select(Job), team).order_by(Job.created_at.desc(), Job.id)
        with self.db.read() as s:
            return [_record(r) for r in s.scalars(page.of(stmt))]

    def start(self, team: str, job_id: str, *, worker: str | None = None) -> JobRecord:
        return self._move(team, job_id, "running", worker=worker or this_worker())

    def update_progress(self, team: str, job_id: str, progress: dict[str, Any]) -> JobRecord:
        """Replace the progress of a running job (also its heartbeat)."""
        with self.db.write() as s:
            row = self._row(s, team, job_id)
            if row.status != "running":
                raise InvalidTransition(
                    f"ジョブ {job_id} は{STATUS_LABELS[row.status]}のため進捗を更新できません"
                )
            row.progress = dict(progress)
            row.updated_at = utcnow()
            s.flush()
            return _record(row)

    def finish(
        self, team: str, job_id: str, *, progress: dict[str, Any] | None = None
    ) -> JobRecord:
        return self._move(team, job_id, "done", progress=progress)

    def fail(
        self,
        team: str,
        job_id: str,
        error: str,
        *,
        code: str = "error",
        progress: dict[str, Any] | None = None,
    ) -> JobRecord:
        return self._move(team, job_id, "failed", error=error, code=code, progress=progress)

    def cancel(self, team: str, job_id: str) -> JobRecord:
        return self._move(team, job_id, "cancelled")

    def recover(self, *, stale_after: timedelta = timedelta(minutes=10)) -> Recovery:
        """At server start: unfinished jobs whose worker is gone are failed as interrupted, or
        queued again when resumable (see the module docstring). Spans every team: it is the
        server's own housekeeping, not a team's request."""
        now = utcnow()
        interrupted: list[JobRecord] = []
        requeued: list[JobRecord] = []
        with self.db.write() as s:
            rows = s.scalars(select(Job).where(Job.status.in_(UNFINISHED))).all()
            for row in rows:
                if not _worker_gone(row.worker, row.updated_at, now, stale_after):
                    continue
                row.updated_at = now
                if row.resumable:
                    row.status, row.worker = "queued", None
                    requeued.append(_record(row))
                else:
                    row.status, row.error, row.error_code = (
                        "failed",
                        INTERRUPTED_MESSAGE,
                        INTERRUPTED,
                    )
                    interrupted.append(_record(row))
        return Recovery(tuple(interrupted), tuple(requeued))

    # -- helpers -----------------------------------------------------------------------------
    @staticmethod
    def _row(s: Session, team: str, job_id: str) -> Job:
        return owned(s, Job, team, job_id, "ジョブ")

    def _move(
        self,
        team: str,
        job_id: str,
        status: str,
        *,
        worker: str | None = None,
        error: str | None = None,
        code: str | None = None,
        progress: dict[str, Any] | None = None,
    ) -> JobRecord:
        with self.db.write() as s:
            row = self._row(s, team, job_id)
            if status not in _NEXT.get(row.status, ()):
                raise InvalidTransition(
                    f"ジョブ {job_id} は{STATUS_LABELS[row.status]}のため"
                    f"「{STATUS_LABELS[status]}」にできません"
                )
            row.status = status
            row.updated_at = utcnow()
            if worker is not None:
                row.worker = worker
            if error is not None:
                row.error, row.error_code = error, code
            if progress is not None:
                row.progress = dict(progress)
            s.flush()
            return _record(row)

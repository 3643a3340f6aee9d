"""Background jobs (ingest uploads, Q/A generation): run in worker threads, reported by id.

Jobs of one collection run one after another (a per-collection lock, besides the library's
writer lock across processes); jobs of different collections and every search run meanwhile. A
job belongs to the team that submitted it: another team asking for its id gets a 404. A job
keeps running when the client that started it disconnects.
"""

from __future__ import annotations

import logging
import threading
import uuid
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Literal

from tansaku.errors import TansakuError

log = logging.getLogger("tansaku.server.jobs")
JobStatus = Literal["queued", "running", "done", "failed"]
KEEP_FINISHED = 500  # finished jobs kept in memory for GET /api/jobs/{id}


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


@dataclass
class Job:
    id: str
    kind: str
    team: str
    collection: str
    files: list[str] = field(default_factory=list)
    status: JobStatus = "queued"
    created_at: str = field(default_factory=_now)
    started_at: str | None = None
    finished_at: str | None = None
    stage: str | None = None
    progress: dict[str, dict[str, int]] = field(default_factory=dict)
    result: dict[str, Any] | None = None
    failures: list[dict[str, str]] = field(default_factory=list)
    error: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "kind": self.kind,
            "collection": self.collection,
            "status": self.status,
            "files": list(self.files),
            "created_at": self.created_at,
            "started_at": self.started_at,
            "finished_at": self.finished_at,
            "stage": self.stage,
            "progress": {k: dict(v) for k, v in self.progress.items()},
            "result": self.result,
            "failures": list(self.failures),
            "error": self.error,
        }


Work = Callable[[Job], dict[str, Any]]


class JobRunner:
    def __init__(self, workers: int = 2) -> None:
        self._pool = ThreadPoolExecutor(max_workers=max(1, workers), thread_name_prefix="job")
        self._jobs: dict[str, Job] = {}
        self._futures: dict[str, Future[None]] = {}
        self.collection_locks: dict[str, threading.Lock] = {}
        self._lock = threading.Lock()

    def submit(self, *, kind: str, team: str, collection: str, files: list[str], work: Work) -> Job:
        job = Job(id=uuid.uuid4().hex, kind=kind, team=team, collection=collection, files=files)
        with self._lock:
            self._jobs[job.id] = job
            self._forget_old()
            self._futures[job.id] = self._pool.submit(self._run, job, work)
        return job

    def get(self, job_id: str, *, team: str) -> Job | None:
        """The job, if it is ``team``'s (another team's id is as good as unknown)."""
        with self._lock:
            job = self._jobs.get(job_id)
        return job if job is not None and job.team == team else None

    def wait(self, job_id: str, timeout: float | None = None) -> None:
        with self._lock:
            future = self._futures.get(job_id)
        if future is not None:
            future.result(timeout)

    def update(self, job: Job, stage: str, done: int, total: int) -> None:
        with self._lock:
            job.stage = stage
            job.progress[stage] = {"done": done, "total": total}

    def shutdown(self) -> None:
        self._pool.shutdown(wait=True, cancel_futures=False)

    def collection_lock(self, collection: str) -> threading.Lock:
        with self._lock:
            return self.collection_locks.setdefault(collection, threading.Lock())

    def _run(self, job: Job, work: Work) -> None:
        with self.collection_lock(job.collection):
            with self._lock:
                job.status, job.started_at = "running", _now()
            try:
                result = work(job)
            except TansakuError as exc:
                self._finish(job, "failed", error=str(exc))
            except Exception as exc:  # a job's bug is reported on the job, not lost
                log.exception("job %s (%s) failed", job.id, job.kind)
                self._finish(job, "failed", error=f"ジョブが失敗しました({type(exc).__name__})")
            else:
                self._finish(job, "done", result=result)

    def _finish(
        self,
        job: Job,
        status: JobStatus,
        *,
        result: dict[str, Any] | None = None,
        error: str | None = None,
    ) -> None:
        with self._lock:
            job.status, job.finished_at = status, _now()
            job.result, job.error = result, error
            if result is not None:
                job.failures = list(result.get("failed", []))

    def _forget_old(self) -> None:
        finished = [j for j in self._jobs.values() if j.finished_at is not None]
        for old in finished[: max(0, len(finished) - KEEP_FINISHED)]:
            self._jobs.pop(old.id, None)
            self._futures.pop(old.id, None)

"""Background jobs (ingest uploads, Q/A generation): run in worker threads, reported by id.

Jobs of one collection run one after another (a per-collection lock, besides the library's
writer lock across processes); jobs of different collections and every search run meanwhile. A
job belongs to the team that submitted it: another team asking for its id gets a 404. A job
keeps running when the client that started it disconnects.

With appdb's job repository (``store``), every job is also a row there — created, started,
its progress (at most once a second and at each new stage), done or failed with its result —
so its state outlives the process and other workers can report it.
"""

from __future__ import annotations

import logging
import threading
import time
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
SAVE_EVERY_S = 1.0  # progress written to appdb at most this often (and at each new stage)


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


@dataclass
class Job:
    id: str
    kind: str
    team: str
    collection: str
    files: list[str] = field(default_factory=list)
    params: dict[str, Any] = field(default_factory=dict)
    """What the job was asked to do, besides its files (Q/A: source, target, per_chunk …)."""
    status: JobStatus = "queued"
    created_at: str = field(default_factory=_now)
    started_at: str | None = None
    finished_at: str | None = None
    stage: str | None = None
    progress: dict[str, dict[str, int]] = field(default_factory=dict)
    result: dict[str, Any] | None = None
    failures: list[dict[str, str]] = field(default_factory=list)
    error: str | None = None
    saved_at: float = field(default=0.0, repr=False)

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "kind": self.kind,
            "collection": self.collection,
            "status": self.status,
            "files": list(self.files),
            "params": dict(self.params),
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
    def __init__(self, workers: int = 2, store: Any = None) -> None:
        self.store = store  # tansaku.appdb.jobs.JobRepo, or None
        self._pool = ThreadPoolExecutor(max_workers=max(1, workers), thread_name_prefix="job")
        self._jobs: dict[str, Job] = {}
        self._futures: dict[str, Future[None]] = {}
        self.collection_locks: dict[str, threading.Lock] = {}
        self._lock = threading.Lock()

    def submit(
        self,
        *,
        kind: str,
        team: str,
        collection: str,
        files: list[str],
        work: Work,
        params: dict[str, Any] | None = None,
    ) -> Job:
        job_id = uuid.uuid4().hex
        extra = dict(params or {})
        if self.store is not None:
            saved = {**extra, "files": files}
            job_id = self.store.create(team, kind, collection=collection, params=saved).id
        job = Job(id=job_id, kind=kind, team=team, collection=collection, files=files, params=extra)
        with self._lock:
            self._jobs[job.id] = job
            self._forget_old()
            self._futures[job.id] = self._pool.submit(self._run, job, work)
        return job

    def get(self, job_id: str, *, team: str) -> dict[str, Any] | None:
        """The job as JSON, if it is ``team``'s (another team's id is as good as unknown);
        from memory, else from appdb (a job of an earlier process or another worker)."""
        with self._lock:
            job = self._jobs.get(job_id)
            if job is not None:
                return job.to_dict() if job.team == team else None
        if self.store is None:
            return None
        from tansaku.appdb.errors import NotFound

        try:
            record = self.store.get(team, job_id)
        except NotFound:
            return None
        saved = dict(record.progress)
        return {
            "id": record.id,
            "kind": record.kind,
            "collection": record.collection,
            "status": record.status,
            "files": list(record.params.get("files", [])),
            "params": {k: v for k, v in record.params.items() if k != "files"},
            "created_at": record.created_at.isoformat(),
            "finished_at": record.updated_at.isoformat() if record.finished else None,
            "stage": saved.get("stage"),
            "progress": saved.get("stages", {}),
            "result": saved.get("result"),
            "failures": saved.get("failures", []),
            "error": record.error,
        }

    def wait(self, job_id: str, timeout: float | None = None) -> None:
        with self._lock:
            future = self._futures.get(job_id)
        if future is not None:
            future.result(timeout)

    def update(self, job: Job, stage: str, done: int, total: int) -> None:
        with self._lock:
            new_stage = job.stage != stage
            job.stage = stage
            job.progress[stage] = {"done": done, "total": total}
            due = new_stage or time.monotonic() - job.saved_at >= SAVE_EVERY_S
            if due:
                job.saved_at = time.monotonic()
                saved = self._saved(job)
        if due and self.store is not None:
            self.store.update_progress(job.team, job.id, saved)

    @staticmethod
    def _saved(job: Job) -> dict[str, Any]:
        return {
            "stage": job.stage,
            "stages": {k: dict(v) for k, v in job.progress.items()},
            "result": job.result,
            "failures": list(job.failures),
        }

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
                if self.store is not None:
                    self.store.start(job.team, job.id)
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
            saved = self._saved(job)
        if self.store is None:
            return
        try:
            if status == "done":
                self.store.finish(job.team, job.id, progress=saved)
            else:
                self.store.fail(job.team, job.id, error or "", progress=saved)
        except Exception:  # the job's outcome stays in memory; the row keeps its last state
            log.exception("job %s: could not save its outcome in appdb", job.id)

    def _forget_old(self) -> None:
        finished = [j for j in self._jobs.values() if j.finished_at is not None]
        for old in finished[: max(0, len(finished) - KEEP_FINISHED)]:
            self._jobs.pop(old.id, None)
            self._futures.pop(old.id, None)

"""Background jobs (ingest uploads, Q/A generation): queued, run, reported by id.

A job's heavy work runs in a worker process of its own (:mod:`tansaku.server.worker`), so an
upload's parsing, analysis and embedding never take the server's GIL from the searches; its
progress comes back over a pipe to the job record. One job per collection runs at a time (the
others of that collection wait in order); jobs of different collections run side by side, up
to ``workers`` at once. A queued job can be cancelled; a running one is stopped (``SIGTERM``:
nothing half written). A worker that dies (``kill -9``, out of memory) fails its job with a
Japanese reason, and its collection stays at its last commit. Stopping the server stops its
workers the same way and fails what had not finished.

A job belongs to the team that submitted it: another team asking for its id gets a 404. A job
keeps running when the client that started it disconnects. With appdb's job repository
(``store``), every job is also a row there — created, started, its progress (at most once a
second and at each new stage), done, failed or cancelled with its result — so its state
outlives the process.

``TANSAKU_JOB_PROCESSES=0`` runs tasks in threads of the server instead (the previous
behaviour: for comparison in ``bench/serve_load.py``); callables given as ``work`` always
run in a thread.
"""

from __future__ import annotations

import logging
import os
import threading
import uuid
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Literal

from tansaku.appdb.errors import InvalidTransition
from tansaku.errors import TansakuError
from tansaku.server import worker as workers
from tansaku.server.job_limits import JobLimits, job_limits, memory_message, timeout_message
from tansaku.server.job_state import Job, Progress, died_reason, save_outcome, save_progress

log = logging.getLogger("tansaku.server.jobs")
JobStatus = Literal["queued", "running", "done", "failed", "cancelled"]
KEEP_FINISHED = 500  # finished jobs kept in memory for GET /api/jobs/{id}
SAVE_EVERY_S = 1.0  # progress written to appdb at most this often (and at each new stage)
ENV_PROCESSES = "TANSAKU_JOB_PROCESSES"
STOPPED_BY_SERVER = "サーバーの停止で処理が中断されました。もう一度実行してください"
CANCELLED = "取り消されました"

Work = Callable[[Job], dict[str, Any]]
After = Callable[[dict[str, Any]], dict[str, Any]]


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def processes_default() -> bool:
    return os.environ.get(ENV_PROCESSES, "1").strip().lower() not in ("0", "false", "no", "off")


@dataclass
class _Entry:
    """A job and how to run it (a task in a worker, or a callable in a thread)."""

    job: Job
    work: Work | None = None
    task: workers.Task | None = None
    client: Any = None
    after: After | None = None
    cleanup: Callable[[], None] | None = None
    done: threading.Event = field(default_factory=threading.Event)
    worker: workers.Worker | None = None
    stop_reason: str | None = None


class JobRunner:
    def __init__(
        self,
        workers: int = 2,
        store: Any = None,
        *,
        processes: bool | None = None,
        limits: JobLimits | None = None,
    ) -> None:
        self.store = store  # tansaku.appdb.jobs.JobRepo, or None
        self.limits = limits or job_limits()  # memory and time of each worker process
        self.limit = max(1, workers)
        self.processes = processes_default() if processes is None else processes
        self._entries: dict[str, _Entry] = {}
        self._queue: deque[str] = deque()
        self._busy: set[str] = set()  # collections with a running job
        self._closing = False
        self.collection_locks: dict[str, threading.Lock] = {}
        self._lock = threading.Lock()

    # -- submitting and reading ------------------------------------------------------------
    def submit(
        self,
        *,
        kind: str,
        team: str,
        collection: str,
        files: list[str],
        work: Work | None = None,
        task: workers.Task | None = None,
        client: Any = None,
        after: After | None = None,
        cleanup: Callable[[], None] | None = None,
        params: dict[str, Any] | None = None,
    ) -> Job:
        """Queue a job: ``task`` runs in a worker process (in a thread with ``client`` when
        processes are off), ``work`` in a thread. ``after`` turns the worker's result into the
        job's (in the server: metrics, paths); ``cleanup`` runs once the job has ended."""
        if (work is None) == (task is None):
            raise ValueError("a job needs exactly one of work and task")
        job_id = uuid.uuid4().hex
        extra = dict(params or {})
        if self.store is not None:
            saved = {**extra, "files": files}
            job_id = self.store.create(team, kind, collection=collection, params=saved).id
        job = Job(id=job_id, kind=kind, team=team, collection=collection, files=files, params=extra)
        entry = _Entry(job, work=work, task=task, client=client, after=after, cleanup=cleanup)
        with self._lock:
            self._entries[job.id] = entry
            self._forget_old()
            self._queue.append(job.id)
            self._dispatch()
        return job

    def get(self, job_id: str, *, team: str) -> dict[str, Any] | None:
        """The job as JSON, if it is ``team``'s (another team's id is as good as unknown);
        from memory, else from appdb (a job of an earlier process or another worker)."""
        with self._lock:
            entry = self._entries.get(job_id)
            if entry is not None:
                return entry.job.to_dict() if entry.job.team == team else None
        if self.store is None:
            return None
        from tansaku.appdb.errors import NotFound

        try:
            record = self.store.get(team, job_id)
        except NotFound:
            return None
        return Job.from_record(record).to_dict()

    def worker_pid(self, job_id: str) -> int | None:
        """The process running the job now, if it runs in one (for operators and tests)."""
        with self._lock:
            entry = self._entries.get(job_id)
            return entry.worker.pid if entry is not None and entry.worker is not None else None

    def wait(self, job_id: str, timeout: float | None = None) -> None:
        with self._lock:
            entry = self._entries.get(job_id)
        if entry is not None and not entry.done.wait(timeout):
            raise TimeoutError(f"job {job_id} did not finish in {timeout} s")

    def cancel(self, job_id: str, *, team: str) -> dict[str, Any] | None:
        """Cancel ``team``'s job: a queued one at once, a running one by stopping its worker
        (it ends ``cancelled`` when the worker has stopped). None: not the team's job;
        :class:`InvalidTransition` (409): finished, or running in a thread."""
        with self._lock:
            entry = self._entries.get(job_id)
            if entry is not None and entry.job.team != team:
                return None
        if entry is None:
            known = self.get(job_id, team=team)  # an earlier server's job: not ours to stop
            if known is None:
                return None
            raise InvalidTransition(
                f"ジョブ {job_id} はこのサーバーで実行中ではないため取り消せません"
            )
        with self._lock:
            job = entry.job
            if job.status == "queued":
                self._queue.remove(job_id)
            elif job.status == "running" and entry.task is not None and self.processes:
                entry.stop_reason = CANCELLED  # a worker about to start does not
                if entry.worker is not None:
                    threading.Thread(target=entry.worker.stop, daemon=True).start()
                return job.to_dict()
            else:
                raise InvalidTransition(f"ジョブ {job_id} は{job.label()}のため取り消せません")
        self._finish(entry, "cancelled", error=CANCELLED)
        return entry.job.to_dict()

    # -- progress ------------------------------------------------------------------------
    def update(self, job: Job, stage: str, done: int, total: int) -> None:
        with self._lock:
            due = job.progress_to(stage, done, total, SAVE_EVERY_S)
            saved = job.saved() if due else None
        if saved is not None and self.store is not None:
            save_progress(self.store, job, saved)

    def _counts(self, job: Job, counts: dict[str, Any]) -> None:
        with self._lock:
            job.counts = dict(counts)

    # -- running -------------------------------------------------------------------------
    def collection_lock(self, collection: str) -> threading.Lock:
        with self._lock:
            return self.collection_locks.setdefault(collection, threading.Lock())

    def _dispatch(self) -> None:
        """Start queued jobs whose collection is free while slots are (under ``_lock``)."""
        if self._closing:
            return
        for job_id in list(self._queue):
            if len(self._busy) >= self.limit:
                return
            entry = self._entries[job_id]
            if entry.job.collection in self._busy:
                continue
            self._queue.remove(job_id)
            self._busy.add(entry.job.collection)
            entry.job.status, entry.job.started_at = "running", _now()
            name = f"job-{entry.job.kind}-{job_id[:8]}"
            threading.Thread(target=self._run, args=(entry,), name=name, daemon=True).start()

    def _run(self, entry: _Entry) -> None:
        job = entry.job
        try:
            with self.collection_lock(job.collection):
                if self.store is not None:
                    self.store.start(job.team, job.id)
                status, result, error = self._execute(entry)
                if status == "done" and result is not None and entry.after is not None:
                    result = entry.after(result)
        except TansakuError as exc:
            status, result, error = "failed", None, str(exc)
        except Exception as exc:  # a job's bug is reported on the job, not lost
            log.exception("job %s (%s) failed", job.id, job.kind)
            status, result, error = "failed", None, f"ジョブが失敗しました({type(exc).__name__})"
        self._finish(entry, status, result=result, error=error)

    def _execute(self, entry: _Entry) -> tuple[JobStatus, dict[str, Any] | None, str | None]:
        job = entry.job
        if entry.work is not None:
            return "done", entry.work(job), None
        assert entry.task is not None
        if not self.processes:
            return "done", workers.run_task(entry.task, entry.client, self._emit_to(job)), None
        with self._lock:
            if self._closing or entry.stop_reason is not None:
                return _stopped(entry)
            entry.worker = workers.start(entry.task, memory_mb=self.limits.memory_mb)
        deadline = self._deadline(entry)
        try:
            outcome = entry.worker.outcome(self._emit_to(job))
        finally:
            if deadline is not None:
                deadline.cancel()
        if outcome is not None and outcome[0] == "result":
            return "done", outcome[1], None
        if outcome is not None and outcome[0] == "error":
            return "failed", None, str(outcome[1])
        if outcome is not None and outcome[0] == "memory":
            return "failed", None, memory_message(job.kind, job.collection, self.limits.memory_mb)
        if entry.stop_reason is not None or (outcome is not None and outcome[0] == "stopped"):
            return _stopped(entry)
        log.error("job %s: worker %s died: exit %s", job.id, entry.worker.pid,
                  entry.worker.process.exitcode)  # fmt: skip
        reason = died_reason(job, entry.worker.exit_reason())
        if self.limits.memory_mb > 0:  # the kernel or the allocator may end it at the limit
            reason += f"(このジョブのメモリの上限は {self.limits.memory_mb:,} MB です)"
        return "failed", None, reason

    def _deadline(self, entry: _Entry) -> threading.Timer | None:
        """Stop the worker when it runs past the time limit (the job then fails saying so)."""
        seconds = self.limits.timeout_s
        if seconds <= 0:
            return None

        def expire() -> None:
            with self._lock:
                worker = entry.worker
                if worker is None or entry.stop_reason is not None:
                    return
                job = entry.job
                entry.stop_reason = timeout_message(job.kind, job.collection, seconds)
            log.warning("job %s: past its time limit of %.0f s, stopping it", job.id, seconds)
            worker.stop(grace_s=10.0)

        timer = threading.Timer(seconds, expire)
        timer.daemon = True
        timer.start()
        return timer

    def _emit_to(self, job: Job) -> workers.Emit:
        def emit(message: workers.Message) -> None:
            kind, payload = message
            if kind == "progress":
                self.update(job, *payload)
            elif kind == "counts":
                self._counts(job, payload)

        return emit

    def _finish(
        self,
        entry: _Entry,
        status: JobStatus,
        *,
        result: dict[str, Any] | None = None,
        error: str | None = None,
    ) -> None:
        job = entry.job
        with self._lock:
            was_running = job.status == "running"
            job.status, job.finished_at = status, _now()
            job.result, job.error = result, error
            if result is not None:
                job.failures = list(result.get("failed", []))
            saved = job.saved()
            entry.worker = None
            if was_running:
                self._busy.discard(job.collection)
        try:
            if entry.cleanup is not None:
                entry.cleanup()
        finally:
            save_outcome(self.store, job, status, error, saved)
            entry.done.set()
            with self._lock:
                self._dispatch()

    def shutdown(self, grace_s: float = 20.0) -> None:
        """Stop: queued jobs fail as interrupted, running workers are stopped (``SIGTERM``,
        killed after ``grace_s``) and their jobs fail as interrupted; jobs running in threads
        are waited for."""
        with self._lock:
            self._closing = True
            queued = [self._entries[i] for i in self._queue]
            self._queue.clear()
            running = [e for e in self._entries.values() if e.job.status == "running"]
            for entry in running:
                if entry.task is not None and self.processes and entry.stop_reason is None:
                    entry.stop_reason = STOPPED_BY_SERVER
        for entry in queued:
            self._finish(entry, "failed", error=STOPPED_BY_SERVER)
        stoppers = [
            threading.Thread(target=e.worker.stop, args=(grace_s,))
            for e in running
            if e.worker is not None
        ]
        for t in stoppers:
            t.start()
        for t in stoppers:
            t.join()
        for entry in running:
            entry.done.wait()

    def _forget_old(self) -> None:
        finished = [e for e in self._entries.values() if e.job.finished_at is not None]
        for old in finished[: max(0, len(finished) - KEEP_FINISHED)]:
            self._entries.pop(old.job.id, None)


def _stopped(entry: _Entry) -> tuple[JobStatus, None, str]:
    if entry.stop_reason == CANCELLED:
        return "cancelled", None, CANCELLED
    return "failed", None, entry.stop_reason or STOPPED_BY_SERVER


__all__ = ["Job", "JobRunner", "JobStatus", "Progress", "died_reason"]

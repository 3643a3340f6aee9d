"""One job's record as the API shows it (``GET /api/jobs/{id}``) and appdb keeps it.

Fields, for clients: ``status`` (queued, running, done, failed, cancelled), ``stage`` and
``progress`` (``{stage: {"done", "total"}}``), ``rate`` (units of the current stage per second
since it began) and ``eta_s`` (seconds left at that rate), ``counts`` (an ingest's files,
documents, chunks written, texts embedded, rates and time left, from the bulk pipeline),
``result``, ``failures`` (per file or chunk, with the reason) and ``error``.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from tansaku.appdb.jobs import STATUS_LABELS

log = logging.getLogger("tansaku.server.jobs")


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


@dataclass
class Progress:
    """When the current stage began and how far it was then (for its rate)."""

    stage: str
    since: float
    start_done: int


@dataclass
class Job:
    id: str
    kind: str
    team: str
    collection: str
    files: list[str] = field(default_factory=list)
    params: dict[str, Any] = field(default_factory=dict)
    """What the job was asked to do, besides its files (Q/A: source, target, per_chunk …)."""
    status: str = "queued"
    created_at: str = field(default_factory=_now)
    started_at: str | None = None
    finished_at: str | None = None
    stage: str | None = None
    progress: dict[str, dict[str, int]] = field(default_factory=dict)
    counts: dict[str, Any] | None = None
    rate: float | None = None
    eta_s: float | None = None
    result: dict[str, Any] | None = None
    failures: list[dict[str, str]] = field(default_factory=list)
    error: str | None = None
    saved_at: float = field(default=0.0, repr=False)
    current: Progress | None = field(default=None, repr=False)

    def label(self) -> str:
        return STATUS_LABELS.get(self.status, self.status)

    def progress_to(self, stage: str, done: int, total: int, save_every: float) -> bool:
        """Record ``done`` of ``total`` in ``stage``; True when it is due to be saved (a new
        stage, or ``save_every`` seconds since the last save)."""
        now = time.monotonic()
        new_stage = self.stage != stage
        if new_stage or self.current is None:
            self.current = Progress(stage, now, done)
        self.stage = stage
        self.progress[stage] = {"done": done, "total": total}
        elapsed = now - self.current.since
        moved = done - self.current.start_done
        if elapsed > 0.5 and moved > 0:
            self.rate = round(moved / elapsed, 2)
            self.eta_s = round(max(0, total - done) / (moved / elapsed), 1)
        elif new_stage:
            self.rate = self.eta_s = None
        due = new_stage or now - self.saved_at >= save_every
        if due:
            self.saved_at = now
        return due

    def _progress(self, key: str) -> dict[str, Any]:
        """The current stage, each stage's progress (under ``key``), the counts and the rate."""
        return {
            "stage": self.stage,
            key: {k: dict(v) for k, v in self.progress.items()},
            "counts": dict(self.counts) if self.counts is not None else None,
            "rate": self.rate,
            "eta_s": self.eta_s,
        }

    def saved(self) -> dict[str, Any]:
        """What appdb keeps as the job's progress."""
        return {
            **self._progress("stages"),
            "started_at": self.started_at,
            "result": self.result,
            "failures": list(self.failures),
        }

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "kind": self.kind,
            "collection": self.collection,
            "status": self.status,
            "status_label": self.label(),
            "files": list(self.files),
            "params": dict(self.params),
            "created_at": self.created_at,
            "started_at": self.started_at,
            "finished_at": self.finished_at,
            **self._progress("progress"),
            "result": self.result,
            "failures": list(self.failures),
            "error": self.error,
        }

    @classmethod
    def from_record(cls, record: Any) -> Job:
        """A job read back from appdb (``tansaku.appdb.jobs.JobRecord``)."""
        saved = dict(record.progress)
        return cls(
            id=record.id,
            kind=record.kind,
            team=record.team,
            collection=record.collection or "",
            files=list(record.params.get("files", [])),
            params={k: v for k, v in record.params.items() if k != "files"},
            status=record.status,
            created_at=record.created_at.isoformat(),
            started_at=saved.get("started_at"),
            finished_at=record.updated_at.isoformat() if record.finished else None,
            stage=saved.get("stage"),
            progress=saved.get("stages", {}),
            counts=saved.get("counts"),
            rate=saved.get("rate"),
            eta_s=saved.get("eta_s"),
            result=saved.get("result"),
            failures=saved.get("failures", []),
            error=record.error,
        )


def died_reason(job: Job, how: str) -> str:
    what = "Q/A 生成" if job.kind == "qa" else "取り込み"
    return (
        f"{what}の処理(ワーカープロセス)が異常終了しました({how})。"
        f"コレクション「{job.collection}」は最後に確定した状態のままです。もう一度実行してください"
    )


def save_progress(store: Any, job: Job, saved: dict[str, Any]) -> None:
    """The job's progress into appdb (best effort: the outcome is saved at the end)."""
    try:
        store.update_progress(job.team, job.id, saved)
    except Exception:
        log.exception("job %s: could not save its progress in appdb", job.id)


def save_outcome(
    store: Any, job: Job, status: str, error: str | None, saved: dict[str, Any]
) -> None:
    """The job's outcome into appdb (``store``: a ``JobRepo``, or None)."""
    if store is None:
        return
    try:
        if status == "done":
            store.finish(job.team, job.id, progress=saved)
        elif status == "cancelled":
            store.cancel(job.team, job.id)
        else:
            store.fail(job.team, job.id, error or "", progress=saved)
    except Exception:  # the job's outcome stays in memory; the row keeps its last state
        log.exception("job %s: could not save its outcome in appdb", job.id)

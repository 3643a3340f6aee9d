"""Jobs: the state machine, team scope, and recovery after a restart."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from datetime import timedelta

import pytest
from sqlalchemy import update

from tansaku.appdb import InvalidTransition, NotFound
from tansaku.appdb.jobs import JobFilter
from tansaku.appdb.models import Job, utcnow


def test_lifecycle_with_progress(db) -> None:
    job = db.jobs.create("cards", "ingest", collection="cards", params={"files": ["a.md"]})
    assert job.status == "queued" and not job.finished
    db.jobs.start("cards", job.id)
    db.jobs.update_progress("cards", job.id, {"files": 1, "chunks": 12, "failures": []})
    done = db.jobs.finish("cards", job.id, progress={"files": 1, "chunks": 12, "failures": []})
    assert done.status == "done" and done.finished and done.progress["chunks"] == 12
    assert done.to_dict()["status_label"] == "完了"
    with pytest.raises(InvalidTransition, match="完了"):
        db.jobs.cancel("cards", job.id)
    with pytest.raises(InvalidTransition):
        db.jobs.update_progress("cards", job.id, {"files": 2})


def test_failures_and_cancellation(db) -> None:
    a = db.jobs.create("cards", "qa_generate")
    failed = db.jobs.fail("cards", a.id, "コレクション「cards」が見つかりません", code="not_found")
    assert (failed.status, failed.error_code) == ("failed", "not_found")
    b = db.jobs.create("cards", "ingest")
    db.jobs.start("cards", b.id)
    assert db.jobs.cancel("cards", b.id).status == "cancelled"


def test_a_team_never_sees_or_moves_another_teams_job(db) -> None:
    job = db.jobs.create("cards", "ingest")
    with pytest.raises(NotFound):
        db.jobs.get("restaurant", job.id)
    with pytest.raises(NotFound):
        db.jobs.cancel("restaurant", job.id)
    assert db.jobs.find("restaurant") == []
    assert [j.id for j in db.jobs.find("cards", JobFilter(status="queued"))] == [job.id]
    assert db.jobs.get("cards", job.id).status == "queued"


def _dead_pid() -> int:
    p = subprocess.Popen([sys.executable, "-c", "pass"])
    p.wait()
    return p.pid


def test_recover_after_a_restart(db) -> None:
    host = socket.gethostname()
    dead = f"{host}:{_dead_pid()}"
    lost = db.jobs.create("cards", "ingest", worker=dead)
    db.jobs.start("cards", lost.id, worker=dead)
    resumable = db.jobs.create("cards", "qa_generate", resumable=True, worker=dead)
    mine = db.jobs.create("cards", "ingest")  # this process: alive
    db.jobs.start("cards", mine.id)
    far_stale = db.jobs.create("restaurant", "ingest", worker="other-host:12")
    far_fresh = db.jobs.create("restaurant", "ingest", worker="other-host:13")
    with db.write() as s:
        s.execute(
            update(Job)
            .where(Job.id == far_stale.id)
            .values(updated_at=utcnow() - timedelta(hours=1))
        )
    finished = db.jobs.create("cards", "ingest", worker=dead)
    db.jobs.fail("cards", finished.id, "元の失敗")

    rec = db.jobs.recover(stale_after=timedelta(minutes=10))
    assert {j.id for j in rec.interrupted} == {lost.id, far_stale.id}
    assert [j.id for j in rec.requeued] == [resumable.id]
    got = db.jobs.get("cards", lost.id)
    assert (got.status, got.error_code) == ("failed", "interrupted")
    assert "中断" in (got.error or "")
    assert db.jobs.get("cards", resumable.id).status == "queued"
    assert db.jobs.get("cards", mine.id).status == "running"
    assert db.jobs.get("restaurant", far_fresh.id).status == "queued"
    assert db.jobs.get("cards", finished.id).error == "元の失敗"
    assert os.getpid() != int(dead.rsplit(":", 1)[1])

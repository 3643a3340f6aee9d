"""The job runner: jobs of one collection one after another, other collections meanwhile; a
failing job is reported on the job."""

from __future__ import annotations

import threading

from tansaku.errors import LoadError
from tansaku.server.jobs import JobRunner


def test_one_collection_at_a_time_others_in_parallel():
    runner = JobRunner(3)
    release = threading.Event()
    first_running = threading.Event()
    other_ran = threading.Event()

    def blocking(job):
        first_running.set()
        assert release.wait(60)
        return {"failed": []}

    def other(job):
        other_ran.set()
        return {"failed": []}

    first = runner.submit(kind="ingest", team="a", collection="reports", files=[], work=blocking)
    assert first_running.wait(60)
    second = runner.submit(
        kind="ingest", team="a", collection="reports", files=[], work=lambda j: {"failed": []}
    )
    third = runner.submit(kind="ingest", team="a", collection="manuals", files=[], work=other)
    assert other_ran.wait(60)  # another collection is not held up
    runner.wait(third.id, 60)
    assert runner.get(second.id, team="a")["status"] == "queued"  # same collection: waits
    release.set()
    runner.wait(second.id, 60)
    assert runner.get(first.id, team="a")["status"] == "done"
    assert runner.get(second.id, team="a")["status"] == "done"
    assert runner.get(second.id, team="b") is None
    runner.shutdown()


def test_failures_are_reported_on_the_job():
    runner = JobRunner(1)

    def broken(job):
        raise LoadError("手順.md", "読めません")

    def buggy(job):
        raise RuntimeError("bug")

    a = runner.submit(kind="ingest", team="a", collection="c", files=["手順.md"], work=broken)
    b = runner.submit(kind="ingest", team="a", collection="c", files=[], work=buggy)
    runner.wait(a.id, 60)
    runner.wait(b.id, 60)
    assert runner.get(a.id, team="a")["error"] == "手順.md: 読めません"
    failed = runner.get(b.id, team="a")
    assert failed["status"] == "failed" and "RuntimeError" in failed["error"]
    runner.shutdown()


def test_a_job_left_running_by_a_killed_server_is_failed_at_start(tmp_path):
    """A server killed mid-job leaves its appdb row ``running``; the next server marks it
    ``failed: interrupted`` when it starts (its worker process is gone)."""
    import socket
    import subprocess
    import sys

    import tansaku
    from tansaku.appdb.db import open_appdb
    from tansaku.testing import HashEmbedder

    from .support import live_server, make_app

    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    client = tansaku.connect(tmp_path / "ws", embedder=HashEmbedder(32))
    db = open_appdb(client.workspace.home)
    try:
        worker = f"{socket.gethostname()}:{gone.pid}"
        job = db.jobs.create("default", "ingest", collection="reports", worker=worker)
        db.jobs.start("default", job.id, worker=worker)
        with live_server(make_app(client, None)) as server, server.client() as http:
            body = http.get(f"/api/jobs/{job.id}").json()
        assert body["status"] == "failed", body
        assert "中断" in str(body.get("error")), body
    finally:
        db.close()
        client.close()

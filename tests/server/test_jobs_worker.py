"""Ingest jobs in worker processes, over real HTTP with the workspace's embedder being the fake
embedding server on 127.0.0.1: searches go on while a worker ingests; a worker killed with
``kill -9`` fails its job with a Japanese reason, leaves the collection at its last commit and
the next job works; a queued job is cancelled, a running one stopped; stopping the server stops
its workers."""

from __future__ import annotations

import os
import signal
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest

import tansaku
from tansaku.embed import load_embedder
from tansaku.records import Record
from tansaku.server import ServerSettings, create_app
from tansaku.server.jobs import STOPPED_BY_SERVER
from tansaku.testing.fake_embedding_server import FakeEmbeddingServer, Fault

from .support import Live, live_server

pytestmark = pytest.mark.integration

MANUALS = [
    ("fridge", "冷蔵庫の温度管理", "冷蔵庫の温度は毎朝確認し、5度を超えたら店長に報告します。"),
    ("opening", "開店準備の手順", "開店前にレジの釣り銭を数え、客席とトイレを清掃します。"),
]


def manual_md(title: str, chapters: int) -> bytes:
    body = "\n\n".join(
        f"## 第{i}章 {title}\n\n第{i}工程では食材の温度を記録し、異常があれば店長に連絡します。"
        for i in range(chapters)
    )
    return f"# {title}\n\n{body}\n".encode()


@contextmanager
def served(tmp_path: Path) -> Iterator[tuple[Live, FakeEmbeddingServer]]:
    """A workspace whose ``[embedder]`` is the fake embedding server, with ``manuals``
    committed, served by a real uvicorn (the server opens it as ``tansaku serve`` does)."""
    with FakeEmbeddingServer(dim=64) as fake:
        home = tmp_path / "ws"
        home.mkdir()
        (home / "tansaku.toml").write_text(
            f'[embedder]\nprovider = "tei"\nbase_url = "{fake.url}/v1"\nmodel = "fake-e5"\n'
            "max_retries = 0\n",
            encoding="utf-8",
        )
        with tansaku.connect(home, embedder=load_embedder(home)) as ts:
            rows = [
                Record(id=f"{d}:body", doc_id=d, field="body", text=t, metadata={"title": ti})
                for d, ti, t in MANUALS
            ]
            ts.ingest_records(rows, collection="manuals")
        app = create_app(home, settings=ServerSettings(), warm_up=False, ui=False)
        with live_server(app) as live:
            yield live, fake


def upload(http: httpx.Client, collection: str, name: str, data: bytes) -> dict[str, Any]:
    r = http.post(
        "/api/ingest", data={"collection": collection}, files={"files": (name, data, "text/md")}
    )
    assert r.status_code == 202, r.text
    return r.json()


def wait_job(http: httpx.Client, job_id: str, until: Any = None) -> dict[str, Any]:
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        job = http.get(f"/api/jobs/{job_id}").json()
        if until(job) if until else job["status"] in ("done", "failed", "cancelled"):
            return job
        time.sleep(0.05)
    raise AssertionError(f"job {job_id} did not get there: {job}")


def wait_pid(live: Live, job_id: str) -> int:
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        pid = live.state.jobs.worker_pid(job_id)
        if pid is not None:
            return pid
        time.sleep(0.02)
    raise AssertionError("the job never got a worker process")


def wait_requests(fake: FakeEmbeddingServer, more_than: int) -> None:
    deadline = time.monotonic() + 120
    while len(fake.embedding_requests) <= more_than:
        assert time.monotonic() < deadline, "the worker never asked the embedding server"
        time.sleep(0.02)


def gone(pid: int) -> bool:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.05)
    return False


def test_a_worker_process_ingests_while_three_threads_search(tmp_path):
    with served(tmp_path) as (live, fake):
        fake.delay_s = 0.02  # every embedding request a little slow: the job takes a while
        errors: list[str] = []
        counts = [0]
        stop = threading.Event()

        def searcher() -> None:
            with live.client() as http:
                while not stop.is_set():
                    r = http.post("/api/search", json={"query": "冷蔵庫", "collection": "manuals"})
                    if r.status_code != 200 or r.json()["hits"][0]["doc_id"] != "fridge":
                        errors.append(r.text[:300])
                    counts[0] += 1

        threads = [threading.Thread(target=searcher) for _ in range(3)]
        for t in threads:
            t.start()
        try:
            with live.client() as http:
                job = upload(http, "manuals", "衛生マニュアル.md", manual_md("衛生管理", 120))
                pid = wait_pid(live, job["id"])
                done = wait_job(http, job["id"])
        finally:
            stop.set()
            for t in threads:
                t.join()
        assert pid != os.getpid()
        assert errors == [] and counts[0] > 0
        assert done["status"] == "done", done
        assert done["result"]["inserted"] > 100
        assert done["counts"]["files_total"] == 1 and done["counts"]["written"] > 100
        assert done["progress"]["write"]["done"] == done["progress"]["write"]["total"]
        assert gone(pid)
        with live.client() as http:
            hits = http.post(
                "/api/search", json={"query": "第7工程 食材の温度", "collection": "manuals"}
            ).json()["hits"]
            assert hits[0]["doc_id"] == "衛生マニュアル"


def test_kill_9_fails_the_job_and_keeps_the_last_commit(tmp_path):
    with served(tmp_path) as (live, fake), live.client() as http:
        backend = live.state.client.backend
        before = backend.fingerprint("manuals")
        count = http.get("/api/collections").json()["collections"][0]["records"]
        seen = len(fake.embedding_requests)
        fake.fail_next(Fault(delay_s=60))  # the worker's first embedding request hangs
        job = upload(http, "manuals", "清掃手順.md", manual_md("清掃", 30))
        pid = wait_pid(live, job["id"])
        wait_requests(fake, seen)
        os.kill(pid, signal.SIGKILL)
        failed = wait_job(http, job["id"])
        assert failed["status"] == "failed", failed
        assert "異常終了" in failed["error"] and "シグナル 9" in failed["error"], failed
        assert "最後に確定した状態" in failed["error"]
        assert backend.fingerprint("manuals") == before  # nothing of the job was committed
        listed = http.get("/api/collections").json()["collections"]
        assert listed[0]["records"] == count
        hits = http.post("/api/search", json={"query": "冷蔵庫", "collection": "manuals"}).json()
        assert hits["hits"][0]["doc_id"] == "fridge"
        saved = live.state.appdb.jobs.get("default", job["id"])
        assert saved.status == "failed" and "異常終了" in (saved.error or "")
        # the lock died with the worker: the next job takes it and commits
        again = wait_job(http, upload(http, "manuals", "清掃手順.md", manual_md("清掃", 30))["id"])
        assert again["status"] == "done", again
        assert backend.fingerprint("manuals") != before
        hits = http.post(
            "/api/search", json={"query": "第3工程 清掃", "collection": "manuals"}
        ).json()["hits"]
        assert hits[0]["doc_id"] == "清掃手順"
        uploads = Path(live.state.client.workspace.home) / "server" / "uploads"
        assert not list(uploads.iterdir())


def test_cancel_a_queued_job_and_stop_a_running_one(tmp_path):
    with served(tmp_path) as (live, fake), live.client() as http:
        before = live.state.client.backend.fingerprint("manuals")
        seen = len(fake.embedding_requests)
        fake.fail_next(Fault(delay_s=60))
        first = upload(http, "manuals", "一.md", manual_md("仕込み", 10))
        second = upload(http, "manuals", "二.md", manual_md("発注", 10))  # same collection: waits
        wait_pid(live, first["id"])
        wait_requests(fake, seen)
        assert http.get(f"/api/jobs/{second['id']}").json()["status"] == "queued"
        cancelled = http.post(f"/api/jobs/{second['id']}/cancel")
        assert cancelled.status_code == 200 and cancelled.json()["status"] == "cancelled"
        assert live.state.appdb.jobs.get("default", second["id"]).status == "cancelled"
        stopping = http.post(f"/api/jobs/{first['id']}/cancel")
        assert stopping.status_code == 200, stopping.text
        stopped = wait_job(http, first["id"])
        assert stopped["status"] == "cancelled", stopped
        assert live.state.client.backend.fingerprint("manuals") == before
        again = http.post(f"/api/jobs/{first['id']}/cancel")
        assert again.status_code == 409 and "取り消せません" in again.json()["error"]["message"]
        assert http.post("/api/jobs/0123abcd/cancel").status_code == 404
        third = wait_job(http, upload(http, "manuals", "三.md", manual_md("接客", 5))["id"])
        assert third["status"] == "done", third


def test_stopping_the_server_stops_its_workers(tmp_path):
    with served(tmp_path) as (live, fake):
        with live.client() as http:
            seen = len(fake.embedding_requests)
            fake.fail_next(Fault(delay_s=60))
            job = upload(http, "manuals", "長い手順.md", manual_md("長い", 20))
            queued = upload(http, "manuals", "次の手順.md", manual_md("次", 5))
            pid = wait_pid(live, job["id"])
            wait_requests(fake, seen)
        home = Path(live.state.client.workspace.home)
        before = live.state.client.backend.fingerprint("manuals")
        t0 = time.monotonic()
    # the server has stopped (its lifespan ended): the worker with it, within its grace
    assert gone(pid)
    assert time.monotonic() - t0 < 60
    from tansaku.appdb.db import open_appdb

    db = open_appdb(home)
    try:
        for job_id in (job["id"], queued["id"]):
            record = db.jobs.get("default", job_id)
            assert record.status == "failed" and record.error == STOPPED_BY_SERVER
    finally:
        db.close()
    with tansaku.connect(home, embedder=load_embedder(home)) as ts:
        assert ts.backend.fingerprint("manuals") == before

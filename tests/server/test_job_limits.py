"""Each job's worker process runs under a memory limit (``RLIMIT_AS``) and a wall-clock limit:
past either, the job fails with a Japanese message naming the limit, the collection stays at
its last commit, and the next job runs."""

from __future__ import annotations

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
from tansaku.testing.fake_embedding_server import FakeEmbeddingServer, Fault

from .support import Live, live_server

pytestmark = pytest.mark.integration
MANUAL = "# 仕込み\n\n" + "\n\n".join(
    f"## 第{i}章\n\n第{i}工程では食材の温度を記録し、異常があれば店長に連絡します。"
    for i in range(10)
)


@contextmanager
def served(tmp_path: Path, **settings: Any) -> Iterator[tuple[Live, FakeEmbeddingServer]]:
    with FakeEmbeddingServer(dim=64) as fake:
        home = tmp_path / "ws"
        home.mkdir(parents=True)
        (home / "tansaku.toml").write_text(
            f'[embedder]\nprovider = "tei"\nbase_url = "{fake.url}/v1"\nmodel = "fake-e5"\n'
            "max_retries = 0\ntimeout = 300\n",
            encoding="utf-8",
        )
        with tansaku.connect(home, embedder=load_embedder(home)) as ts:
            record = Record(id="fridge:body", doc_id="fridge", field="body", text="冷蔵庫の温度")
            ts.ingest_records([record], collection="manuals")
        app = create_app(home, settings=ServerSettings(**settings), warm_up=False, ui=False)
        with live_server(app) as live:
            yield live, fake


def _upload(http: httpx.Client) -> dict[str, Any]:
    r = http.post(
        "/api/ingest",
        data={"collection": "manuals"},
        files={"files": ("仕込み.md", MANUAL.encode(), "text/markdown")},
    )
    assert r.status_code == 202, r.text
    deadline = time.monotonic() + 240
    while (job := http.get(f"/api/jobs/{r.json()['id']}").json())["status"] not in (
        "done",
        "failed",
        "cancelled",
    ):
        assert time.monotonic() < deadline, job
        time.sleep(0.1)
    return job


def test_a_job_past_its_time_limit_is_stopped_and_fails_saying_so(tmp_path):
    with served(tmp_path, job_timeout_s=20) as (live, fake), live.client() as http:
        fake.fail_next(*[Fault(delay_s=200)] * 2)  # the embedding server hangs
        started = time.monotonic()
        job = _upload(http)
        assert job["status"] == "failed", job
        assert "制限時間(20 秒、TANSAKU_JOB_TIMEOUT_S)を超えたため中止しました" in job["error"]
        assert time.monotonic() - started < 120
        bm25 = [{"name": "kw", "mode": "bm25"}]  # the embedding server still hangs
        r = http.post(
            "/api/search", json={"query": "食材の温度", "collection": "manuals", "axes": bm25}
        )
        assert r.status_code == 200, r.text
        assert all(h["doc_id"] == "fridge" for h in r.json()["hits"])  # the last commit


def test_a_job_past_its_memory_limit_fails_saying_so(tmp_path):
    with served(tmp_path, job_memory_mb=64) as (live, _), live.client() as http:
        job = _upload(http)
        assert job["status"] == "failed", job
        assert "64 MB" in job["error"] and "メモリ" in job["error"], job["error"]
    with served(tmp_path / "again") as (live, _), live.client() as http:
        assert _upload(http)["status"] == "done"  # the default limit lets a normal job run

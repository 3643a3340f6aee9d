"""A search's appdb row is written in a batch after the answer (``tansaku.server.event_writer``);
a server stopped cleanly — SIGTERM to a real ``tansaku serve`` — writes every row still
waiting before it exits. The batching interval is set to a minute, so every row here is
written by the stop."""

from __future__ import annotations

import shutil
import signal
import subprocess
import time

import httpx
import pytest

from tansaku.appdb.db import open_appdb
from tansaku.appdb.rows import Page

from .support import free_port, serve_process

pytestmark = pytest.mark.integration

QUESTIONS = ["冷蔵庫の温度", "開店準備の手順", "アレルギー対応", "釣り銭の確認", "清掃の順番"]


def _wait_ready(proc: subprocess.Popen[str], base: str) -> None:
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        assert proc.poll() is None, proc.stdout.read() if proc.stdout else ""
        try:
            if httpx.get(f"{base}/healthz", timeout=2).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.1)
    raise AssertionError("tansaku serve did not start")


def test_sigterm_writes_every_waiting_search_row(template_workspace, tmp_path):
    home = tmp_path / "ws"
    shutil.copytree(template_workspace, home)
    (home / "tansaku.toml").write_text('[embedder]\nprovider = "hash"\ndim = 32\n', "utf-8")
    db = open_appdb(home)
    key, _ = db.keys.create_key("alpha")
    db.close()
    base = f"http://127.0.0.1:{(port := free_port())}"
    env = {"TANSAKU_EVENT_FLUSH_S": "60", "TANSAKU_JOB_PROCESSES": "0"}
    proc = serve_process(home, port, env=env)
    try:
        _wait_ready(proc, base)
        ids = []
        auth = {"Authorization": f"Bearer {key}"}
        with httpx.Client(base_url=base, timeout=60, headers=auth) as http:
            for q in QUESTIONS * 4:
                body = {"query": q, "collection": "manuals", "top_k": 3}
                r = http.post("/api/search", json=body)
                assert r.status_code == 200, r.text
                ids.append(r.json()["query_id"])
        proc.send_signal(signal.SIGTERM)
        out, _ = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    # uvicorn shuts down cleanly, then re-raises the signal it caught
    assert proc.returncode in (0, -signal.SIGTERM), out
    assert "Application shutdown complete" in out
    db = open_appdb(home)
    try:
        stored = {e.query_id for e in db.events.find("alpha", page=Page(1000))}
    finally:
        db.close()
    assert stored == set(ids)

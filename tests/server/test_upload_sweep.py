"""``kill -9`` of a server during an upload job left the uploaded files in
``<workspace>/server/uploads/`` forever: a server removes, when it starts, the upload folders
whose owning server process is gone (jobs never outlive their server), and keeps those of a
server still running."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from tansaku.server import ServerSettings, create_app
from tansaku.server.uploads import OWNER_FILE, new_folder, sweep, uploads_dir
from tansaku.testing.fake_embedding_server import FakeEmbeddingServer, Fault

from .support import free_port, live_server
from .test_jobs_worker import manual_md

pytestmark = pytest.mark.integration


def _serve(home: Path, port: int) -> subprocess.Popen[bytes]:
    """``tansaku serve`` as a user runs it, in a process of its own."""
    tansaku_cli = Path(sys.executable).with_name("tansaku")
    return subprocess.Popen(
        [str(tansaku_cli), "serve", "--home", str(home), "--port", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )


def _wait_up(base: str, proc: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        assert proc.poll() is None, proc.stderr.read().decode() if proc.stderr else ""
        try:
            httpx.get(base + "/healthz", timeout=2)
            return
        except httpx.TransportError:
            time.sleep(0.2)
    raise AssertionError("tansaku serve did not start")


def test_a_killed_servers_upload_folder_is_removed_at_the_next_start(tmp_path):
    home = tmp_path / "ws"
    home.mkdir()
    with FakeEmbeddingServer(dim=64) as fake:
        (home / "tansaku.toml").write_text(
            f'[embedder]\nprovider = "tei"\nbase_url = "{fake.url}/v1"\nmodel = "fake-e5"\n'
            "max_retries = 0\n",
            encoding="utf-8",
        )
        port = free_port()
        base = f"http://127.0.0.1:{port}"
        proc = _serve(home, port)
        try:
            _wait_up(base, proc)
            fake.fail_next(*[Fault(delay_s=30)] * 4)  # the job stays busy until the kill
            r = httpx.post(
                base + "/api/ingest",
                data={"collection": "manuals"},
                files={"files": ("手順.md", manual_md("手順", 20), "text/markdown")},
                timeout=60,
            )
            assert r.status_code == 202, r.text
            job_id = r.json()["id"]
            (left,) = list(uploads_dir(home).iterdir())
            assert (left / "手順.md").is_file()
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait(30)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait(30)
        assert (left / "手順.md").is_file()  # what kill -9 leaves behind

        running = new_folder(home)  # a folder of a server that is still running (this one)
        app = create_app(home, settings=ServerSettings(), warm_up=False, ui=False)
        with live_server(app) as live, live.client() as http:
            assert not left.exists()
            assert running.is_dir()
            job = http.get(f"/api/jobs/{job_id}").json()
            assert job["status"] == "failed", job


def test_sweep_keeps_live_owners_and_young_orphans(tmp_path):
    home = tmp_path / "ws"
    live = new_folder(home)
    dead = new_folder(home)
    (dead / OWNER_FILE).write_text(f"{socket.gethostname()}:{_dead_pid()}", encoding="utf-8")
    orphan = uploads_dir(home) / "no-owner"
    orphan.mkdir()
    assert sweep(home) == [dead.name]
    assert live.is_dir() and orphan.is_dir()
    assert sweep(home, orphan_after=-1) == ["no-owner"]


def _dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid

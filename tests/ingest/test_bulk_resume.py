"""``kill -9`` of a bulk ingest, at several points: the real ``tansaku ingest`` in a child
process, embedding through the fake OpenAI-compatible server over HTTP (in this process, so it
counts every text it embeds). After the kill the committed generation is whole (``tansaku
doctor`` finds only the dead writer's working folder); a re-run finishes, every document is
stored exactly once with the statistics of a clean ingest, and the server embeds exactly the
texts the cache did not yet hold."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from bulk_support import snapshot, write_jsonl, write_texts

import tansaku
from tansaku.maintenance.doctor import check
from tansaku.testing import HashEmbedder
from tansaku.testing.fake_embedding_server import FakeEmbeddingServer

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def server() -> Iterator[FakeEmbeddingServer]:
    with FakeEmbeddingServer(dim=32, max_batch=None) as srv:
        yield srv


@pytest.fixture(scope="module")
def source(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("src")
    write_texts(root / "reports", 40)
    write_jsonl(root / "exports" / "daily.jsonl", 1_400)
    return root


def start(home: Path, src: Path, server: FakeEmbeddingServer, **env: str) -> subprocess.Popen:
    e = {k: v for k, v in os.environ.items() if not k.startswith("TANSAKU_")}
    e.update(
        PYTHONUTF8="1",
        TANSAKU_EMBEDDER="openai",
        TANSAKU_EMBED_BASE_URL=f"{server.url}/v1",
        TANSAKU_EMBED_MODEL="fake-ja",
        TANSAKU_EMBED_DIMENSIONS="32",
        TANSAKU_EMBED_BATCH_SIZE="32",
        TANSAKU_EMBED_CONCURRENCY="2",
        **env,
    )
    cmd = [sys.executable, "-m", "tansaku.cli.main", "ingest", str(src), "-c", "reports"]
    return subprocess.Popen(
        [*cmd, "--home", str(home), "--json"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=e,
    )


def ingest(home: Path, src: Path, server: FakeEmbeddingServer, **env: str) -> tuple[int, Any]:
    proc = start(home, src, server, **env)
    out, err = proc.communicate(timeout=600)
    data = json.loads(out) if proc.returncode == 0 else err
    return proc.returncode, data


def cached(home: Path) -> int:
    path = home / "cache" / "embeddings.sqlite"
    if not path.exists():
        return 0
    with sqlite3.connect(path) as db:
        return int(db.execute("SELECT count(*) FROM embeddings").fetchone()[0])


def stored(home: Path) -> dict[str, Any]:
    with tansaku.connect(home, embedder=HashEmbedder(32), create=False) as ts:
        if not ts.has_collection("reports") or ts.collection("reports").handles is None:
            return {"hashes": {}, "stats": {}}
        return snapshot(ts, "reports")


def findings(home: Path) -> list[tuple[str, str]]:
    with tansaku.connect(home, embedder=HashEmbedder(32), create=False) as ts:
        return [(f.check, f.message) for f in check(ts)]


@pytest.fixture(scope="module")
def clean(
    server: FakeEmbeddingServer, source: Path, tmp_path_factory: pytest.TempPathFactory
) -> tuple[dict[str, Any], int]:
    """What a clean ingest stores, and the distinct texts it embeds."""
    home = tmp_path_factory.mktemp("clean") / "ws"
    code, report = ingest(home, source, server)
    assert code == 0, report
    assert report["embedded"] == cached(home) and report["failed"] == []
    return stored(home), cached(home)


def settled(server: FakeEmbeddingServer, quiet_s: float = 0.5, limit_s: float = 60.0) -> None:
    """Wait until the server answers nothing and has taken no request for ``quiet_s``."""
    seen, quiet_since = -1, time.monotonic()
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline:
        now = (len(server.requests), server.texts_embedded)
        if server.in_flight or now != seen:
            seen, quiet_since = now, time.monotonic()
        elif time.monotonic() - quiet_since >= quiet_s:
            return
        time.sleep(0.05)


def resume_and_check(
    home: Path, src: Path, server: FakeEmbeddingServer, clean: tuple[dict[str, Any], int]
) -> dict[str, Any]:
    want, distinct = clean
    assert all(check == "leftovers" for check, _ in findings(home))  # the commit is whole
    before = stored(home)
    assert set(before["hashes"]) <= set(want["hashes"])
    settled(server)  # a batch the killed run had sent may still be answered: count it first
    in_cache = cached(home)
    sent = server.texts_embedded
    code, report = ingest(home, src, server)
    assert code == 0, report
    assert server.texts_embedded - sent == report["embedded"] == distinct - in_cache
    assert report["unchanged"] == len(before["hashes"])
    assert report["inserted"] == len(want["hashes"]) - len(before["hashes"])
    assert stored(home) == want  # every record once, statistics of a clean ingest
    assert findings(home) == []
    return report


POINTS = [
    ("bulk-embedded:3", "0"),  # the embedding thread, a few batches ahead of the writer
    ("bulk-batch:4", "0"),  # a batch applied in the working copy, not yet committed
    ("bulk-batch:3", "3600"),  # ... with no checkpoint yet: nothing committed at all
    ("bulk-checkpoint:2", "0"),  # right after a checkpoint
    ("records:3", "0"),  # inside a batch: records written, statistics not yet
    ("settled:2", "0"),  # inside a commit, before CURRENT moves
]


@pytest.mark.parametrize(("point", "every"), POINTS)
def test_killed_at_a_crash_point_the_next_run_finishes_the_job(
    point: str, every: str, server, source, clean, tmp_path
) -> None:
    home = tmp_path / "ws"
    code, err = ingest(home, source, server, TANSAKU_CRASH_AT=point, TANSAKU_CHECKPOINT_S=every)
    assert code == -signal.SIGKILL, err
    resume_and_check(home, source, server, clean)


def test_a_real_kill_9_after_some_batches(server, source, clean, tmp_path) -> None:
    home = tmp_path / "ws"
    current = home / "collections" / "reports" / "CURRENT"
    server.rate = 800.0  # texts per second: the ingest lasts a few seconds
    try:
        proc = start(home, source, server, TANSAKU_CHECKPOINT_S="0.2")
        commits: set[str] = set()
        deadline = time.monotonic() + 300
        while len(commits) < 2 and time.monotonic() < deadline:  # two checkpoints, then kill
            assert proc.poll() is None, proc.communicate()
            if current.exists():
                commits.add(current.read_text(encoding="utf-8"))
            time.sleep(0.005)
        os.kill(proc.pid, signal.SIGKILL)
        proc.communicate(timeout=60)
    finally:
        server.rate = None
    assert proc.returncode == -signal.SIGKILL
    kept = len(stored(home)["hashes"])
    assert 0 < kept < len(clean[0]["hashes"])
    report = resume_and_check(home, source, server, clean)
    assert report["unchanged"] == kept

"""Workspaces for the adapters: the demo's daily reports of the week before 2025-12-11 and the
bundled manuals, plus one record of another team (the scope tests look for it)."""

from __future__ import annotations

import shutil
from datetime import datetime, timedelta
from pathlib import Path

import pytest

import tansaku
from tansaku.demo.reports import generate, write_reports_jsonl
from tansaku.testing import HashEmbedder
from tansaku.text.dates import TOKYO

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
NOW = datetime(2025, 12, 11, 9, 0, tzinfo=TOKYO)
OTHER_TEAM_TEXT = "他チームの冷蔵庫の故障の秘密の記録"


def build_workspace(base: Path, client: tansaku.Tansaku) -> None:
    """Reports of the last week (yesterday: a broken refrigerator at 渋谷店 …) and manuals."""
    week = generate(NOW, start=(NOW - timedelta(days=7)).date())
    src = write_reports_jsonl(week, base / "reports.jsonl")
    cfg = EXAMPLES / "configs"
    report = client.ingest([src], collection="reports", config=cfg / "reports.toml")
    assert report.ok and report.inserted > 0, report.failed
    report = client.ingest(
        [EXAMPLES / "manuals"], collection="manuals", config=cfg / "manuals.toml"
    )
    assert report.ok and report.inserted > 0, report.failed
    secret = tansaku.Record(
        id="s:body", doc_id="s", field="body", text=OTHER_TEAM_TEXT,
        metadata={"source_type": "daily_report", "date": "2025-12-10", "store": "渋谷店"},
    )  # fmt: skip
    client.ingest_records([secret], collection="reports", team="other")


@pytest.fixture(scope="session")
def real_home(tmp_path_factory, embedding_cache_dir) -> Path:
    """A workspace built with the bundled embedder, as `tansaku mcp` opens it in a subprocess
    (the session's embedding cache makes a second run cheap)."""
    base = tmp_path_factory.mktemp("mcp-e2e")
    home = base / "ws"
    (home / "cache").mkdir(parents=True)
    cache = embedding_cache_dir / "embeddings.sqlite"
    if cache.exists():
        shutil.copy(cache, home / "cache" / "embeddings.sqlite")
    with tansaku.connect(home) as client:
        build_workspace(base, client)
        client.embedder.close()
        shutil.copy(home / "cache" / "embeddings.sqlite", cache)
    return home


@pytest.fixture(scope="module")
def hash_client(tmp_path_factory):
    """The same data with the deterministic embedder, for in-process adapters."""
    base = tmp_path_factory.mktemp("adapters")
    client = tansaku.connect(base / "ws", embedder=HashEmbedder(32))
    build_workspace(base, client)
    yield client
    client.close()

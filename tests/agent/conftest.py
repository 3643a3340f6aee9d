"""A small restaurant workspace (generated daily reports around a fixed day, the bundled
manuals) with the deterministic embedder, and the demo tables."""

from __future__ import annotations

from pathlib import Path

import pytest

import tansaku
from tansaku.demo.reports import generate, write_reports_jsonl
from tansaku.testing import HashEmbedder

from .clock import NOW

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


@pytest.fixture(scope="module")
def home(tmp_path_factory):
    base = tmp_path_factory.mktemp("agent")
    src = write_reports_jsonl(generate(NOW), base / "reports.jsonl")
    ws = base / "ws"
    with tansaku.connect(ws, embedder=HashEmbedder(32)) as client:
        cfg = EXAMPLES / "configs"
        assert client.ingest([src], collection="reports", config=cfg / "reports.toml").ok
        assert client.ingest(
            [EXAMPLES / "manuals"], collection="manuals", config=cfg / "manuals.toml"
        ).ok
    return ws


@pytest.fixture
def ts(home):
    with tansaku.connect(home, embedder=HashEmbedder(32)) as client:
        yield client


@pytest.fixture(scope="module")
def tables(tmp_path_factory):
    pytest.importorskip("duckdb")
    from tansaku.demo.tables import install_demo_tables
    from tansaku.tables import TableDatabase, load_tables_config

    base = tmp_path_factory.mktemp("agent-tables")
    install_demo_tables(base)
    with TableDatabase(load_tables_config(base / "tables.toml")) as db:
        yield db

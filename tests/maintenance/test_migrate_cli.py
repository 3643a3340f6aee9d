"""``tansaku migrate`` on a workspace the code before layout 2 built (the v1 fixture of
tests/store: two collections with UUID point ids): ``--check`` lists them and exits 1 without
changing anything; ``migrate`` converts them by the path opening takes and reports it; the
searches return what they returned before the change."""

from __future__ import annotations

import json
import os
import tarfile
from pathlib import Path

import pytest

import tansaku
from tansaku.backends.embedded import generations
from tansaku.backends.embedded.migrate import needs_migration
from tansaku.testing import HashEmbedder

from .conftest import run_cli

pytestmark = pytest.mark.integration

FIXTURE = Path(__file__).parents[1] / "store" / "fixtures" / "workspace-v1.tar.gz"


@pytest.fixture
def home(tmp_path: Path) -> Path:
    with tarfile.open(FIXTURE) as tar:
        tar.extractall(tmp_path / "home", filter="data")
    return tmp_path / "home"


def env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith("TANSAKU_")} | {
        "PYTHONUTF8": "1"
    }


def test_check_lists_what_needs_migrating_and_changes_nothing(home: Path) -> None:
    cols = home / "collections"
    before = {c.name: generations.current(c) for c in cols.iterdir()}
    text = run_cli(home, env(), "migrate", "--check")
    assert text.returncode == 1, text.stderr
    assert "要移行: faq(形式1(UUID の点ID))" in text.stdout
    assert "要移行: plain" in text.stdout
    proc = run_cli(home, env(), "migrate", "--check", "--json")
    assert proc.returncode == 1, proc.stderr
    data = json.loads(proc.stdout)
    assert [(p["collection"], p["from_layout"], p["to_layout"]) for p in data["pending"]] == [
        ("faq", 1, 2),
        ("plain", 1, 2),
    ]
    assert {c.name: generations.current(c) for c in cols.iterdir()} == before
    assert all(needs_migration(c) for c in cols.iterdir())


def test_migrate_converts_every_collection_and_reports_it(home: Path) -> None:
    expected = json.loads((home / "expected.json").read_text(encoding="utf-8"))
    cols = home / "collections"
    old = {c.name: generations.current(c) for c in cols.iterdir()}
    proc = run_cli(home, env(), "migrate", "--json")
    assert proc.returncode == 0, proc.stderr
    done = json.loads(proc.stdout)["migrated"]
    assert [(m["collection"], m["from_layout"], m["to_layout"]) for m in done] == [
        ("faq", 1, 2),
        ("plain", 1, 2),
    ]
    for m in done:
        gen = generations.current(cols / m["collection"])
        assert gen is not None and gen.name == m["generation"] != old[m["collection"]].name
        assert m["records"] > 0
        assert not old[m["collection"]].exists()  # the backup goes once the new one commits
    again = run_cli(home, env(), "migrate", "--check")
    assert again.returncode == 0 and "移行が必要なコレクションはありません" in again.stdout
    nothing = run_cli(home, env(), "migrate")
    assert nothing.returncode == 0 and "移行が必要なコレクションはありません" in nothing.stdout
    with tansaku.connect(home, embedder=HashEmbedder(32)) as ts:
        for key, hits in expected.items():
            team, query = key.split(":")
            if team == "plain":
                got = ts.search(query, collection="plain").hits
            else:
                got = ts.search(query, collection="faq", team=team).hits
            assert [[h.record.id, round(h.score, 6)] for h in got] == hits


def test_a_missing_workspace_is_an_error(tmp_path: Path) -> None:
    proc = run_cli(tmp_path / "nowhere", env(), "migrate", "--check")
    assert proc.returncode == 1
    assert "ワークスペース" in proc.stderr and not (tmp_path / "nowhere").exists()

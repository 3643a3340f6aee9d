"""Layout 1 → 2 (UUID point ids → unsigned 64-bit integers), on a workspace the code before the
change built (``fixtures/workspace-v1.tar.gz``: commit 932e719, two teams, a bigram axis, a
collection without units; ``expected.json`` holds what its searches returned then)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest
import qdrant_edge as qe

import tansaku
from tansaku.backends.embedded import generations
from tansaku.backends.embedded.migrate import needs_migration
from tansaku.collection import STATE_VERSION
from tansaku.maintenance.doctor import check
from tansaku.store.ids import point_id, unit_point_id
from tansaku.testing import HashEmbedder

FIXTURE = Path(__file__).with_name("fixtures") / "workspace-v1.tar.gz"


@pytest.fixture
def home(tmp_path: Path) -> Path:
    with tarfile.open(FIXTURE) as tar:
        tar.extractall(tmp_path / "home", filter="data")  # sparse members stay sparse
    return tmp_path / "home"


def _searches(ts: tansaku.Tansaku) -> dict[str, list[list[object]]]:
    out: dict[str, list[list[object]]] = {}
    for q in ["冷蔵庫の温度", "クレーム", "手洗い"]:
        for team in ("shinjuku", "shibuya"):
            hits = ts.search(q, collection="faq", team=team).hits
            out[f"{team}:{q}"] = [[h.record.id, round(h.score, 6)] for h in hits]
        plain = ts.search(q, collection="plain").hits
        out[f"plain:{q}"] = [[h.record.id, round(h.score, 6)] for h in plain]
    return out


def _ids(shard: Path) -> list[object]:
    s = qe.EdgeShard.load(str(shard))
    try:
        points, _ = s.scroll(qe.ScrollRequest(limit=1000, with_payload=True))
        return [(p.id, p.payload) for p in points]
    finally:
        s.close()


def test_a_layout_1_workspace_migrates_on_open_with_identical_results(home: Path) -> None:
    expected = json.loads((home / "expected.json").read_text(encoding="utf-8"))
    faq = home / "collections" / "faq"
    old_gen = generations.current(faq)
    assert old_gen is not None and needs_migration(faq)
    with tansaku.connect(home, embedder=HashEmbedder(32)) as ts:
        assert _searches(ts) == expected
        col = ts.collection("faq")
        assert col.state.version == STATE_VERSION == 2
        assert col.gen != old_gen and not old_gen.exists()  # the backup goes once committed
        assert check(ts) == []  # statistics and unit counts agree with the data
    for pid, payload in _ids(col.gen / "shard"):
        assert pid == point_id(payload["tenant"], payload["rid"])
    for pid, payload in _ids(col.gen / "units"):
        assert pid == unit_point_id(payload["tenant"], payload["rid"], payload["unit"])
    assert not needs_migration(faq) and not needs_migration(home / "collections" / "plain")


def test_a_killed_migration_keeps_the_old_generation_and_the_next_open_completes(
    home: Path,
) -> None:
    faq = home / "collections" / "faq"
    old_gen = generations.current(faq)
    env = {**os.environ, "TANSAKU_CRASH_AT": "migrated:1"}
    code = (
        "import sys, tansaku; from tansaku.testing import HashEmbedder\n"
        "tansaku.connect(sys.argv[1], embedder=HashEmbedder(32)).collection('faq')"
    )
    proc = subprocess.run([sys.executable, "-c", code, str(home)], env=env, check=False)
    assert proc.returncode == -9  # killed after the new generation was written, unpublished
    assert generations.current(faq) == old_gen and needs_migration(faq)
    expected = json.loads((home / "expected.json").read_text(encoding="utf-8"))
    with tansaku.connect(home, embedder=HashEmbedder(32)) as ts:
        assert _searches(ts) == expected
        assert [p.name for p in (faq / "gens").iterdir()] == [ts.collection("faq").gen.name]

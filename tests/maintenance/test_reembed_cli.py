"""``tansaku reembed`` end to end, each command in a fresh process, embedding through the fake
OpenAI-compatible server over HTTP with two models of different dimensions: before, the new
model's searches are refused and the old one's work; after, the other way round, with the
results a workspace built with the new model gives. A ``kill -9`` in the middle leaves the old
model's collection searchable, and the re-run embeds no text twice."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from tansaku.backends.embedded import generations
from tansaku.testing.fake_embedding_server import FakeEmbeddingServer

from .conftest import REPORTS, model_env, run_cli

pytestmark = pytest.mark.e2e

SHIBUYA = [
    "渋谷店の冷凍庫の扉が閉まりにくい。",
    "渋谷店で予約の電話が取れなかった。",
    "渋谷店のテラス席の照明が切れていた。",
    "渋谷店の仕込みが開店に間に合わなかった。",
    "渋谷店で釣り銭の両替を忘れた。",
]


def write_reports(folder: Path, texts: list[str]) -> Path:
    folder.mkdir(parents=True)
    for i, text in enumerate(texts):
        (folder / f"日報{i:02d}.txt").write_text(text + "\n", encoding="utf-8")
    return folder


def ingest(home: Path, env: dict[str, str], src: Path, team: str = "default") -> None:
    proc = run_cli(home, env, "ingest", str(src), "-c", "reports", "-t", team, "--json")
    assert proc.returncode == 0, proc.stderr


def search(home: Path, env: dict[str, str], query: str, team: str = "default") -> Any:
    proc = run_cli(home, env, "search", query, "-c", "reports", "-t", team, "--json")
    if proc.returncode != 0:
        return proc
    return [(h["doc_id"], round(h["score"], 6)) for h in json.loads(proc.stdout)["hits"]]


def passages(server: FakeEmbeddingServer, model: str, texts: list[str]) -> Counter[str]:
    """How many times each of ``texts`` was sent to the server for ``model``."""
    wanted = {t + "\n" for t in texts} | set(texts)
    sent: Counter[str] = Counter()
    for r in server.embedding_requests:
        if isinstance(r.body, dict) and r.body.get("model") == model:
            sent.update(t.rstrip("\n") for t in r.texts if t in wanted)
    return sent


def test_reembed_moves_a_collection_to_the_configured_model(
    server: FakeEmbeddingServer, tmp_path: Path
) -> None:
    src = write_reports(tmp_path / "src", REPORTS)
    home = tmp_path / "ws"
    old, new = model_env(server, "model-a", 32), model_env(server, "model-b", 48)
    ingest(home, old, src)
    before = search(home, old, "冷蔵庫の温度")
    assert isinstance(before, list) and before

    refused = search(home, new, "冷蔵庫の温度")
    assert refused.returncode == 1
    assert "「openai/model-a@32」(32次元)" in refused.stderr
    assert "`tansaku reembed reports`" in refused.stderr

    extra = write_reports(tmp_path / "extra", ["唐揚げの仕込みが間に合わなかった。"])
    committed = generations.current(home / "collections" / "reports")
    ingested = run_cli(home, new, "ingest", str(extra), "-c", "reports")
    assert ingested.returncode == 1
    assert "この取り込みはモデル「openai/model-b@48」" in ingested.stderr
    assert generations.current(home / "collections" / "reports") == committed

    unconfirmed = run_cli(home, new, "reembed", "reports")  # stdin is no terminal
    assert unconfirmed.returncode == 2 and "--yes" in unconfirmed.stderr
    proc = run_cli(home, new, "reembed", "reports", "--embedder-from-config", "--yes", "--json")
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    assert (report["old_model"], report["old_dim"]) == ("openai/model-a@32", 32)
    assert (report["new_model"], report["new_dim"]) == ("openai/model-b@48", 48)
    assert report["rebuild"] and report["changed"]
    assert report["written"] == report["records"] == len(REPORTS)
    assert report["embedded"] == len(REPORTS)
    assert f"埋め込み直し: {len(REPORTS)}/{len(REPORTS)} 件" in proc.stderr  # progress

    after = search(home, new, "冷蔵庫の温度")
    reference = tmp_path / "ref"  # the same documents ingested with the new model
    ingest(reference, new, src)
    assert after == search(reference, new, "冷蔵庫の温度")
    assert after != before  # other vectors, other dense scores
    refused_old = search(home, old, "冷蔵庫の温度")
    assert refused_old.returncode == 1 and "「openai/model-b@48」(48次元)" in refused_old.stderr

    sent = server.texts_embedded
    again = run_cli(home, new, "reembed", "reports", "--yes")
    assert again.returncode == 0 and "すでにモデル「openai/model-b@48」" in again.stdout
    assert server.texts_embedded - sent <= 1  # at most the dimension probe; no passage
    assert passages(server, "model-b", REPORTS) == Counter(REPORTS * 2)  # home, reference


def test_a_killed_reembed_leaves_the_old_collection_and_the_rerun_embeds_nothing_twice(
    server: FakeEmbeddingServer, tmp_path: Path
) -> None:
    home = tmp_path / "ws"
    old, new = model_env(server, "model-a", 32), model_env(server, "model-b", 48)
    ingest(home, old, write_reports(tmp_path / "shinjuku", REPORTS), team="shinjuku")
    ingest(home, old, write_reports(tmp_path / "shibuya", SHIBUYA), team="shibuya")
    col_dir = home / "collections" / "reports"
    committed = generations.current(col_dir)
    before = {t: search(home, old, "冷蔵庫", team=t) for t in ("shinjuku", "shibuya")}

    killed = run_cli(home, new | {"TANSAKU_CRASH_AT": "reembed:1"}, "reembed", "reports", "-y")
    assert killed.returncode == -9  # SIGKILL after the first team's batch was written
    assert generations.current(col_dir) == committed
    assert passages(server, "model-b", SHIBUYA) == Counter(SHIBUYA)  # embedded, then killed
    for team, hits in before.items():  # the old model's collection, as it was
        assert search(home, old, "冷蔵庫", team=team) == hits
    assert search(home, new, "冷蔵庫", team="shinjuku").returncode == 1

    proc = run_cli(home, new, "reembed", "reports", "--yes", "--json")
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    assert report["written"] == len(REPORTS) + len(SHIBUYA)
    assert report["embedded"] == len(REPORTS)  # shibuya's came from the cache
    sent = passages(server, "model-b", REPORTS + SHIBUYA)
    assert sent == Counter(REPORTS + SHIBUYA)  # every text exactly once
    assert sorted(p.name for p in (col_dir / "gens").iterdir()) == [
        generations.current(col_dir).name  # type: ignore[union-attr]
    ]
    assert isinstance(search(home, new, "冷蔵庫", team="shinjuku"), list)
    assert search(home, old, "冷蔵庫", team="shinjuku").returncode == 1

"""``tansaku eval`` through typer's runner, on a tiny app that calls ``register(app)``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

import tansaku
from tansaku.cli.eval import register
from tansaku.testing import HashEmbedder

pytestmark = pytest.mark.e2e

METRICS = [
    "ndcg@10", "recall@10", "recall@100", "mrr@10", "p@10", "r@1",
    "zero_hit_rate", "latency_ms_p50", "latency_ms_p95",
]  # fmt: skip


@pytest.fixture
def app() -> typer.Typer:
    application = typer.Typer()

    @application.callback()
    def main() -> None:
        """テスト用のアプリ。"""

    register(application, connect=lambda home: tansaku.connect(home, embedder=HashEmbedder(32)))
    return application


def test_json_shape(app, beir_dir: Path, tmp_path: Path) -> None:
    conf = tmp_path / "rrf.toml"
    conf.write_text('name = "rrf-k60"\n[fusion]\nmethod = "rrf"\n', encoding="utf-8")
    args = ["eval", str(beir_dir), "--json", "--home", str(tmp_path / "ws")]
    result = CliRunner().invoke(app, [*args, "--config", str(conf)])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert list(data) == ["dataset", "configs"]
    assert data["dataset"] == "mini-ja"
    assert [c["name"] for c in data["configs"]] == ["rrf-k60"]
    assert all(list(c) == ["name", "metrics"] for c in data["configs"])
    assert all(list(c["metrics"]) == METRICS for c in data["configs"])

    default = json.loads(CliRunner().invoke(app, args).stdout)
    assert [c["name"] for c in default["configs"]] == ["default", "bm25", "dense", "bigram"]


def test_table_and_out_dir(app, beir_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / "report"
    result = CliRunner().invoke(
        app, ["eval", str(beir_dir), "--home", str(tmp_path / "ws"), "--out", str(out)]
    )
    assert result.exit_code == 0, result.output
    assert "| 設定 | nDCG@10 |" in result.stdout and "| bm25 |" in result.stdout
    assert "0件率" in result.stdout and "zero-hit" not in result.stdout
    assert "埋め込み 0" not in result.stdout and "埋め込み 5" in result.stdout
    for english in ("queries", "judgements", "inserted", "config", "machine"):
        assert english not in result.stdout
    assert (out / "results.md").is_file() and (out / "results.csv").is_file()
    assert f"書き出し: {out / 'results.csv'}" in result.stdout


def test_errors_are_japanese_with_exit_1(app, tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("queries: [{query: a}]\n", encoding="utf-8")
    result = CliRunner().invoke(app, ["eval", str(bad), "--home", str(tmp_path / "ws")])
    assert result.exit_code == 1
    assert "エラー" in result.output and "query と relevant が必要です" in result.output

    j = tmp_path / "j.csv"
    j.write_text("query,relevant\n富士山,fuji\n", encoding="utf-8")
    result = CliRunner().invoke(
        app, ["eval", str(j), "-c", "nothing", "--home", str(tmp_path / "ws")]
    )
    assert result.exit_code == 1 and "コレクション「nothing」が見つかりません" in result.output

    result = CliRunner().invoke(
        app, ["eval", str(j), "--config", str(tmp_path / "none.toml"), "-c", "x"]
    )
    assert result.exit_code == 1 and "評価設定ファイルが見つかりません" in result.output


def test_scratch_collection_is_removed_unless_keep(app, beir_dir: Path, tmp_path: Path) -> None:
    home = tmp_path / "ws"
    args = ["eval", str(beir_dir), "--json", "--home", str(home)]
    assert CliRunner().invoke(app, args).exit_code == 0
    assert tansaku.connect(home).workspace.collection_names() == []
    assert CliRunner().invoke(app, [*args, "--keep"]).exit_code == 0
    assert tansaku.connect(home).workspace.collection_names() == ["eval-mini-ja"]

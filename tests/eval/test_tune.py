"""``tansaku tune``: the fusion refitted on judged queries, cross-validated against the current
config on the same queries; the config changes only when the whole 95% interval is above zero.
Over the bundled cards and their judgements (examples/eval/cards.yaml), hashed embeddings."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

import tansaku
from tansaku.cli.main import app
from tansaku.config import FusionMethod
from tansaku.eval import load_dataset
from tansaku.eval.tune import (
    collect_coverage,
    collect_runs,
    current_setting,
    ndcg,
    settings,
    tune,
    tune_collection,
)
from tansaku.testing import HashEmbedder

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


@pytest.fixture(scope="module")
def home(tmp_path_factory) -> Path:
    ws = tmp_path_factory.mktemp("tune") / "ws"
    with tansaku.connect(ws, embedder=HashEmbedder(32)) as ts:
        report = ts.ingest(
            [EXAMPLES / "cards" / "cards.jsonl"],
            collection="cards",
            config=EXAMPLES / "configs" / "cards.toml",
        )
        assert report.ok
    return ws


def test_ndcg_and_the_grid() -> None:
    from tansaku.config import Axis, AxisMode

    assert ndcg(["a", "b"], {"a": 1}) == 1.0
    assert ndcg(["b", "a"], {"a": 1}) == pytest.approx(1 / 1.5849625)
    assert ndcg(["x"], {"a": 2}) == 0.0
    axes = [Axis(name=n, mode=AxisMode.BM25, fields=("body",), weight=0.5) for n in "abc"]
    grid = settings(axes)
    assert len(grid) == 6 * 66  # 66 splits of 1.0 in tenths over three axes, six fusions
    assert all(abs(sum(w for _, w in s.weights) - 1.0) < 1e-9 for s in grid)


def test_the_current_setting_scores_as_the_engine_ranks(home) -> None:
    """Fusing the axes' own runs again with the current weights gives the engine's ranking."""
    with tansaku.connect(home, embedder=HashEmbedder(32)) as ts:
        config = ts.collection("cards").config
        lengths: dict = {}
        query = {"q": "相手のリーダーにダメージ"}
        runs = collect_runs(ts, "cards", query, team="default", lengths=lengths)
        coverage = collect_coverage(ts, "cards", query, team="default")
        assert config.fusion.dense_gate > 0 and 0 <= coverage["q"] <= 1
        assert config.fusion.dense_length > 0  # and the length weight
        dense = [a.name for a in config.axes if a.mode.value == "dense"]
        assert dense and all(n > 0 for a in dense for n in lengths["q"][a].values())
        fused = current_setting(config).fuse(runs["q"], coverage["q"], lengths["q"])
        engine = ts.search(
            "相手のリーダーにダメージ",
            collection="cards",
            top_k=5,
            group_by_doc=True,
            min_score=0.0,
            expand=False,
            retry=False,
        )
    assert fused[:5] == [h.doc_id for h in engine.hits]


def test_tune_is_cross_validated_and_paired(home) -> None:
    ds = load_dataset(EXAMPLES / "eval" / "cards.yaml")
    with tansaku.connect(home, embedder=HashEmbedder(32)) as ts:
        report = tune_collection(ts, "cards", ds, team="default", folds=4)
    assert report.queries == 19 and report.folds == 4 and len(report.fold_choices) == 4
    assert report.low <= report.delta <= report.high
    assert report.cv_ndcg == pytest.approx(report.current_ndcg + report.delta)
    assert report.in_sample >= report.cv_ndcg - 1e-9  # chosen on the queries it is scored on
    assert "交差検証" in report.summary() and "95%区間" in report.summary()


def test_noise_never_changes_the_config() -> None:
    """Two settings that rank alike: the interval straddles zero, nothing is better."""
    from tansaku.config import Axis, AxisMode, CollectionConfig

    config = CollectionConfig(
        name="c",
        axes=(
            Axis(name="a", mode=AxisMode.BM25, fields=("body",), weight=0.5),
            Axis(name="b", mode=AxisMode.DENSE, fields=("body",), weight=0.5),
        ),
    )
    runs = {
        f"q{i}": {"a": [("d1", 2.0), ("d2", 1.0)], "b": [("d1", 0.9), ("d2", 0.8)]}
        for i in range(6)
    }
    qrels = {f"q{i}": {"d1": 1} for i in range(6)}
    report = tune("c", config, runs, qrels, folds=3)
    assert report.delta == 0 and not report.better
    assert report.current.method is FusionMethod.LINEAR


def test_cli_writes_only_what_is_better(home, monkeypatch) -> None:
    monkeypatch.setenv("TANSAKU_EMBEDDER", "hash")
    monkeypatch.setenv("TANSAKU_EMBED_DIMENSIONS", "32")
    judgements = str(EXAMPLES / "eval" / "cards.yaml")
    args = ["tune", "cards", "-j", judgements, "--home", str(home), "--json", "--write"]
    res = CliRunner().invoke(app, args)
    assert res.exit_code == 0, res.output
    body = json.loads(res.stdout)
    with tansaku.connect(home, embedder=HashEmbedder(32)) as ts:
        weights = {a.name: a.weight for a in ts.collection("cards").config.axes}
    assert body["written"] == body["better"]
    if body["written"]:
        assert body["best"].endswith(" ".join(f"{n}={w:g}" for n, w in weights.items()))
    bad = CliRunner().invoke(
        app, ["tune", "cards", "-j", judgements, "--home", str(home), "--folds", "1"]
    )
    assert bad.exit_code == 2 and "--folds" in bad.stderr

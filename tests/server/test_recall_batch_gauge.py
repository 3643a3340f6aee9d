"""The design's ``recall_batch_gauge``: ``tansaku eval --record`` keeps the accuracy batch
(Recall@10, P@10, MRR, nDCG@10 per configuration) in the workspace, and a running server's
``/metrics`` shows it as ``tansaku_recall_batch{dataset,config,metric}`` at the next scrape."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

import tansaku
from tansaku.cli.eval import register
from tansaku.eval.batch import batch_file, read_batches
from tansaku.testing import HashEmbedder

from .support import KEY_ALPHA

pytestmark = pytest.mark.integration
JUDGED = """name: manuals-batch
collection: manuals
queries:
  - query: 冷蔵庫の温度
    relevant: [fridge]
  - query: 釣り銭を数える
    relevant: [opening]
  - query: アレルギーのお客様
    relevant: [allergy]
"""


def gauge(text: str, dataset: str, config: str, metric: str) -> float:
    labels = f'config="{config}",dataset="{dataset}",metric="{metric}"'
    pattern = rf"^tansaku_recall_batch\{{{re.escape(labels)}\}} (\S+)$"
    found = re.search(pattern, text, re.M)
    assert found, text
    return float(found.group(1))


def test_a_recorded_batch_shows_on_metrics(fresh, tmp_path: Path):
    home = fresh.state.client.workspace.home
    with fresh.client(KEY_ALPHA) as alpha:
        assert "tansaku_recall_batch" not in alpha.get("/metrics").text  # nothing recorded

    judged = tmp_path / "manuals.yaml"
    judged.write_text(JUDGED, encoding="utf-8")
    conf = tmp_path / "bm25.toml"
    conf.write_text('name = "bm25"\n[[axes]]\nname = "kw"\nmode = "bm25"\n', encoding="utf-8")
    app = typer.Typer()

    @app.callback()
    def main() -> None:
        """テスト用のアプリ。"""

    register(app, connect=lambda h: tansaku.connect(h, embedder=HashEmbedder(32)))
    args = ["eval", str(judged), "--config", str(conf), "--team", "alpha", "--home", str(home)]
    done = CliRunner().invoke(app, [*args, "--record", "--json"])
    assert done.exit_code == 0, done.output
    metrics = json.loads(done.stdout)["configs"][0]["metrics"]
    recorded = read_batches(batch_file(home / "logs"))["manuals-batch"]["bm25"]
    assert recorded["recall@10"] == pytest.approx(metrics["recall@10"])

    with fresh.client(KEY_ALPHA) as alpha:
        text = alpha.get("/metrics").text
    assert "# TYPE tansaku_recall_batch gauge" in text
    for metric in ("recall@10", "p@10", "mrr@10", "ndcg@10"):
        value = gauge(text, "manuals-batch", "bm25", metric)
        assert value == pytest.approx(metrics[metric], abs=1e-6)
    assert 'tansaku_recall_batch_timestamp_seconds{config="bm25",dataset="manuals-batch"}' in text

"""``tansaku.maintenance.reembed`` in one process: what it rewrites and what it keeps, searches of
the old model during the run, a model of the same dimension (the copied record store), collections
with nothing to re-embed."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

import tansaku
from tansaku.config import Axis, AxisMode, CollectionConfig
from tansaku.errors import CollectionNotFound, EmbedderMismatch
from tansaku.maintenance.reembed import plan_reembed, reembed
from tansaku.records import Record
from tansaku.store.base import StoredPoint
from tansaku.testing import HashEmbedder

from .conftest import REPORTS, records


class ReversedHashEmbedder(HashEmbedder):
    """Another deterministic model of the same dimension: the hashed n-grams of the reversed
    text (other vectors, another name)."""

    @property
    def name(self) -> str:
        return f"reversed-hash-{self.dim}"

    def _embed(self, texts: Sequence[str]) -> np.ndarray:
        return super()._embed([t[::-1] for t in texts])


# dense vectors for the body only: the title field keeps no dense vector
CONFIG = CollectionConfig(
    name="reports",
    axes=(
        Axis(name="bm25", mode=AxisMode.BM25),
        Axis(name="dense", mode=AxisMode.DENSE, fields=("body",)),
        Axis(name="bigram", mode=AxisMode.BIGRAM),
    ),
)


def with_titles() -> list[Record]:
    titles = [
        Record(id=f"r{i}#title", doc_id=f"r{i}", field="title", text=f"日報 第{i}号")
        for i in range(len(REPORTS))
    ]
    return records() + titles


def dumped(ts: tansaku.Tansaku) -> dict[tuple[str, str], StoredPoint]:
    store = ts.collection("reports").store
    return {(t, p.record.id): p for t, batch in store.dump(batch=7) for p in batch}


def test_reembed_rewrites_dense_vectors_only_and_keeps_the_rest(tmp_path: Path) -> None:
    home = tmp_path / "ws"
    with tansaku.connect(home, embedder=HashEmbedder(32)) as ts:
        for team in ("shinjuku", "shibuya"):
            ts.ingest_records(with_titles(), collection="reports", config=CONFIG, team=team)
        before = dumped(ts)
        units = ts.collection("reports").units.unit_counts(from_shard=True)
        bigram_only = (Axis(name="bigram", mode=AxisMode.BIGRAM),)
        bigram = ts.search("温度", collection="reports", team="shibuya", axes=bigram_only).hits
    new = ReversedHashEmbedder(32)
    with tansaku.connect(home, embedder=new) as ts:
        plan = plan_reembed(ts, "reports")
        assert plan.needed and not plan.rebuild and plan.records == len(before)
        report = reembed(ts, "reports")
        assert report.changed and report.teams == ("shibuya", "shinjuku")
        assert report.written == 2 * len(REPORTS)  # the bodies; titles kept as copied
        assert report.embedded == len(REPORTS)  # the second team's texts: from the cache
        after = dumped(ts)
        col = ts.collection("reports")
        assert (col.state.embedder, col.state.dim) == ("reversed-hash-32", 32)
        assert col.units.unit_counts(from_shard=True) == units
        got = ts.search("温度", collection="reports", team="shibuya", axes=bigram_only).hits
        assert [(h.doc_id, h.score) for h in got] == [(h.doc_id, h.score) for h in bigram]
    assert after.keys() == before.keys()
    for key, old in before.items():
        now = after[key]
        assert (now.record, now.sparse, now.content_hash, now.bm25_len) == (
            old.record,
            old.sparse,
            old.content_hash,
            old.bm25_len,
        )
        if old.record.field == "title":
            assert now.dense is None and old.dense is None
        else:
            want = new.embed_passages([old.record.text])[0]
            assert np.allclose(now.dense, want, atol=1e-6)
            assert not np.allclose(now.dense, old.dense, atol=1e-3)


def test_old_model_searches_keep_working_during_the_run(tmp_path: Path) -> None:
    home = tmp_path / "ws"
    with tansaku.connect(home, embedder=HashEmbedder(32)) as ts:
        ts.ingest_records(records(), collection="reports")
        expected = [(h.doc_id, h.score) for h in ts.search("冷蔵庫", collection="reports").hits]
    seen: list[list[tuple[str, float]]] = []
    refused: list[bool] = []
    with (
        tansaku.connect(home, embedder=HashEmbedder(32), create=False) as old,
        tansaku.connect(home, embedder=HashEmbedder(48), create=False) as new,
    ):

        def during(done: int, total: int) -> None:
            if done > 0:  # after each batch
                hits = old.search("冷蔵庫", collection="reports").hits
                seen.append([(h.doc_id, h.score) for h in hits])
                try:
                    new.search("冷蔵庫", collection="reports")
                    refused.append(False)
                except EmbedderMismatch:
                    refused.append(True)

        report = reembed(new, "reports", progress=during, batch=4)
        assert report.changed and report.plan.rebuild
        assert len(seen) == 3 and all(hits == expected for hits in seen)  # 4 + 4 + 2 records
        assert all(refused)  # the state changes with the commit, not before
        assert new.search("冷蔵庫", collection="reports").hits  # committed: the new model
        with pytest.raises(EmbedderMismatch):
            old.search("冷蔵庫", collection="reports")


def test_nothing_to_do(tmp_path: Path) -> None:
    home = tmp_path / "ws"
    plain = CollectionConfig(name="plain", axes=(Axis(name="bm25", mode=AxisMode.BM25),))
    with tansaku.connect(home, embedder=HashEmbedder(32)) as ts:
        ts.ingest_records(records(), collection="reports")
        ts.ingest_records(records(), collection="plain", config=plain)
        gens = sorted((home / "collections" / "reports" / "gens").iterdir())
        same = reembed(ts, "reports")
        assert not same.changed and same.written == 0
        assert sorted((home / "collections" / "reports" / "gens").iterdir()) == gens
        forced = reembed(ts, "reports", force=True)
        assert forced.changed and forced.written == len(REPORTS) and forced.embedded == 0
    with tansaku.connect(home, embedder=HashEmbedder(48)) as ts:
        no_dense = reembed(ts, "plain")
        assert not no_dense.changed and not no_dense.plan.has_dense
        with pytest.raises(CollectionNotFound):
            reembed(ts, "missing")
        assert not ts.has_collection("missing")

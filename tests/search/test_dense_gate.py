"""The lexical-coverage gate (``[fusion] dense_gate``): where the best BM25 hit holds only part
of the question's words, the dense axes weigh more; where it holds them all, nothing changes."""

from __future__ import annotations

import pytest

import tansaku
from tansaku.config import (
    DEFAULT_AXES,
    Axis,
    AxisMode,
    CollectionConfig,
    FusionConfig,
    FusionMethod,
    QueryConfig,
    config_from_dict,
)
from tansaku.errors import ConfigError
from tansaku.records import Record
from tansaku.search.retrieve import lexical_coverage
from tansaku.store.sparse import query_vector
from tansaku.testing import HashEmbedder
from tansaku.text.analyzer import get_analyzer

DOCS = [
    ("furikomi", "振込手数料は月3回まで無料です。4回目からは1回につき110円かかります。"),
    ("tenkin", "転勤で引っ越す場合は、転出届を旧住所の市役所に提出してください。"),
    ("kyuka", "有給休暇は入社半年後に10日付与されます。申請は前日までに上長へ。"),
]


def _config(name: str, fusion: FusionConfig) -> CollectionConfig:
    return CollectionConfig(name=name, fusion=fusion)


@pytest.fixture
def ts(tmp_path):
    records = [Record(id=f"{d}:body", doc_id=d, field="body", text=t) for d, t in DOCS]
    with tansaku.connect(tmp_path / "home", embedder=HashEmbedder(32)) as client:
        # max normalisation on both, no length weight: a fused score is then the weighted sum
        # of s / best
        gated = FusionConfig(normalization="max", dense_gate=3.0, dense_length=0.0)
        plain = FusionConfig(normalization="max", dense_gate=0.0, dense_length=0.0)
        client.ingest_records(records, collection="gated", config=_config("gated", gated))
        client.ingest_records(records, collection="plain", config=_config("plain", plain))
        yield client


def _coverage(ts, query: str, axes=DEFAULT_AXES) -> float:
    collection = ts.collection("gated")
    terms = get_analyzer().terms(query)
    hits = collection.store.search_sparse("default", query_vector(terms), limit=5, with_text=False)
    runs = {"bm25": [(h.record.doc_id, h) for h in hits]}
    return lexical_coverage(collection, "default", axes, runs, terms)


def test_coverage_is_the_share_of_the_question_terms_in_the_best_bm25_hit(ts) -> None:
    assert _coverage(ts, "振込手数料") == 1.0
    partial = _coverage(ts, "振込手数料は株主優待で割り引かれますか")
    assert 0.0 < partial < 1.0
    assert _coverage(ts, "株主優待") == 0.0  # BM25 finds nothing: no lexical evidence at all


def test_without_a_bm25_axis_or_terms_nothing_is_boosted(ts) -> None:
    dense_only = (Axis(name="dense", mode=AxisMode.DENSE),)
    assert _coverage(ts, "振込手数料は株主優待で", axes=dense_only) == 1.0
    collection = ts.collection("gated")
    axes = CollectionConfig(name="x").axes
    assert lexical_coverage(collection, "default", axes, {"bm25": []}, []) == 1.0


def test_the_plan_reports_the_gate_and_the_coverage(ts) -> None:
    result = ts.search("振込手数料は株主優待で割り引かれますか", collection="gated")
    fusion = result.plan.to_dict()["fusion"]
    assert fusion["dense_gate"] == 3.0
    assert 0.0 < fusion["lexical_coverage"] < 1.0
    assert result.plan.stage.lexical_coverage == pytest.approx(fusion["lexical_coverage"], 1e-3)
    plain = ts.search("振込手数料は株主優待で割り引かれますか", collection="plain")
    assert "dense_gate" not in plain.plan.to_dict()["fusion"]


def test_full_coverage_ranks_as_without_the_gate(ts) -> None:
    for query in ("振込手数料", "有給休暇 申請", "転出届"):
        gated = ts.search(query, collection="gated")
        plain = ts.search(query, collection="plain")
        assert gated.plan.stage.lexical_coverage == 1.0
        assert [h.doc_id for h in gated.hits] == [h.doc_id for h in plain.hits]
        assert [h.score for h in gated.hits] == pytest.approx([h.score for h in plain.hits])


def test_partial_coverage_weighs_the_dense_axis_up(ts) -> None:
    query = "振込手数料は株主優待で割り引かれますか"
    gated = ts.search(query, collection="gated")
    plain = ts.search(query, collection="plain")
    boost = 1.0 + 3.0 * (1.0 - gated.plan.stage.lexical_coverage)
    assert boost > 1.0
    # max normalisation: the dense axis's first hit has 1 on that axis, so its fused score
    # grows by exactly the dense weight's growth (a third, times boost − 1)
    first = next(h for h in plain.hits if h.axes["dense"].rank == 1)
    same = next(h for h in gated.hits if h.doc_id == first.doc_id)
    assert same.score == pytest.approx(first.score + (boost - 1.0) / 3, rel=1e-6)


def test_new_collections_get_zscore_and_the_gate_old_configs_keep_their_ranking() -> None:
    fresh = config_from_dict({"name": "x"}).fusion
    assert (fresh.normalization, fresh.dense_gate) == ("zscore", 3.0)
    assert CollectionConfig(name="x").fusion == fresh
    old = config_from_dict({"name": "x", "fusion": {"method": "linear", "normalization": "max"}})
    assert (old.fusion.normalization, old.fusion.dense_gate) == ("max", 0.0)
    named = config_from_dict({"name": "x", "fusion": {"normalization": "zscore"}})
    assert named.fusion.dense_gate == 0.0  # zscore chosen before the gate existed
    rrf = config_from_dict({"name": "x", "fusion": {"method": "rrf"}}).fusion
    assert rrf.dense_gate == 3.0  # kept, but the gate weighs linear fusion only


def test_the_gate_leaves_rrf_alone(ts) -> None:
    rrf = FusionConfig(method=FusionMethod.RRF, dense_gate=3.0)
    result = ts.search("振込手数料は株主優待で割り引かれますか", collection="gated", fusion=rrf)
    assert result.plan.stage.lexical_coverage is None
    assert "dense_gate" not in result.plan.to_dict()["fusion"]


def test_the_question_phrasing_does_not_count_against_coverage(ts) -> None:
    result = ts.search("振込手数料について教えてほしいのですが", collection="gated")
    assert result.plan.stage.lexical_coverage == 1.0  # 振込, 手数料: both in the best hit


def test_the_setting_is_checked_and_kept(ts) -> None:
    with pytest.raises(ConfigError, match="dense_gate は 0 以上 10 以下"):
        config_from_dict({"name": "x", "fusion": {"dense_gate": 11}})
    with pytest.raises(ConfigError, match=r"\[fusion\] dense_gate は数値"):
        config_from_dict({"name": "x", "fusion": {"dense_gate": "強め"}})
    cfg = config_from_dict({"name": "x", "fusion": {"dense_gate": 2.5}})
    assert config_from_dict(cfg.to_dict()).fusion.dense_gate == 2.5
    assert ts.collection("gated").config.fusion.dense_gate == 3.0


def test_a_synonym_of_a_question_word_in_the_best_hit_covers_it(ts, tmp_path) -> None:
    """送金 and 振込 are one word of the question: the best hit holding 振込 covers 送金, and
    the expansion's added terms (振り込み) are not words the hit must also hold."""
    words = tmp_path / "synonyms.yaml"
    words.write_text("- [振込, 送金, 振り込み]\n", encoding="utf-8")
    records = [Record(id=f"{d}:body", doc_id=d, field="body", text=t) for d, t in DOCS]
    config = CollectionConfig(
        name="syn",
        fusion=FusionConfig(normalization="max", dense_gate=3.0),
        query=QueryConfig(synonyms=(str(words),)),
    )
    ts.ingest_records(records, collection="syn", config=config)
    result = ts.search("送金手数料", collection="syn")
    assert result.plan.to_dict()["synonyms"]  # the expansion happened
    assert result.hits[0].record.doc_id == "furikomi"
    assert result.plan.stage.lexical_coverage == 1.0
    unrelated = ts.search("送金の上限額", collection="syn")  # 上限, 額: in no record
    assert 0.0 < unrelated.plan.stage.lexical_coverage < 1.0

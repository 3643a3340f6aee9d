"""The length weight (``[fusion] dense_length``): a dense axis's normalised score of a record of
fewer BM25 terms than ``dense_length`` is weighed up, at most ``dense_length_max`` times; long
records, records of unknown length, a dense axis alone and configs written before keep their
ranking."""

from __future__ import annotations

import pytest

import tansaku
from tansaku.config import (
    DEFAULT_DENSE_LENGTH,
    Axis,
    AxisMode,
    CollectionConfig,
    FusionConfig,
    FusionMethod,
    config_from_dict,
)
from tansaku.errors import ConfigError
from tansaku.records import Record
from tansaku.search.fusion import linear_fusion, zscore
from tansaku.server.schemas import FusionBody
from tansaku.testing import HashEmbedder

SHORT = [
    ("furikomi", "振込手数料は月3回まで無料です。"),
    ("tenshutsu", "転出届は旧住所の市役所に出してください。"),
    ("kyuka", "有給休暇の申請は前日までに上長へ。"),
    ("chushajo", "来客用の駐車場は建物の裏にあります。"),
]
LONG_SENTENCE = (
    "振込手数料、転出届、有給休暇、駐車場、会議室の予約、備品の発注、名刺の作成、経費の精算、"
    "社内報の原稿、健康診断の日程について、総務部が受け付けている手続きの一覧を示します。"
    "会議室の予約は前週の金曜日までに総務部の共有表へ記入し、備品の発注は月末に締めて翌月の"
    "第一営業日にまとめて行います。名刺の作成には部署名と役職の確認が必要で、届くまでに五営業日"
    "かかります。経費の精算は領収書の原本を添えて翌月五日までに提出し、健康診断の日程は人事部"
    "から個別に連絡します。社内報の原稿は広報担当が毎月十五日に締め切ります。"
)


def _records(rows) -> list[Record]:
    return [Record(id=f"{d}:body", doc_id=d, field="body", text=t) for d, t in rows]


def _config(name: str, **fusion) -> CollectionConfig:
    return CollectionConfig(name=name, fusion=FusionConfig(**fusion))


@pytest.fixture
def ts(tmp_path):
    with tansaku.connect(tmp_path / "home", embedder=HashEmbedder(32)) as client:
        yield client


def test_the_factor_is_clipped_between_one_and_the_maximum() -> None:
    f = FusionConfig(dense_length=80.0, dense_length_power=1.0, dense_length_max=1.5)
    assert f.length_factor(80) == 1.0 and f.length_factor(200) == 1.0  # long: never below 1
    assert f.length_factor(64) == pytest.approx(1.25)
    assert f.length_factor(10) == 1.5 and f.length_factor(1) == 1.5
    assert f.length_factor(0) == 1.0  # unknown length: as before
    assert FusionConfig(dense_length=0.0).length_factor(5) == 1.0  # off
    half = FusionConfig(dense_length=80.0, dense_length_power=0.5, dense_length_max=3.0)
    assert half.length_factor(20) == pytest.approx(2.0)


def test_new_configs_get_the_weight_configs_written_before_keep_their_ranking() -> None:
    fresh = config_from_dict({"name": "x"}).fusion
    assert fresh.dense_length == DEFAULT_DENSE_LENGTH and CollectionConfig(name="x").fusion == fresh
    for written_before in ({"normalization": "zscore"}, {"dense_gate": 3.0}):
        old = config_from_dict({"name": "x", "fusion": {"method": "linear", **written_before}})
        assert old.fusion.dense_length == 0.0
    chosen = config_from_dict({"name": "x", "fusion": {"normalization": "max", "dense_length": 60}})
    assert chosen.fusion.dense_length == 60.0
    again = config_from_dict(chosen.to_dict())  # what a collection's config.toml holds
    assert again.fusion == chosen.fusion


@pytest.mark.parametrize(
    ("key", "value"),
    [("dense_length", -1), ("dense_length_power", 5), ("dense_length_max", 0.5)],
)
def test_out_of_range_settings_are_refused_in_japanese(key, value) -> None:
    with pytest.raises(ConfigError, match=f"\\[fusion\\] {key} は"):
        config_from_dict({"name": "x", "fusion": {key: value}})
    with pytest.raises(ConfigError, match="数値で指定"):
        config_from_dict({"name": "x", "fusion": {key: "長め"}})


def test_the_api_body_follows_the_config_rule() -> None:
    assert FusionBody().length() == DEFAULT_DENSE_LENGTH
    assert FusionBody(normalization="zscore").length() == 0.0
    assert FusionBody(dense_gate=2.0).length() == 0.0
    assert FusionBody(normalization="max", dense_length=50).length() == 50.0


def test_scales_multiply_one_axis_normalised_scores() -> None:
    runs = {
        "bm25": [("a", 3.0), ("b", 2.0), ("c", 1.0)],
        "dense": [("c", 0.9), ("b", 0.8), ("a", 0.1)],
    }
    w = {"bm25": 0.5, "dense": 0.5}
    plain = linear_fusion(runs, w, normalization="zscore")
    scaled = linear_fusion(runs, w, normalization="zscore", scales={"dense": {"c": 1.5}})
    z = zscore(runs["dense"])
    assert scaled["c"] == pytest.approx(plain["c"] + 0.5 * 0.5 * z["c"])
    assert scaled["a"] == plain["a"] and scaled["b"] == plain["b"]


def test_a_short_record_found_by_meaning_moves_up(ts) -> None:
    """Two collections of the same records, the weight on and off: a short record the dense
    axis found gains at most (factor − 1) times its fused score (the dense part of it is
    weighed up, the rest stays); the long record keeps its score; the plan says the weight
    was applied, and each hit's dense axis carries the length it was weighed by."""
    rows = [*SHORT, ("ichiran", LONG_SENTENCE)]
    axes = (Axis(name="bm25", mode=AxisMode.BM25), Axis(name="dense", mode=AxisMode.DENSE))
    on = CollectionConfig(name="on", axes=axes, fusion=FusionConfig(dense_gate=0.0))
    off = CollectionConfig(
        name="off", axes=axes, fusion=FusionConfig(dense_gate=0.0, dense_length=0.0)
    )
    ts.ingest_records(_records(rows), collection="on", config=on)
    ts.ingest_records(_records(rows), collection="off", config=off)
    lengths = {i.record.doc_id: i.bm25_len for i in ts.collection("on").store.scan("default")}
    assert lengths["ichiran"] >= DEFAULT_DENSE_LENGTH > max(lengths[d] for d, _ in SHORT)

    query = "総務部への手続きの申請"
    with_weight = ts.search(query, collection="on", min_score=0.0)
    without = ts.search(query, collection="off", min_score=0.0)
    assert with_weight.plan.to_dict()["fusion"]["dense_length"] == DEFAULT_DENSE_LENGTH
    assert "dense_length" not in without.plan.to_dict()["fusion"]
    before = {h.doc_id: h for h in without.hits}
    factor = FusionConfig().length_factor
    moved = 0
    for hit in with_weight.hits:
        old = before[hit.doc_id]
        if hit.doc_id == "ichiran" or "dense" not in hit.axes:
            assert hit.score == pytest.approx(old.score, rel=1e-9)
            continue
        assert hit.axes["dense"].length == lengths[hit.doc_id]
        gain = hit.score - old.score
        assert 0 < gain <= (factor(lengths[hit.doc_id]) - 1.0) * old.score + 1e-12
        moved += 1
    assert moved >= 1


def test_a_dense_axis_alone_keeps_its_own_ranking(ts) -> None:
    rows = [*SHORT, ("ichiran", LONG_SENTENCE)]
    ts.ingest_records(_records(rows), collection="c")
    dense = (Axis(name="dense", mode=AxisMode.DENSE),)
    query = "市役所に出す届"
    on = ts.search(query, collection="c", axes=dense, min_score=0.0)
    off = ts.search(
        query,
        collection="c",
        axes=dense,
        min_score=0.0,
        fusion=FusionConfig(dense_length=0.0),
    )
    assert [(h.doc_id, h.score) for h in on.hits] == [(h.doc_id, h.score) for h in off.hits]


def test_rrf_is_left_alone(ts) -> None:
    ts.ingest_records(_records(SHORT), collection="c")
    rrf = ts.search("振込手数料", collection="c", fusion=FusionConfig(method=FusionMethod.RRF))
    assert "dense_length" not in rrf.plan.to_dict()["fusion"]

"""Searching with a ``bigram`` axis: best sentence per record, fused with the other axes."""

from __future__ import annotations

import pytest

import tansaku
from tansaku.config import Axis, AxisMode, CollectionConfig
from tansaku.records import Record
from tansaku.store.base import Filter
from tansaku.testing import HashEmbedder


def rec(doc: str, n: int, text: str, title: str, store: str) -> Record:
    return Record(
        id=f"{doc}#{n}",
        doc_id=doc,
        field="body",
        text=text,
        metadata={"title": title, "store": store},
    )


RECORDS = [
    rec("rain", 0, "梅雨は北海道を除く日本で見られる。各地で雨の多い期間が続く。", "梅雨", "本店"),
    rec("rain", 1, "梅雨前線が停滞すると大雨になりやすい。沖縄では5月に始まる。", "梅雨", "本店"),
    rec(
        "parking",
        0,
        "駐車場は店舗裏に10台分あります。満車のときは近隣をご案内します。",
        "駐車場",
        "駅前店",
    ),
    rec(
        "claims",
        0,
        "料理が冷めているというクレームには、まずお詫びして作り直します。",
        "クレーム対応",
        "駅前店",
    ),
]
AXES = (
    Axis(name="bm25", mode=AxisMode.BM25, weight=1 / 3),
    Axis(name="dense", mode=AxisMode.DENSE, weight=1 / 3),
    Axis(name="bigram", mode=AxisMode.BIGRAM, weight=1 / 3),
)


@pytest.fixture
def ts(tmp_path):
    with tansaku.connect(tmp_path / "home", embedder=HashEmbedder(32)) as client:
        client.ingest_records(
            RECORDS,
            collection="kb",
            config=CollectionConfig(name="kb", axes=AXES, group_by_doc=False),
        )
        yield client


def test_hits_carry_text_and_the_bigram_axis_score(ts) -> None:
    res = ts.search("梅雨前線が停滞するとどうなる", collection="kb")
    top = res.hits[0]
    assert top.record.id == "rain#1"
    assert top.record.text.startswith("梅雨前線が停滞")
    assert top.axes["bigram"].rank == 1 and top.axes["bigram"].score > 0
    assert [a.name for a in res.plan.stage.axes] == ["bm25", "dense", "bigram"]


def test_a_bigram_only_axis_reads_the_record_text(ts) -> None:
    res = ts.search(
        "クレームへのおわび",
        collection="kb",
        axes=(Axis(name="bigram", mode=AxisMode.BIGRAM),),
    )
    assert [h.record.id for h in res.hits][:1] == ["claims#0"]
    assert "お詫び" in res.hits[0].record.text
    assert res.hits[0].record.metadata["store"] == "駅前店"


def test_bigram_matches_where_the_analyzer_sees_no_shared_term(ts) -> None:
    # the bigram 駐車 matches inside 駐車場 whatever the analyzer makes of either word
    res = ts.search("駐車", collection="kb", axes=(Axis(name="bigram", mode=AxisMode.BIGRAM),))
    assert [h.record.id for h in res.hits] == ["parking#0"]


def test_filters_and_teams_apply_to_the_bigram_axis(ts) -> None:
    only_bigram = (Axis(name="bigram", mode=AxisMode.BIGRAM),)
    res = ts.search(
        "梅雨の駐車場",
        collection="kb",
        axes=only_bigram,
        filter=Filter(equals={"store": "駅前店"}),
    )
    assert {h.record.id for h in res.hits} == {"parking#0"}
    assert ts.search("梅雨", collection="kb", team="other", axes=only_bigram).hits == ()


def test_grouping_by_document_keeps_one_hit_per_document(ts) -> None:
    res = ts.search("梅雨前線と雨", collection="kb", group_by_doc=True)
    docs = [h.doc_id for h in res.hits]
    assert docs[0] == "rain" and len(docs) == len(set(docs))

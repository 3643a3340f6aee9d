"""The ingest pipeline keeps the sentence units of ``bigram`` axes in step with the records."""

from __future__ import annotations

import shutil
from dataclasses import replace

import pytest

import tansaku
from tansaku.config import Axis, AxisMode, CollectionConfig
from tansaku.records import Record
from tansaku.testing import HashEmbedder

BIGRAM_CONFIG = CollectionConfig(
    name="faq",
    axes=(
        Axis(name="bm25", mode=AxisMode.BM25, weight=0.5),
        Axis(name="bigram", mode=AxisMode.BIGRAM, weight=0.5),
    ),
)


def rec(doc: str, text: str, title: str = "") -> Record:
    return Record(id=f"{doc}#0", doc_id=doc, field="body", text=text, metadata={"title": title})


RECORDS = [
    rec("rain", "梅雨は北海道を除く日本で見られる。梅雨前線が停滞すると雨が続く。", "梅雨"),
    rec("parking", "駐車場は店舗裏に10台分あります。満車のときは近隣をご案内します。", "駐車場"),
]


@pytest.fixture
def ts(tmp_path):
    with tansaku.connect(tmp_path / "home", embedder=HashEmbedder(32)) as client:
        yield client


def units_of(ts: tansaku.Tansaku, team: str = "default") -> int:
    return ts.collection("faq").units.count(team)


def test_units_follow_inserts_updates_and_deletes(ts) -> None:
    ts.ingest_records(RECORDS, collection="faq", config=BIGRAM_CONFIG)
    assert units_of(ts) == 4
    assert "default" in ts.collection("faq").state.units

    again = ts.ingest_records(RECORDS, collection="faq", config=BIGRAM_CONFIG)
    assert again.unchanged == 2 and units_of(ts) == 4  # a no-op re-ingest writes nothing

    changed = [replace(RECORDS[0], text="梅雨は雨季である。"), RECORDS[1]]
    ts.ingest_records(changed, collection="faq", config=BIGRAM_CONFIG)
    assert units_of(ts) == 3

    ts.ingest_records(RECORDS[1:], collection="faq", config=BIGRAM_CONFIG, sync=True)
    assert units_of(ts) == 2


def test_units_are_built_for_a_collection_that_gains_a_bigram_axis(ts) -> None:
    plain = replace(BIGRAM_CONFIG, axes=(Axis(name="bm25", mode=AxisMode.BM25),))
    ts.ingest_records(RECORDS, collection="faq", config=plain)
    col = ts.collection("faq")
    assert not col.needs_units and "default" not in col.state.units

    ts.create_collection(BIGRAM_CONFIG, replace_config=True)
    report = ts.ingest_records(RECORDS, collection="faq")
    assert report.unchanged == 2  # nothing re-embedded or rewritten, but the units were built
    assert units_of(ts) == 4 and "default" in ts.collection("faq").state.units


def test_units_are_per_team(ts) -> None:
    ts.ingest_records(RECORDS, collection="faq", config=BIGRAM_CONFIG, team="team-a")
    ts.ingest_records(RECORDS[:1], collection="faq", config=BIGRAM_CONFIG, team="team-b")
    assert units_of(ts, "team-a") == 4
    assert units_of(ts, "team-b") == 2


def test_units_state_survives_reopen(tmp_path) -> None:
    with tansaku.connect(tmp_path / "home", embedder=HashEmbedder(32)) as ts:
        ts.ingest_records(RECORDS, collection="faq", config=BIGRAM_CONFIG)
    with tansaku.connect(tmp_path / "home", embedder=HashEmbedder(32)) as ts:
        col = ts.collection("faq")
        assert "default" in col.state.units and col.units.count("default") == 4


def test_a_removed_unit_folder_is_rebuilt_by_the_next_ingest(tmp_path) -> None:
    with tansaku.connect(tmp_path / "home", embedder=HashEmbedder(32)) as ts:
        ts.ingest_records(RECORDS, collection="faq", config=BIGRAM_CONFIG)
        gen = ts.collection("faq").gen
    shutil.rmtree(gen / "units")
    with tansaku.connect(tmp_path / "home", embedder=HashEmbedder(32)) as ts:
        only_bigram = (Axis(name="bigram", mode=AxisMode.BIGRAM),)
        assert ts.search("梅雨前線", collection="faq", axes=only_bigram).hits == ()
        ts.ingest_records(RECORDS, collection="faq")
        hits = ts.search("梅雨前線", collection="faq", axes=only_bigram).hits
        assert [h.doc_id for h in hits] == ["rain"]

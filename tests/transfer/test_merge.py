"""``merge_collections``: records keep their ids and vectors (nothing re-embedded), a document
is taken whole, ``skip`` keeps what the destination has, ``overwrite`` replaces it, a team
merges only its own records, and bad requests say what is wrong in Japanese."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import tansaku
from tansaku.config import Axis, AxisMode, CollectionConfig
from tansaku.embed.hash import HashEmbedder
from tansaku.errors import CollectionNotFound, InvalidRequest
from tansaku.records import Record
from tansaku.transfer.merge import Conflict, merge_collections

DIM = 16
AXES = (Axis(name="kw", mode=AxisMode.BM25), Axis(name="vec", mode=AxisMode.DENSE))


def rec(doc: str, text: str, n: int = 0, title: str = "") -> Record:
    return Record(
        id=f"{doc}:body:{n}",
        doc_id=doc,
        field="body",
        text=text,
        metadata={"title": title or doc, "store": "新宿店"},
    )


SPRING = [
    rec("fridge", "冷蔵庫の温度が上がらず、食材の一部を廃棄した。", title="冷蔵庫の故障"),
    rec("fridge", "業者に修理を依頼し、翌日に部品を交換した。", 1, title="冷蔵庫の故障"),
    rec("claim", "お客様から料理の提供が遅いとのクレームがあった。", title="提供遅れ"),
]
SUMMER = [
    rec("washer", "食洗機から水漏れがあり、床が濡れていた。", title="食洗機の水漏れ"),
    rec("fridge", "冷蔵庫の霜取りを行い、温度が戻った。", title="冷蔵庫の霜取り"),
]


def connect(home: Path, embedder: HashEmbedder | None = None) -> tansaku.Tansaku:
    return tansaku.connect(home, embedder=embedder or HashEmbedder(DIM))


@pytest.fixture
def home(tmp_path: Path) -> Path:
    home = tmp_path / "ws"
    with connect(home) as ts:
        for name, recs in (("spring", SPRING), ("summer", SUMMER)):
            cfg = CollectionConfig(name=name, description=f"{name} の日報", axes=AXES)
            ts.ingest_records(recs, collection=name, team="alpha", config=cfg)
        ts.ingest_records(
            [rec("vault", "ベータ社の金庫は閉店後に二人で施錠する。")],
            collection="spring",
            team="beta",
        )
    return home


def texts(ts: tansaku.Tansaku, name: str, team: str) -> dict[str, str]:
    with ts.reading(name) as col:
        return {row.record.id: row.record.text for row in col.store.scan(team, with_text=True)}


def vectors(ts: tansaku.Tansaku, name: str) -> dict[tuple[str, str], np.ndarray]:
    with ts.reading(name) as col:
        return {
            (team, p.record.id): p.dense
            for team, points in col.store.dump()
            for p in points
            if p.dense is not None
        }


def test_merge_into_a_new_collection_keeps_ids_and_vectors_without_embedding(home: Path):
    (home / "cache" / "embeddings.sqlite").unlink()  # the vectors can only come from the stores
    embedder = HashEmbedder(DIM)
    with connect(home, embedder) as ts:
        report = merge_collections(ts, ["spring", "summer"], "yearly")
        assert embedder.texts_embedded == 0
        assert report.embedded == 0
        assert report.created
        assert report.conflict is Conflict.SKIP
        # summer's 「fridge」 is spring's document too: the first source gives it
        assert (report.documents, report.skipped, report.replaced) == (4, 1, 0)
        assert report.teams == {"alpha": 4, "beta": 1}
        assert texts(ts, "yearly", "alpha") == {
            "fridge:body:0": SPRING[0].text,
            "fridge:body:1": SPRING[1].text,
            "claim:body:0": SPRING[2].text,
            "washer:body:0": SUMMER[0].text,
        }
        assert list(texts(ts, "yearly", "beta")) == ["vault:body:0"]
        assert ts.collection("yearly").config.axes == AXES
        assert ts.collection("yearly").config.description == "spring の日報"
        merged = vectors(ts, "yearly")
        before = vectors(ts, "summer") | vectors(ts, "spring")  # spring gave 「fridge」
        for key, vec in merged.items():
            np.testing.assert_allclose(vec, before[key], atol=1e-6)
        hits = ts.search("食洗機の水漏れ", collection="yearly", team="alpha").hits
        assert hits[0].doc_id == "washer"
        assert texts(ts, "spring", "alpha")["fridge:body:0"] == SPRING[0].text  # sources stay
        assert texts(ts, "summer", "alpha")["fridge:body:0"] == SUMMER[1].text


def test_skip_keeps_the_destinations_document(home: Path):
    with connect(home) as ts:
        report = merge_collections(ts, ["spring"], "summer", team="alpha")
        assert (report.documents, report.skipped, report.replaced) == (1, 1, 0)
        assert report.inserted == 1  # 「claim」
        assert texts(ts, "summer", "alpha") == {
            "washer:body:0": SUMMER[0].text,
            "fridge:body:0": SUMMER[1].text,  # summer's own 「fridge」 stays whole
            "claim:body:0": SPRING[2].text,
        }


def test_overwrite_replaces_the_whole_document(home: Path):
    with connect(home) as ts:
        report = merge_collections(ts, ["summer"], "spring", team="alpha", conflict="overwrite")
        assert (report.documents, report.skipped, report.replaced) == (2, 0, 1)
        assert (report.inserted, report.updated, report.deleted) == (1, 1, 1)
        assert texts(ts, "spring", "alpha") == {
            "fridge:body:0": SUMMER[1].text,  # spring's second chunk of 「fridge」 is gone
            "claim:body:0": SPRING[2].text,
            "washer:body:0": SUMMER[0].text,
        }
        hits = ts.search("霜取り", collection="spring", team="alpha", axes=AXES[:1]).hits
        assert hits[0].doc_id == "fridge"  # the new text is what the index holds


def test_a_team_merges_only_its_own_records(home: Path):
    with connect(home) as ts:
        report = merge_collections(ts, ["spring"], "mine", team="beta")
        assert report.teams == {"beta": 1}
        assert texts(ts, "mine", "alpha") == {}
        assert list(texts(ts, "mine", "beta")) == ["vault:body:0"]


def test_bad_requests_are_refused_before_anything_is_written(home: Path):
    with connect(home) as ts:
        with pytest.raises(InvalidRequest, match="自分自身"):
            merge_collections(ts, ["spring", "summer"], "spring")
        with pytest.raises(InvalidRequest, match="1つ以上"):
            merge_collections(ts, [], "yearly")
        with pytest.raises(InvalidRequest, match="skip / overwrite"):
            merge_collections(ts, ["spring"], "yearly", conflict="replace")
        with pytest.raises(CollectionNotFound, match="autumn"):
            merge_collections(ts, ["spring", "autumn"], "yearly")
        assert not ts.has_collection("yearly")

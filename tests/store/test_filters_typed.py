"""Typed metadata conditions (``Filter.where``) on the embedded store: every value type, ranges,
lists, mixed stored types, and the sample the search layer types conditions from."""

from __future__ import annotations

from datetime import date

import pytest

from tansaku.records import Record
from tansaku.store.base import Filter, MetaCondition, StoredPoint
from tansaku.store.edge import EdgeStore
from tansaku.store.sparse import doc_vector
from tansaku.testing import HashEmbedder

DIM = 16
# (id, text, metadata): cost is an int (a string in c5, as a CSV would store it), price a float,
# foil a bool, released an ISO date string (a datetime in c4), date the indexed report date
CARDS = [
    ("c1", "相手のフォロワー1体に2ダメージ", {"cost": 1, "price": 1.5, "foil": True}),
    ("c2", "カードを1枚引く", {"cost": 2, "price": 3.0, "foil": False, "date": "2025-12-01"}),
    ("c3", "自分のリーダーを2回復する", {"cost": 3, "released": "2025-12-09"}),
    ("c4", "相手のリーダーに3ダメージ", {"cost": 5, "released": "2025-12-10T09:30:00"}),
    ("c5", "守護 ラストワード", {"cost": "3", "store": "新宿店", "date": "2025-12-10"}),
]


def _points() -> list[StoredPoint]:
    emb = HashEmbedder(DIM)
    out = []
    for rid, text, meta in CARDS:
        rec = Record(id=f"{rid}:body", doc_id=rid, field="body", text=text, metadata=meta)
        terms = [text[i : i + 2] for i in range(len(text) - 1)]
        sparse = doc_vector(terms, k1=0.9, b=0.4, avgdl=10.0)
        vec = emb.embed_passages([text])[0]
        out.append(StoredPoint(rec, sparse, vec, rec.content_hash(), len(terms)))
    return out


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    s = EdgeStore(tmp_path_factory.mktemp("typed") / "shard", dim=DIM)
    s.upsert("team-a", _points())
    s.upsert("team-b", _points()[:1])
    yield s
    s.close()


def _ids(store: EdgeStore, *conds: MetaCondition, **flt: object) -> list[str]:
    rows = store.scan("team-a", Filter(where=conds, **flt))  # type: ignore[arg-type]
    return sorted(r.record.doc_id for r in rows)


def test_int_equals_matches_the_integer_not_the_string(store):
    assert _ids(store, MetaCondition(key="cost", values=(3,))) == ["c3"]
    assert _ids(store, MetaCondition(key="cost", values=("3",))) == ["c5"]
    # mixed stored types: both values, one condition (a should group)
    assert _ids(store, MetaCondition(key="cost", values=(3, "3"))) == ["c3", "c5"]


def test_int_list_and_ranges(store):
    assert _ids(store, MetaCondition(key="cost", values=(1, 2))) == ["c1", "c2"]
    assert _ids(store, MetaCondition(key="cost", lte=3)) == ["c1", "c2", "c3"]
    assert _ids(store, MetaCondition(key="cost", gte=2), MetaCondition(key="cost", lt=5)) == [
        "c2",
        "c3",
    ]
    assert _ids(store, MetaCondition(key="cost", gt=3)) == ["c4"]


def test_float_equality_and_range(store):
    assert _ids(store, MetaCondition(key="price", values=(3.0,))) == ["c2"]
    assert _ids(store, MetaCondition(key="price", lt=2)) == ["c1"]
    # a float condition matches an int equal to it
    assert _ids(store, MetaCondition(key="cost", values=(5.0,))) == ["c4"]


def test_bool_equals_matches_stored_booleans(store):
    # the binding turns Python bools into 1/0; the store works around it
    assert _ids(store, MetaCondition(key="foil", values=(True,))) == ["c1"]
    assert _ids(store, MetaCondition(key="foil", values=(False,))) == ["c2"]
    assert sorted(r.record.doc_id for r in store.scan("team-a", Filter(equals={"foil": True}))) == [
        "c1"
    ]


def test_dates_on_other_keys_cover_the_whole_day(store):
    day = date(2025, 12, 10)
    assert _ids(store, MetaCondition(key="released", values=(day,))) == ["c4"]
    assert _ids(store, MetaCondition(key="released", lte=date(2025, 12, 9))) == ["c3"]
    assert _ids(store, MetaCondition(key="released", gt=date(2025, 12, 9))) == ["c4"]
    assert _ids(store, MetaCondition(key="released", gte=date(2025, 12, 9))) == ["c3", "c4"]


def test_dates_on_date_use_the_date_index(store):
    assert _ids(store, MetaCondition(key="date", gte=date(2025, 12, 2))) == ["c5"]
    assert _ids(store, MetaCondition(key="date", values=(date(2025, 12, 1),))) == ["c2"]


def test_where_combines_with_the_other_conditions_and_the_tenant(store):
    assert _ids(store, MetaCondition(key="cost", lte=5), doc_ids=("c1", "c4")) == ["c1", "c4"]
    assert store.count("team-b", Filter(where=(MetaCondition(key="cost", lte=5),))) == 1


def test_metadata_sample_types_and_missing_keys(store):
    sample = store.metadata_sample("team-a", ["cost", "store", "nosuch"], limit=10)
    assert sorted(sample["cost"], key=repr) == ["3", 1, 2, 3, 5]
    assert sample["store"] == ["新宿店"]
    assert "nosuch" not in sample
    keys = store.metadata_sample("team-a")
    assert {"cost", "price", "foil", "released", "store", "date"} == set(keys)
    assert store.metadata_sample("team-b", ["store"]) == {}  # team-b's only card has no store


def test_meta_condition_rejects_what_cannot_match():
    with pytest.raises(ValueError, match="どちらか一方"):
        MetaCondition(key="cost")
    with pytest.raises(ValueError, match="どちらか一方"):
        MetaCondition(key="cost", values=(1,), lte=3)
    with pytest.raises(ValueError, match="nan"):
        MetaCondition(key="cost", lte=float("nan"))
    with pytest.raises(ValueError, match="数値か日付"):
        MetaCondition(key="cost", gte=1, lte=date(2025, 1, 1))
    with pytest.raises(ValueError, match="数値か日付"):
        MetaCondition(key="foil", gte=True)

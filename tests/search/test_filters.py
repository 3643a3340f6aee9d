"""Metadata filters typed as stored (``where``), unknown keys and fields, and the date filter in
the plan — over the bundled cards and generated daily reports (HashEmbedder: no model)."""

from __future__ import annotations

from datetime import date, datetime
from pathlib import Path

import pytest

import tansaku
from tansaku.demo.reports import generate, write_reports_jsonl
from tansaku.errors import InvalidRequest, UnknownName
from tansaku.search.filters import (
    Kind,
    Op,
    WhereClause,
    describe,
    kinds_of,
    parse_where,
    typed_condition,
)
from tansaku.search.plan import DateFilterPlan, FilterPlan
from tansaku.store.base import Filter, MetaCondition
from tansaku.testing import HashEmbedder
from tansaku.text.dates import TOKYO

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
NOW = datetime(2025, 12, 11, 9, 0, tzinfo=TOKYO)
INTS = frozenset({Kind.INT})


@pytest.fixture(scope="module")
def cards(tmp_path_factory):
    client = tansaku.connect(tmp_path_factory.mktemp("cards"), embedder=HashEmbedder(32))
    report = client.ingest(
        [EXAMPLES / "cards" / "cards.jsonl"],
        collection="cards",
        config=EXAMPLES / "configs" / "cards.toml",
    )
    assert report.ok
    yield client
    client.close()


@pytest.fixture(scope="module")
def reports(tmp_path_factory):
    home = tmp_path_factory.mktemp("reports")
    src = write_reports_jsonl(generate(NOW), home / "reports.jsonl")
    client = tansaku.connect(home, embedder=HashEmbedder(32))
    assert client.ingest([src], collection="reports", config=EXAMPLES / "configs/reports.toml").ok
    client.ingest_records(
        [tansaku.Record(id="m:body", doc_id="m", field="body", text="昨日の清掃手順")],
        collection="manuals",
    )
    yield client
    client.close()


def _costs(result) -> list[int]:
    return [h.record.metadata["cost"] for h in result.hits]


# -- parsing and typing (pure) -------------------------------------------------------------


def test_parse_where_operators_lists_and_full_width():
    assert parse_where("cost<=3") == WhereClause("cost", Op.LTE, ("3",))
    assert parse_where(" cost >= 2 ") == WhereClause("cost", Op.GTE, ("2",))
    assert parse_where("cost<5") == WhereClause("cost", Op.LT, ("5",))
    assert parse_where("store=新宿店,渋谷店") == WhereClause("store", Op.EQ, ("新宿店", "渋谷店"))
    assert parse_where("store＝新宿店，渋谷店") == WhereClause("store", Op.EQ, ("新宿店", "渋谷店"))
    assert parse_where("cost≦3") == WhereClause("cost", Op.LTE, ("3",))
    assert parse_where("cost＞＝3") == WhereClause("cost", Op.GTE, ("3",))
    assert str(parse_where("date>=2025-12-01")) == "date>=2025-12-01"


@pytest.mark.parametrize(
    ("expr", "message"),
    [
        ("cost", "キー=値"),
        ("=3", "キー=値"),
        ("cost=", "キー=値"),
        ("cost=,", "値がありません"),
        ("cost<=1,2", "値を1つだけ"),
        ("meta.cost=3", "使えません"),
    ],
)
def test_bad_where_expressions_are_rejected(expr, message):
    with pytest.raises(InvalidRequest, match=message):
        parse_where(expr)
    with pytest.raises(InvalidRequest):  # already when the request is built
        tansaku.SearchRequest(query="ダメージ", collection="cards", where=(expr,))


def test_values_are_typed_as_the_key_is_stored():
    assert kinds_of([3, 5, "3", True, 1.5, "2025-12-10", ["a"]]) == frozenset(Kind)
    assert typed_condition(parse_where("cost=3"), INTS) == MetaCondition(key="cost", values=(3,))
    assert typed_condition(parse_where("cost=３"), INTS).values == (3,)  # full-width digit
    mixed = frozenset({Kind.INT, Kind.STR})
    assert typed_condition(parse_where("cost=3"), mixed).values == (3, "3")
    floats = frozenset({Kind.FLOAT, Kind.INT})
    assert typed_condition(parse_where("price=3"), floats).values == (3.0,)
    bools = frozenset({Kind.BOOL})
    assert typed_condition(parse_where("claim=true,0"), bools).values == (True, False)
    days = frozenset({Kind.DATE})
    assert typed_condition(parse_where("date<2025-12-01"), days).lt == date(2025, 12, 1)
    assert typed_condition(parse_where("cost<=3"), INTS).lte == 3
    assert describe(MetaCondition(key="cost", gte=2, lte=4)) == ["cost>=2", "cost<=4"]


def test_values_the_stored_type_cannot_hold_are_rejected():
    with pytest.raises(InvalidRequest, match="「cost」は整数の項目です。「abc」"):
        typed_condition(parse_where("cost=abc"), INTS)
    with pytest.raises(InvalidRequest, match="範囲"):
        typed_condition(parse_where("store<=3"), frozenset({Kind.STR}))
    with pytest.raises(InvalidRequest, match="nan"):
        typed_condition(parse_where("cost<=nan"), INTS)


# -- on the cards: cost is stored as an integer ----------------------------------------------


def test_where_cost_equals_int(cards):
    res = cards.search("ダメージ", collection="cards", where=("cost=3",), top_k=50)
    assert res.hits and set(_costs(res)) == {3}
    assert res.plan.filter == FilterPlan(where=("cost=3",))
    # the Filter API of earlier versions: a string value on an int key is typed too
    legacy = cards.search("ダメージ", collection="cards", filter=Filter(equals={"cost": "3"}))
    assert legacy.hits and set(_costs(legacy)) == {3}


def test_where_cost_range(cards):
    low = cards.search("ダメージ", collection="cards", where=("cost<=3",), top_k=50)
    assert low.hits and max(_costs(low)) <= 3 and len(set(_costs(low))) > 1
    band = cards.search("ダメージ", collection="cards", where=("cost>=2", "cost<5"), top_k=50)
    assert band.hits and set(_costs(band)) <= {2, 3, 4} and len(set(_costs(band))) > 1
    everything = cards.search("ダメージ", collection="cards", top_k=50)
    in_band = [h.doc_id for h in everything.hits if 2 <= h.record.metadata["cost"] < 5]
    assert {h.doc_id for h in band.hits} >= set(in_band)


def test_where_lists(cards):
    res = cards.search("ダメージ", collection="cards", where=("cost=1,2",), top_k=50)
    assert res.hits and set(_costs(res)) == {1, 2}
    classes = cards.search("ダメージ", collection="cards", where=("class=ウィッチ,エルフ",))
    assert classes.hits
    assert {h.record.metadata["class"] for h in classes.hits} <= {"ウィッチ", "エルフ"}


def test_where_unknown_key_message(cards):
    with pytest.raises(UnknownName) as info:
        cards.search("ダメージ", collection="cards", where=("mana=3",))
    message = str(info.value)
    assert "メタデータのキー「mana」" in message and "コレクション「cards」" in message
    assert "cost" in message and "rarity" in message  # the keys that exist
    assert info.value.name == "mana" and "cost" in info.value.available
    with pytest.raises(UnknownName, match="mana"):  # the Filter API is checked too
        cards.search("ダメージ", collection="cards", filter=Filter(equals={"mana": 3}))


def test_unknown_field_is_rejected(cards):
    with pytest.raises(UnknownName) as info:
        cards.search("ダメージ", collection="cards", filter=Filter(fields=("nosuch",)))
    assert "フィールド「nosuch」" in str(info.value)
    assert {"effect_1", "combined", "flavorText"} <= set(info.value.available)
    ok = cards.search("ダメージ", collection="cards", filter=Filter(fields=("effect_1",)))
    assert ok.hits


def test_wrong_type_value_on_the_cards_is_rejected(cards):
    with pytest.raises(InvalidRequest, match="整数"):
        cards.search("ダメージ", collection="cards", where=("cost=たくさん",))
    with pytest.raises(InvalidRequest, match="範囲"):
        cards.search("ダメージ", collection="cards", where=("rarity>=3",))


def test_a_team_without_records_is_not_checked(cards):
    res = cards.search("ダメージ", collection="cards", team="nobody", where=("mana=3",))
    assert res.hits == ()


# -- on the reports: dates, booleans, stores --------------------------------------------------


def test_plan_shows_date_filter(reports):
    res = reports.search("昨日のクレーム", collection="reports", now=NOW)
    expected = {"from": "2025-12-10", "to": "2025-12-10", "source": "query", "expression": "昨日"}
    day = date(2025, 12, 10)
    assert res.plan.date_filter == DateFilterPlan(day, day, "query", "昨日")
    assert res.to_dict()["plan"]["date_filter"] == expected
    assert res.plan.date_unused is None
    assert res.hits and {h.record.metadata["date"] for h in res.hits} == {"2025-12-10"}
    slash = reports.search("12/9のクレーム", collection="reports", now=NOW)
    slash_dates = slash.plan.date_filter
    assert slash_dates is not None and slash_dates.expression == "12/9"
    assert slash_dates.start == date(2025, 12, 9)


def test_date_conditions_are_the_date_filter_and_win_over_the_query(reports):
    res = reports.search(
        "昨日のクレーム", collection="reports", now=NOW, where=("date>=2025-12-08",), top_k=50
    )
    assert res.plan.date_filter == DateFilterPlan(date(2025, 12, 8), None, "filter")
    assert res.to_dict()["plan"]["date_filter"] == {
        "from": "2025-12-08",
        "to": None,
        "source": "filter",
    }
    assert res.to_dict()["plan"]["date_unused"] == {
        "from": "2025-12-10",
        "to": "2025-12-10",
        "expression": "昨日",
        "reason": "filter",
    }
    assert res.hits and min(h.record.metadata["date"] for h in res.hits) >= "2025-12-08"
    band = reports.search(
        "売上", collection="reports", where=("date>2025-12-01", "date<2025-12-04"), top_k=50
    )
    assert band.plan.filter.date_from == date(2025, 12, 2)
    assert band.plan.filter.date_to == date(2025, 12, 3)
    assert {h.record.metadata["date"] for h in band.hits} <= {"2025-12-02", "2025-12-03"}
    with pytest.raises(InvalidRequest, match="矛盾"):
        reports.search("売上", collection="reports", where=("date>=2025-12-10", "date<2025-12-01"))


def test_date_expression_on_a_collection_without_dates_is_reported(reports):
    res = reports.search("昨日の清掃", collection="manuals", now=NOW)
    assert res.plan.date_filter is None
    assert res.plan.date_unused is not None and res.plan.date_unused.reason == "no_dates"
    assert res.hits


def test_where_bool_int_and_store_lists_on_reports(reports):
    claims = reports.search("お客様", collection="reports", where=("claim=true",), top_k=30)
    assert claims.hits and {h.record.metadata["claim"] for h in claims.hits} == {True}
    big = reports.search("売上", collection="reports", where=("sales>=500000",), top_k=30)
    assert big.hits and min(h.record.metadata["sales"] for h in big.hits) >= 500000
    stores = reports.search("売上", collection="reports", where=("store=新宿店,渋谷店",))
    assert stores.hits
    assert {h.record.metadata["store"] for h in stores.hits} <= {"新宿店", "渋谷店"}


def test_an_axis_query_replaces_the_query_on_that_axis_only(cards) -> None:
    """``axis_queries``: the keyword axis searches for its own words, the others for the query;
    the plan says which text each axis read, and an axis the search lacks is refused."""
    kw = {"collection": "cards", "top_k": 20, "synonyms": False, "expand": False}
    plain = cards.search("守護", **kw)
    own = cards.search("守護", **kw, axis_queries=(("effect_keyword", "疾走"),))
    assert [h.doc_id for h in plain.hits] != [h.doc_id for h in own.hits]
    first = [
        h
        for h in own.hits
        if h.axes.get("effect_keyword", None) and h.axes["effect_keyword"].rank == 1
    ]
    assert first and "疾走" in first[0].record.text  # the keyword axis's best: 疾走, not 守護
    queries = {a.name: a.query for a in own.plan.stage.axes}
    assert queries == {"effect_keyword": "疾走", "effect_semantic": "", "combined": ""}
    with pytest.raises(InvalidRequest, match="effect_keyword"):
        cards.search("守護", collection="cards", axis_queries=(("nope", "疾走"),))

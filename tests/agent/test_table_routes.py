"""Store and event questions answered offline through SQL templates on the demo tables."""

from __future__ import annotations

from datetime import datetime
from zoneinfo import ZoneInfo

import pytest

import tansaku
from tansaku.agent.offline import answer_offline
from tansaku.agent.table_routes import plan
from tansaku.tools import toolset

NOW = datetime(2025, 10, 1, 10, 0, tzinfo=ZoneInfo("Asia/Tokyo"))  # a Wednesday
BOTH = {"search_stores", "search_events"}


@pytest.mark.parametrize(
    ("question", "tool", "fragment"),
    [
        ("ファミリー向けの店舗を探して", "search_stores", "target_audience LIKE '%ファミリー%'"),
        ("駐車場のある店舗", "search_stores", "parking LIKE '%\"available\": true%'"),
        ("ペット同伴できるお店", "search_stores", "pets_allowed = 'TRUE'"),
        ("個室のあるイタリアン", "search_stores", "private_room LIKE '%\"available\": true%'"),
        ("日曜日に開いているお店", "search_stores", "opening_hours LIKE '%\"sunday\": [{%'"),
        ("ＳＴＲ－０００８の電話番号", "search_stores", "store_id = 'STR-0008'"),
        ("今週末のイベントは?", "search_events", "end_date >= '2025-10-04'"),
        ("子ども向けのイベントはある?", "search_events", "category = 'kids'"),
    ],
)
def test_templates(question: str, tool: str, fragment: str) -> None:
    from tansaku.text.normalize import normalize

    query = plan(normalize(question), BOTH, NOW)
    assert query is not None and query.tool == tool
    assert fragment in query.sql and query.sql.endswith("LIMIT 10")


@pytest.mark.parametrize(
    ("question", "keywords", "show"),
    [
        ("個室のあるイタリアン", ("イタリアン",), ()),
        ("喫煙できる店舗は?", ("喫煙",), ()),
        ("港南エリアのカフェ", ("港南",), ()),
        ("STR-0008の電話番号", (), ("phone",)),
    ],
)
def test_unknown_words_are_keywords_not_conditions(question, keywords, show) -> None:
    query = plan(question, BOTH, NOW)
    assert query is not None and query.keywords == keywords and query.show == show
    assert all(k not in query.sql for k in keywords)


@pytest.mark.parametrize(
    "question",
    ["渋谷店の昨日のクレーム", "冷蔵庫が故障したときの対応", "新宿店の売上は?", "食中毒の予防方法"],
)
def test_report_and_manual_questions_are_not_table_questions(question: str) -> None:
    assert plan(question, BOTH, NOW) is None


def test_no_sql_tool_no_template() -> None:
    assert plan("ファミリー向けの店舗を探して", set(), NOW) is None


def test_quotes_and_wildcards_never_reach_sql() -> None:
    query = plan("店舗で'; DROP TABLE stores; -- 100%のお店", BOTH, NOW)
    assert query is not None
    body = query.sql.split(" WHERE ", 1)[-1] if " WHERE " in query.sql else ""
    assert "DROP" not in query.sql and "';" not in body and "100%" not in query.sql


@pytest.fixture(scope="module")
def tools(tmp_path_factory):
    pytest.importorskip("duckdb")
    from tansaku.demo.tables import install_demo_tables
    from tansaku.tables import TableDatabase, load_tables_config

    home = tmp_path_factory.mktemp("routes")
    install_demo_tables(home)
    with (
        TableDatabase(load_tables_config(home / "tables.toml")) as db,
        tansaku.connect(home / "ws") as ts,
    ):
        yield toolset(ts, now=NOW, tables=db)


@pytest.mark.integration
def test_family_stores_answer_cites_rows(tools) -> None:
    answer = answer_offline("ファミリー向けの店舗を探して", tools)
    assert not answer.unanswered and "ファミリー向けの店舗" in answer.text
    assert answer.citations and all(c.collection == "stores" for c in answer.citations)
    assert all(c.doc_id.startswith("STR-") and c.doc_id in answer.text for c in answer.citations)
    assert {e.tool for e in answer.events if e.type == "tool_call"} == {"search_stores"}
    assert any("SELECT" in e.text for e in answer.events if e.type == "thought")


@pytest.mark.integration
def test_an_area_word_searches_the_address_and_every_match_is_counted(tools) -> None:
    answer = answer_offline("港南エリアのお店を教えて", tools)
    assert not answer.unanswered and answer.citations
    assert all("港南" in line for line in answer.text.splitlines()[1:])
    assert len(answer.citations) >= 5


@pytest.mark.integration
def test_a_word_the_data_lacks_never_empties_the_other_conditions(tools) -> None:
    answer = answer_offline("無料の駐車場がある店舗", tools)
    assert not answer.unanswered and len(answer.citations) == 10 and "件中10件を表示" in answer.text


@pytest.mark.integration
def test_opening_hours_by_weekday_and_a_code(tools) -> None:
    sunday = answer_offline("日曜日に開いている店舗は?", tools)
    assert not sunday.unanswered and "日曜日に営業" in sunday.text
    phone = answer_offline("STR-0008の電話番号", tools)
    assert [c.doc_id for c in phone.citations] == ["STR-0008"] and "電話: 03-" in phone.text


@pytest.mark.integration
def test_weekend_events(tools) -> None:
    answer = answer_offline("今週末のイベントは?", tools)
    assert not answer.unanswered and "芝浦運河オータムフェス" in answer.text
    assert answer.citations[0].collection == "events"


@pytest.mark.integration
def test_a_condition_the_data_lacks_is_said_plainly(tools) -> None:
    answer = answer_offline("喫煙できる店舗は?", tools)
    assert answer.unanswered and answer.citations == ()
    assert "見つかりません" in answer.text


@pytest.mark.integration
def test_closed_days_events_needing_a_booking_and_a_venue(tools) -> None:
    closed = answer_offline("月曜が定休日のお店はどこですか", tools)
    assert not closed.unanswered and "月曜定休" in closed.text
    booking = answer_offline("予約が必要なワークショップを教えてください", tools)
    assert not booking.unanswered and "予約が必要" in booking.text
    venue = answer_offline("年越しカウントダウンの会場はどこ？", tools)
    assert not venue.unanswered and "会場: " in venue.text
    count = answer_offline("レストランは全部で何件ありますか", tools)
    assert not count.unanswered and "レストランの店舗" in count.text


def test_a_station_walking_minutes_room_size_and_year_end_are_conditions() -> None:
    """A station is a required condition (no store near it: none listed, never the word
    dropped); 徒歩5分以内, 20人以上の個室, 個室料なし and 年末の休業 are read from their columns."""
    from tansaku.agent.table_routes import plan

    tools = {"search_stores", "search_events"}
    near = plan("渋谷駅の近くのイタリアン", tools)
    assert near is not None and "渋谷駅" in near.conditions
    assert "渋谷" not in near.keywords
    walk = plan("田町駅から歩いて5分以内のお店", tools)
    assert walk is not None and {"田町駅", "徒歩5分以内"} <= set(walk.conditions)
    assert not walk.keywords
    room = plan("20人以上入れる個室がある店舗は？", tools)
    assert room is not None and "個室20名以上" in room.conditions
    free = plan("個室料がかからない店", tools)
    assert free is not None and "個室料なし" in free.conditions
    year_end = plan("年末に休業するお店は？", tools)
    assert year_end is not None and "年末に休業" in year_end.conditions
    assert "12-31" in year_end.sql and "01-01" not in year_end.sql

"""A search that finds nothing carries a Japanese suggestion: the retries and synonyms it
tried, the date and filters that narrowed it, and shorter rewordings (the content words as
written — particles, question endings and formal nouns dropped). A search with hits carries
none; a team with no record is told to ingest first."""

from __future__ import annotations

from datetime import datetime

import pytest

import tansaku
from tansaku.config import Axis, AxisMode, CollectionConfig
from tansaku.records import Record
from tansaku.search.suggest import _words
from tansaku.testing import HashEmbedder
from tansaku.text import get_analyzer
from tansaku.text.dates import TOKYO

NOW = datetime(2025, 12, 11, 9, 0, tzinfo=TOKYO)
CONFIG = CollectionConfig(name="reports", axes=(Axis(name="kw", mode=AxisMode.BM25),))
REPORTS = [
    (
        "r1",
        "2025-12-10",
        "新宿店",
        "冷蔵庫の温度が上がらず、食材を廃棄した。業者に修理を依頼した。",
    ),
    ("r2", "2025-12-09", "渋谷店", "お客様から提供が遅いとのクレームがあった。"),
]


@pytest.fixture(scope="module")
def ts(tmp_path_factory):
    recs = [
        Record(f"{d}:body", d, "body", text, {"title": d, "date": day, "store": store})
        for d, day, store, text in REPORTS
    ]
    with tansaku.connect(tmp_path_factory.mktemp("suggest"), embedder=HashEmbedder(16)) as ts:
        ts.ingest_records(recs, collection="reports", config=CONFIG, team="shinjuku")
        yield ts


def test_content_words_as_written():
    a = get_analyzer()
    assert _words("冷蔵庫の温度が上がらないときの対応手順を教えてください", a) == [
        "冷蔵庫",
        "温度",
        "対応手順",
    ]
    assert _words("ET-3300 の焼成温度", a) == ["ET-3300", "焼成温度"]
    assert _words("お客様の声", a) == ["お客様", "声"]
    assert _words("どこに行けばいいですか", a) == []


def test_nothing_found_says_what_was_tried_and_what_to_try(ts):
    query = "宇宙船の燃料補給の手順を教えてください"
    result = ts.search(query, collection="reports", team="shinjuku", now=NOW)
    assert result.hits == ()
    s = result.to_dict()["suggestion"]
    assert s["message"] == (
        f"「{query}」に一致する結果はありませんでした。"
        "「宇宙船 燃料補給 手順」で検索し直すと見つかるかもしれません"
    )
    assert s["queries"] == ["宇宙船 燃料補給 手順", "宇宙船 燃料補給"]
    assert s["tried"][:2] == [
        "最低スコアを下げ、候補を増やして再検索しました",
        "さらに同義語を加えて再検索しました",
    ]
    assert s["tips"][0].startswith("短い言葉で検索してください")
    assert s["tips"][-1] == "別のコレクションでも検索してください"
    again = ts.search(s["queries"][1], collection="reports", team="shinjuku", now=NOW)
    assert again.hits == () and "suggestion" in again.to_dict()


def test_the_date_of_the_query_and_the_filters_are_named(ts):
    result = ts.search(
        "昨日の宇宙船", collection="reports", team="shinjuku", now=NOW, where=["store=新宿店"]
    )
    s = result.to_dict()["suggestion"]
    assert s["queries"] == ["宇宙船"]
    assert s["tips"][1:3] == [
        "「昨日」で期間を 2025-12-10 に絞り込みました。"
        "期間を外すか広げてください(例: 「最近」「過去90日」)",
        "絞り込み条件(store=新宿店)を外すか緩めてください",
    ]


def test_without_retry_the_suggestion_says_to_turn_it_on(ts):
    result = ts.search("宇宙船", collection="reports", team="shinjuku", retry=False)
    s = result.to_dict()["suggestion"]
    assert s["tried"] == []
    assert s["queries"] == []  # the query is its one word already
    assert "0件時の再試行を有効にしてください(同義語と広い条件で探し直します)" in s["tips"]
    assert s["message"].endswith(
        "0件時の再試行を有効にしてください(同義語と広い条件で探し直します)"
    )


def test_a_team_without_records_is_told_to_ingest(ts):
    s = ts.search("冷蔵庫", collection="reports", team="shibuya").to_dict()["suggestion"]
    assert s["message"].startswith("コレクション「reports」にはこのチームのデータがまだありません")


def test_hits_carry_no_suggestion(ts):
    result = ts.search("冷蔵庫の温度", collection="reports", team="shinjuku", now=NOW)
    assert result.hits and result.suggestion is None
    assert "suggestion" not in result.to_dict()


def test_a_period_without_records_skips_the_retries_and_says_so(ts):
    """「去年」 (2024) holds no record: the retries (lower threshold, synonyms, rewordings) keep
    the period, so they are not run; the suggestion names the period and searches without it."""
    result = ts.search("去年の冷蔵庫の温度", collection="reports", team="shinjuku", now=NOW)
    assert result.hits == ()
    assert result.plan.filter_empty and result.plan.to_dict()["filter_empty"] is True
    assert result.plan.stage.retry_stage == 0
    s = result.to_dict()["suggestion"]
    assert s["message"] == (
        "コレクション「reports」には期間(「去年」: 2024-01-01〜2024-12-31)に当てはまる"
        "記録がありません。「冷蔵庫 温度」で検索すると期間を問わず探せます"
    )
    assert s["tried"] == [
        "絞り込み条件に当てはまる記録がないため、"
        "再試行(最低スコアを下げ、同義語を加えて探し直す)は省きました"
    ]
    assert s["tips"] == [
        "期間の言葉(「去年」)を外して検索してください",
        "別のコレクションでも検索してください",
    ]
    again = ts.search(s["queries"][0], collection="reports", team="shinjuku", now=NOW)
    assert [h.doc_id for h in again.hits][:1] == ["r1"]


def test_a_filter_of_the_caller_that_nothing_passes_is_named(ts):
    result = ts.search("冷蔵庫", collection="reports", team="shinjuku", where=["store=池袋店"])
    assert result.hits == () and result.plan.filter_empty
    s = result.to_dict()["suggestion"]
    assert s["message"] == (
        "コレクション「reports」にはstore=池袋店に当てはまる記録がありません。"
        "絞り込み条件(store=池袋店)を外すか緩めてください"
    )
    assert s["queries"] == []


def test_a_period_with_records_is_still_retried(ts):
    result = ts.search("昨日の宇宙船", collection="reports", team="shinjuku", now=NOW)
    assert result.hits == () and not result.plan.filter_empty
    assert result.plan.stage.retry_stage == 2
    assert result.to_dict()["plan"]["filter_empty"] is False


def test_another_teams_records_do_not_count_for_the_filter(ts):
    """shibuya has no record at all: told to ingest, whatever the filter."""
    result = ts.search("冷蔵庫", collection="reports", team="shibuya", where=["store=新宿店"])
    assert result.hits == () and result.plan.filter_empty  # shinjuku's 新宿店 record is not its
    s = result.to_dict()["suggestion"]
    assert s["message"].startswith("コレクション「reports」にはこのチームのデータがまだありません")

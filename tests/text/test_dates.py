"""resolve_dates(): relative and absolute Japanese date expressions against an explicit now.

Expected ranges are written out by hand from a calendar. Reference days:
2025-12-11 is a Thursday (its week: Mon 12-08 .. Sun 12-14), 2025-12-08 a Monday,
2025-12-14 a Sunday, 2026-01-01 a Thursday, 2026-01-07 a Wednesday, 2024 is a leap year.
"""

from __future__ import annotations

import random
from dataclasses import FrozenInstanceError
from datetime import UTC, date, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from tansaku.text.dates import (
    TOKYO,
    DateRange,
    DateResolution,
    now_tokyo,
    parse_now,
    resolve_dates,
)

THU = date(2025, 12, 11)


def d(text: str) -> date:
    return date.fromisoformat(text)


@pytest.mark.parametrize(
    ("query", "today", "start", "end", "expression"),
    [
        # Days.
        ("今日の売上", THU, "2025-12-11", "2025-12-11", "今日"),
        ("本日のシフト", THU, "2025-12-11", "2025-12-11", "本日"),
        ("昨日の問題", THU, "2025-12-10", "2025-12-10", "昨日"),
        ("きのうのクレーム", THU, "2025-12-10", "2025-12-10", "きのう"),
        ("一昨日の事故", THU, "2025-12-09", "2025-12-09", "一昨日"),
        ("おとといのトラブル", THU, "2025-12-09", "2025-12-09", "おととい"),
        ("明日の予約", THU, "2025-12-12", "2025-12-12", "明日"),
        # Weeks (Monday start; 今週 stops at today).
        ("今週の売上", THU, "2025-12-08", "2025-12-11", "今週"),
        ("先週の売上", THU, "2025-12-01", "2025-12-07", "先週"),
        ("先々週の日報", THU, "2025-11-24", "2025-11-30", "先々週"),
        ("先週の売上", d("2025-12-08"), "2025-12-01", "2025-12-07", "先週"),
        ("今週の売上", d("2025-12-08"), "2025-12-08", "2025-12-08", "今週"),
        ("今週のクレーム", d("2025-12-14"), "2025-12-08", "2025-12-14", "今週"),
        ("先週の売上", d("2025-12-14"), "2025-12-01", "2025-12-07", "先週"),
        # Months and years.
        ("今月の売上", THU, "2025-12-01", "2025-12-11", "今月"),
        ("今月の売上", d("2025-12-01"), "2025-12-01", "2025-12-01", "今月"),
        ("先月の売上", THU, "2025-11-01", "2025-11-30", "先月"),
        ("先々月の売上", THU, "2025-10-01", "2025-10-31", "先々月"),
        ("今年の事故", THU, "2025-01-01", "2025-12-11", "今年"),
        ("去年の売上", THU, "2024-01-01", "2024-12-31", "去年"),
        ("昨年の売上実績", THU, "2024-01-01", "2024-12-31", "昨年"),
        ("一昨年の売上", THU, "2023-01-01", "2023-12-31", "一昨年"),
        ("2023年のレジの故障", THU, "2023-01-01", "2023-12-31", "2023年"),
        ("２０２３年中の事故", THU, "2023-01-01", "2023-12-31", "２０２３年中"),
        ("2023年 レジ", THU, "2023-01-01", "2023-12-31", "2023年"),
        ("2023/10のレジ", THU, "2023-10-01", "2023-10-31", "2023/10"),
        ("2024-02の日報", THU, "2024-02-01", "2024-02-29", "2024-02"),
        # Recent / past N days.
        ("最近の不具合", THU, "2025-12-05", "2025-12-11", "最近"),
        ("直近のクレーム", THU, "2025-12-05", "2025-12-11", "直近"),
        ("過去7日の売上", THU, "2025-12-05", "2025-12-11", "過去7日"),
        ("過去３０日のクレーム", THU, "2025-11-12", "2025-12-11", "過去３０日"),
        ("直近14日間のトラブル", THU, "2025-11-28", "2025-12-11", "直近14日間"),
        ("ここ三日の売上", THU, "2025-12-09", "2025-12-11", "ここ三日"),
        ("過去二十日の事故", THU, "2025-11-22", "2025-12-11", "過去二十日"),
        ("過去1週間の日報", THU, "2025-12-05", "2025-12-11", "過去1週間"),
        # N days / weeks / months / years ago.
        ("三日前の問題", THU, "2025-12-08", "2025-12-08", "三日前"),
        ("10日前の日報", THU, "2025-12-01", "2025-12-01", "10日前"),
        ("十日前の日報", THU, "2025-12-01", "2025-12-01", "十日前"),
        ("二十三日前", THU, "2025-11-18", "2025-11-18", "二十三日前"),
        ("1週間前のクレーム", THU, "2025-12-01", "2025-12-07", "1週間前"),
        ("２週間前の売上", THU, "2025-11-24", "2025-11-30", "２週間前"),
        ("1か月前の売上", THU, "2025-11-01", "2025-11-30", "1か月前"),
        ("3ヶ月前の事故", THU, "2025-09-01", "2025-09-30", "3ヶ月前"),
        ("2カ月前の売上", THU, "2025-10-01", "2025-10-31", "2カ月前"),
        ("十二ヶ月前", THU, "2024-12-01", "2024-12-31", "十二ヶ月前"),
        ("1年前の事故", THU, "2024-01-01", "2024-12-31", "1年前"),
        # Weekdays of this / last week.
        ("先週の金曜の売上", THU, "2025-12-05", "2025-12-05", "先週の金曜"),
        ("先週の金曜日に起きたトラブル", THU, "2025-12-05", "2025-12-05", "先週の金曜日"),
        ("先週金曜のクレーム", THU, "2025-12-05", "2025-12-05", "先週金曜"),
        ("今週の月曜の日報", THU, "2025-12-08", "2025-12-08", "今週の月曜"),
        ("先週の日曜日", THU, "2025-12-07", "2025-12-07", "先週の日曜日"),
        ("先々週の水曜", THU, "2025-11-26", "2025-11-26", "先々週の水曜"),
        ("先週の土日の売上", THU, "2025-12-06", "2025-12-07", "先週の土日"),
        ("先週の月曜", d("2026-01-07"), "2025-12-29", "2025-12-29", "先週の月曜"),
        # Absolute dates.
        ("2025年12月9日の売上", THU, "2025-12-09", "2025-12-09", "2025年12月9日"),
        ("2025/12/9 クレーム", THU, "2025-12-09", "2025-12-09", "2025/12/9"),
        ("2025-12-09の日報", THU, "2025-12-09", "2025-12-09", "2025-12-09"),
        ("2025.12.09の日報", THU, "2025-12-09", "2025-12-09", "2025.12.09"),
        ("２０２５年１２月９日", THU, "2025-12-09", "2025-12-09", "２０２５年１２月９日"),
        ("2026年1月5日の予約", THU, "2026-01-05", "2026-01-05", "2026年1月5日"),
        ("12月9日の問題", THU, "2025-12-09", "2025-12-09", "12月9日"),
        ("12/9の売上", THU, "2025-12-09", "2025-12-09", "12/9"),
        ("１２／９の売上", THU, "2025-12-09", "2025-12-09", "１２／９"),
        ("12/25の売上", THU, "2024-12-25", "2024-12-25", "12/25"),
        ("2025年11月の売上", THU, "2025-11-01", "2025-11-30", "2025年11月"),
        ("12月の売上", THU, "2025-12-01", "2025-12-31", "12月"),
        ("1月に起きた事故", THU, "2025-01-01", "2025-01-31", "1月"),
        ("売上 11月", THU, "2025-11-01", "2025-11-30", "11月"),
        ("12月中のクレーム", THU, "2025-12-01", "2025-12-31", "12月中"),
        # Month boundaries.
        ("昨日の問題", d("2025-12-01"), "2025-11-30", "2025-11-30", "昨日"),
        ("一昨日の問題", d("2025-03-01"), "2025-02-27", "2025-02-27", "一昨日"),
        # Year boundaries.
        ("昨日の問題", d("2026-01-01"), "2025-12-31", "2025-12-31", "昨日"),
        ("先月の売上", d("2026-01-15"), "2025-12-01", "2025-12-31", "先月"),
        ("1か月前の売上", d("2026-01-15"), "2025-12-01", "2025-12-31", "1か月前"),
        ("先週の売上", d("2026-01-07"), "2025-12-29", "2026-01-04", "先週"),
        ("今週の売上", d("2026-01-01"), "2025-12-29", "2026-01-01", "今週"),
        ("最近の問題", d("2026-01-03"), "2025-12-28", "2026-01-03", "最近"),
        ("今年の売上", d("2026-01-01"), "2026-01-01", "2026-01-01", "今年"),
        ("12/9の売上", d("2026-01-05"), "2025-12-09", "2025-12-09", "12/9"),
        ("12月9日の売上", d("2026-01-05"), "2025-12-09", "2025-12-09", "12月9日"),
        ("12月の売上", d("2026-01-05"), "2025-12-01", "2025-12-31", "12月"),
        ("1月の売上", d("2026-01-05"), "2026-01-01", "2026-01-31", "1月"),
        # Leap days.
        ("昨日の問題", d("2024-03-01"), "2024-02-29", "2024-02-29", "昨日"),
        ("昨日の問題", d("2025-03-01"), "2025-02-28", "2025-02-28", "昨日"),
        ("過去7日の売上", d("2024-03-03"), "2024-02-26", "2024-03-03", "過去7日"),
        ("先月の売上", d("2024-03-15"), "2024-02-01", "2024-02-29", "先月"),
        ("先月の売上", d("2025-03-15"), "2025-02-01", "2025-02-28", "先月"),
        ("1か月前の売上", d("2024-03-31"), "2024-02-01", "2024-02-29", "1か月前"),
        ("2024年2月29日の日報", THU, "2024-02-29", "2024-02-29", "2024年2月29日"),
        ("2/29の日報", d("2025-06-01"), "2024-02-29", "2024-02-29", "2/29"),
        ("2月の売上", d("2024-05-01"), "2024-02-01", "2024-02-29", "2月"),
    ],
)
def test_range(query: str, today: date, start: str, end: str, expression: str) -> None:
    result = resolve_dates(query, today)
    assert result.range == DateRange(d(start), d(end), expression)


@pytest.mark.parametrize(
    ("query", "rewritten", "remainder"),
    [
        ("昨日の問題", "2025-12-10の問題", "問題"),
        ("先週の売上", "2025-12-01から2025-12-07の売上", "売上"),
        ("先週の金曜の売上", "2025-12-05の売上", "売上"),
        ("最近の不具合", "2025-12-05から2025-12-11の不具合", "不具合"),
        ("明日の予約は何件", "2025-12-12の予約は何件", "予約は何件"),
        ("昨日には何があった", "2025-12-10には何があった", "何があった"),
        ("12月中の売上", "2025-12-01から2025-12-31の売上", "売上"),
        ("問題 昨日 売上", "問題 2025-12-10 売上", "問題 売上"),
        ("厨房で昨日起きた事故", "厨房で2025-12-10起きた事故", "厨房で起きた事故"),
        # Width variants are matched, but the rest of the user's text is kept as typed.
        ("ｻｰﾊﾞｰ障害 ２０２５年１２月９日", "ｻｰﾊﾞｰ障害 2025-12-09", "ｻｰﾊﾞｰ障害"),
        ("過去３０日のｸﾚｰﾑ", "2025-11-12から2025-12-11のｸﾚｰﾑ", "ｸﾚｰﾑ"),
        # 先週の日報 is last week's daily reports, not last Sunday.
        ("先週の日報", "2025-12-01から2025-12-07の日報", "日報"),
        # Only the first expression is resolved.
        ("昨日と今日の売上", "2025-12-10と今日の売上", "と今日の売上"),
        # An invalid date is text; the search goes on after it.
        ("2025年2月30日と昨日の問題", "2025年2月30日と2025-12-10の問題", "2025年2月30日と問題"),
    ],
)
def test_query_and_remainder(query: str, rewritten: str, remainder: str) -> None:
    result = resolve_dates(query, THU)
    assert (result.query, result.remainder) == (rewritten, remainder)


@pytest.mark.parametrize(
    "query",
    [
        # Invalid dates are left alone.
        "2025年2月29日の日報",
        "2025年2月30日の売上",
        "2025/13/01の売上",
        "13/1の売上",
        "2/30の売上",
        "12/32の売上",
        "4月31日の売上",
        "13月の売上",
        "過去0日の売上",
        # Not dates, or not ones we resolve.
        "フィールドのカードを手札に戻すカード",
        "相手のリーダーにダメージを与えるカード",
        "ランダムな相手のフォロワーにダメージを与えるカード",
        "バウンスするカード",
        "今年度の予算",
        "昨年度の決算",
        "2025年前半の計画",
        "2023年度の売上",
        "2023年版のマニュアル",
        "1990年代の資料",
        "0999年の記録",
        "2023/13の売上",
        "品番AB2023-1の在庫",
        "ET-2020-3の温度",
        "2023-10Aの型番",
        "3日前後で届く",
        "12月中旬のイベント",
        "3月期決算",
        "12か月の研修",
        "砂糖1/2カップ",
        "令和7年12月9日",
        "バージョン2025.12",
        "",
        "   ",
    ],
)
def test_no_date_leaves_query_unchanged(query: str) -> None:
    result = resolve_dates(query, THU)
    assert result == DateResolution(range=None, query=query, remainder=query.strip())


@pytest.mark.parametrize(
    ("now", "yesterday"),
    [
        (datetime(2025, 12, 10, 16, 0, tzinfo=UTC), "2025-12-10"),  # 2025-12-11 01:00 JST
        (datetime(2025, 12, 10, 14, 59, tzinfo=UTC), "2025-12-09"),  # 2025-12-10 23:59 JST
        (datetime(2025, 12, 10, 11, 0, tzinfo=ZoneInfo("America/New_York")), "2025-12-10"),
        (datetime(2025, 12, 11, 0, 30), "2025-12-10"),  # naive: Tokyo local
        (datetime(2025, 12, 11, 0, 30, tzinfo=TOKYO), "2025-12-10"),
        (date(2025, 12, 11), "2025-12-10"),
    ],
)
def test_now_is_taken_in_tokyo(now: datetime | date, yesterday: str) -> None:
    result = resolve_dates("昨日の問題", now)
    assert result.range is not None
    assert result.range.to_dict() == {"from": yesterday, "to": yesterday}


def test_default_now_is_tokyo_today() -> None:
    current = now_tokyo()
    assert current.utcoffset() == timedelta(hours=9)
    result = resolve_dates("今日")
    assert result.range is not None
    assert result.range.start in {current.date(), now_tokyo().date()}


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("2025-12-11", datetime(2025, 12, 11, tzinfo=TOKYO)),
        ("2025-12-11T09:30", datetime(2025, 12, 11, 9, 30, tzinfo=TOKYO)),
        ("2025-12-11 09:30", datetime(2025, 12, 11, 9, 30, tzinfo=TOKYO)),
        (" 2025-12-11 ", datetime(2025, 12, 11, tzinfo=TOKYO)),
        ("２０２５-１２-１１", datetime(2025, 12, 11, tzinfo=TOKYO)),
        ("2024-02-29T23:59", datetime(2024, 2, 29, 23, 59, tzinfo=TOKYO)),
    ],
)
def test_parse_now(value: str, expected: datetime) -> None:
    parsed = parse_now(value)
    assert parsed == expected
    assert parsed.tzinfo == TOKYO


@pytest.mark.parametrize(
    "value",
    ["", "yesterday", "2025/12/11", "12-11", "2025-12-1", "2025-12-11T9:30", "2025-12-11T09:30:00"],
)
def test_parse_now_rejects_other_formats(value: str) -> None:
    with pytest.raises(ValueError, match=r"解釈できません.*YYYY-MM-DD または YYYY-MM-DDTHH:MM"):
        parse_now(value)


@pytest.mark.parametrize("value", ["2025-02-29", "2025-13-01", "2025-12-32", "2025-12-11T24:00"])
def test_parse_now_rejects_impossible_dates(value: str) -> None:
    with pytest.raises(ValueError, match=f"「{value}」は存在しない"):
        parse_now(value)


def test_parse_now_feeds_resolve_dates() -> None:
    result = resolve_dates("昨日の問題", parse_now("2025-12-11T01:00"))
    assert result.range is not None
    assert result.range.to_dict() == {"from": "2025-12-10", "to": "2025-12-10"}


def test_date_range_helpers() -> None:
    leap_week = DateRange(d("2024-02-26"), d("2024-03-03"), "過去7日")
    assert leap_week.to_dict() == {"from": "2024-02-26", "to": "2024-03-03"}
    assert len(leap_week.days()) == 7
    assert d("2024-02-29") in leap_week.days()
    assert DateRange(THU, THU, "今日").days() == [THU]
    with pytest.raises(FrozenInstanceError):
        leap_week.start = THU  # type: ignore[misc]
    with pytest.raises(ValueError, match="2025-12-11 > 2025-12-10"):
        DateRange(THU, d("2025-12-10"), "x")


def test_never_raises_on_user_text() -> None:
    alphabet = "0123456789０１２３４５６７８９/／-. 年月日週間前後過去直近ここ最今先々昨一二三十"
    alphabet += "のにはか月曜土中カップ"
    rng = random.Random(4)
    for _ in range(2000):
        query = "".join(rng.choice(alphabet) for _ in range(rng.randint(1, 16)))
        result = resolve_dates(query, THU)
        if result.range is None:
            assert result.query == query
        else:
            assert result.range.start <= result.range.end
            assert result.range.expression in query

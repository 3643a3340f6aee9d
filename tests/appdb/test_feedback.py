"""Feedback per design 004: validation, the stored meta rebuilt from the event, the rate limit
(enforced by the database), NotFound, and team scope."""

from __future__ import annotations

import threading
from datetime import UTC, datetime, timedelta

import pytest
from appdb_events import search_event

from tansaku.appdb import InvalidInput, NotFound, RateLimited

T0 = datetime(2025, 8, 25, 9, 0, tzinfo=UTC)


@pytest.fixture
def searched(db):
    db.events.record(
        "cards",
        search_event("q1", "フィールドのカードを手札に戻すカード"),
        titles=["統率のルミナスナイト", "光輝の翼"],
        at=T0 - timedelta(minutes=5),
    )
    return db


def test_meta_comes_from_the_stored_event(searched) -> None:
    fb = searched.feedback.submit(
        "cards",
        query_id="q1",
        rating=-1,
        reason="ヒールカードが出ない",
        client="ip:10.0.0.1",
        now=T0,
    )
    assert fb.rating == -1 and fb.reason == "ヒールカードが出ない"
    assert fb.meta["query"] == "フィールドのカードを手札に戻すカード"
    assert fb.meta["top_titles"] == ["統率のルミナスナイト", "光輝の翼"]
    assert fb.meta["namespaces"] == ["effect_1", "effect_combined"]
    assert fb.meta["top_scores"] == [0.82, 0.61, 0.4]
    assert fb.meta["min_score"] == 0.4 and fb.meta["query_type"] == "clear"
    (stored,) = searched.feedback.find("cards")
    assert stored == fb


@pytest.mark.parametrize("rating", [0, 2, -2, True, "1", None, 1.5])
def test_rating_is_minus_one_or_one(searched, rating) -> None:
    with pytest.raises(InvalidInput, match="rating"):
        searched.feedback.submit("cards", query_id="q1", rating=rating, client="ip:1")


def test_reason_is_cleaned_escaped_and_masked(searched) -> None:
    fb = searched.feedback.submit(
        "cards",
        query_id="q1",
        rating=-1,
        reason="<script>alert(1)</script>\x00\x1b[31m 連絡 taro@example.jp / 090-1234-5678\r\n",
        client="ip:1",
        now=T0,
    )
    assert fb.reason == (
        "&lt;script&gt;alert(1)&lt;/script&gt;[31m 連絡 [メールアドレス] / [電話番号]"
    )


def test_reason_over_300_characters_is_refused_and_nothing_is_stored(searched) -> None:
    searched.feedback.submit("cards", query_id="q1", rating=1, reason="良" * 300, client="ip:1")
    with pytest.raises(InvalidInput, match="300 文字以内"):
        searched.feedback.submit("cards", query_id="q1", rating=1, reason="悪" * 301, client="c")
    assert len(searched.feedback.find("cards")) == 1


def test_unknown_and_other_teams_query_ids_are_not_found(searched) -> None:
    with pytest.raises(NotFound, match="nope"):
        searched.feedback.submit("cards", query_id="nope", rating=1, client="ip:1")
    with pytest.raises(NotFound):
        searched.feedback.submit("restaurant", query_id="q1", rating=1, client="ip:1")
    assert searched.feedback.find("cards") == [] and searched.feedback.find("restaurant") == []


def test_ten_a_minute_then_429_with_retry_after(searched) -> None:
    for i in range(10):
        searched.feedback.submit(
            "cards", query_id="q1", rating=1, client="key:abc", now=T0 + timedelta(seconds=i)
        )
    with pytest.raises(RateLimited) as info:
        searched.feedback.submit(
            "cards", query_id="q1", rating=1, client="key:abc", now=T0 + timedelta(seconds=30)
        )
    assert info.value.limit == 10 and info.value.retry_after == 30
    assert "1分あたり 10 件" in str(info.value)
    # another client is not limited; the first is again once the minute has passed
    searched.feedback.submit("cards", query_id="q1", rating=1, client="ip:10.0.0.2", now=T0)
    searched.feedback.submit(
        "cards", query_id="q1", rating=1, client="key:abc", now=T0 + timedelta(seconds=61)
    )


def test_a_hundred_an_hour(searched) -> None:
    for i in range(100):
        searched.feedback.submit(
            "cards", query_id="q1", rating=-1, client="ip:1", now=T0 + timedelta(seconds=7 * i)
        )
    late = T0 + timedelta(seconds=7 * 100)
    with pytest.raises(RateLimited) as info:
        searched.feedback.submit("cards", query_id="q1", rating=-1, client="ip:1", now=late)
    assert info.value.limit == 100 and info.value.window == "1時間"
    assert info.value.retry_after == 3600 - 700
    searched.feedback.submit(
        "cards", query_id="q1", rating=-1, client="ip:1", now=T0 + timedelta(seconds=3601)
    )


def test_concurrent_submissions_cannot_slip_past_the_limit(searched) -> None:
    accepted: list[int] = []
    refused: list[int] = []
    errors: list[BaseException] = []
    barrier = threading.Barrier(16)

    def post(i: int) -> None:
        barrier.wait()
        try:
            searched.feedback.submit("cards", query_id="q1", rating=1, client="ip:9", now=T0)
            accepted.append(i)
        except RateLimited:
            refused.append(i)
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=post, args=(i,)) for i in range(16)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert len(accepted) == 10 and len(refused) == 6

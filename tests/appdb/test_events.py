"""Search events: stored from the SEARCH_EVENT dict (or a SearchResult), read back per team."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from appdb_events import search_event

from tansaku.appdb import NotFound
from tansaku.appdb.rows import Page, Period
from tansaku.config import AxisMode
from tansaku.records import Record
from tansaku.search.classify import Classification, QueryLabel
from tansaku.search.plan import AxisPlan, SearchPlan, StagePlan
from tansaku.search.types import AxisScore, Hit, SearchResult
from tansaku.text.dates import TOKYO

T0 = datetime(2025, 8, 25, 0, 0, tzinfo=UTC)


def test_record_and_get_keep_what_feedback_needs(db) -> None:
    db.events.record(
        "cards",
        search_event("q1", "フィールドのカードを手札に戻すカード"),
        titles=["統率のルミナスナイト", "光輝の翼", "大嵐"],
        at=T0,
    )
    ev = db.events.get("cards", "q1")
    assert ev.query == "フィールドのカードを手札に戻すカード"
    assert ev.query_type == "clear"
    assert ev.namespaces == ("effect_1", "effect_combined")
    assert ev.top_titles == ("統率のルミナスナイト", "光輝の翼", "大嵐")
    assert ev.top_scores == (0.82, 0.61, 0.4)
    assert ev.min_score == 0.4 and ev.stage == 0 and not ev.zero_hit
    assert ev.created_at == T0
    assert ev.to_dict()["created_at"] == "2025-08-25T00:00:00+00:00"


def test_a_team_never_reads_another_teams_event(db) -> None:
    db.events.record("cards", search_event("q1", "疾走を持つフォロワー"))
    with pytest.raises(NotFound, match="q1"):
        db.events.get("restaurant", "q1")
    assert db.events.find("restaurant") == []
    assert db.events.count("restaurant") == (0, 0)


def test_recording_a_query_id_twice_keeps_the_first(db) -> None:
    db.events.record("cards", search_event("q1", "守護無視"))
    db.events.record("cards", search_event("q1", "別のクエリ"))
    assert db.events.get("cards", "q1").query == "守護無視"
    assert db.events.count("cards") == (1, 0)


def test_an_event_of_another_tenant_is_a_programming_error(db) -> None:
    with pytest.raises(ValueError, match="tenant"):
        db.events.record("cards", search_event("q1", "守護無視", tenant="restaurant"))


def test_counts_ranges_and_top_zero_hit_queries(db) -> None:
    for i, (q, zero) in enumerate(
        [
            ("ランダムダメージ", True),
            ("ランダムダメージ", True),
            ("手札ドロー", False),
            ("顔に3点", True),
        ]
    ):
        db.events.record("cards", search_event(f"q{i}", q, zero_hit=zero), at=T0 + timedelta(i))
    assert db.events.count("cards") == (4, 3)
    assert db.events.count("cards", Period(T0 + timedelta(1), T0 + timedelta(3))) == (2, 1)
    assert db.events.top_zero_hit("cards", Period(T0, T0 + timedelta(10))) == [
        ("ランダムダメージ", 2),
        ("顔に3点", 1),
    ]
    newest = db.events.find("cards", page=Page(2))
    assert [e.query_id for e in newest] == ["q3", "q2"]
    assert [e.query_id for e in db.events.find("cards", zero_hit=True)] == ["q3", "q1", "q0"]


def test_record_result_takes_the_titles_of_the_top_hits(db) -> None:
    hits = tuple(
        Hit(
            doc_id=f"c{i}",
            score=0.9 - i / 10,
            record=Record(f"c{i}:effect_1", f"c{i}", "effect_1", "効果文", {"title": f"カード{i}"}),
            axes={"effect": AxisScore(rank=i, score=0.9 - i / 10)},
        )
        for i in range(6)
    )
    result = SearchResult(
        query_id="qr",
        query="手札に戻す",
        hits=hits,
        plan=SearchPlan(
            collection="cards",
            tenant="cards",
            normalized_query="手札に戻す",
            classification=Classification(QueryLabel.VAGUE, 0.7),
            now=datetime(2025, 12, 11, 9, 0, tzinfo=TOKYO),
            stage=StagePlan(
                axes=(AxisPlan("effect", AxisMode.DENSE, ("effect_1",), 1.0, 6),),
                min_score=0.4,
            ),
        ),
        timings_ms={"total": 3.0},
    )
    db.events.record_result("cards", result)
    ev = db.events.get("cards", "qr")
    assert ev.top_titles == ("カード0", "カード1", "カード2", "カード3", "カード4")
    assert ev.query_type == "vague" and ev.namespaces == ("effect_1",)
    assert ev.hit_count == 6 and not ev.zero_hit

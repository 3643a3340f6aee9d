"""feedback_stats against hand-counted numbers; negative terms are Sudachi terms, not chars."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta

from appdb_events import search_event

from tansaku.appdb.rows import Period

T0 = datetime(2025, 8, 24, 16, 0, tzinfo=UTC)  # 2025-08-25 01:00 in Tokyo
SEARCHES = [
    # query_id, query, label, zero_hit, hours after T0
    ("a", "フィールドのカードを手札に戻すカード", "vague", False, 0),
    ("b", "相手のリーダーにダメージを与えるカード", "vague", True, 1),
    ("c", "ランダムな相手のフォロワーにダメージを与えるカード", "clear", True, 2),
    ("d", "疾走", "clear", False, 30),  # the next Tokyo day
]
RATINGS = [("a", -1), ("a", -1), ("b", -1), ("c", 1), ("d", 1)]


def _fill(db, team: str = "cards") -> None:
    for qid, q, label, zero, h in SEARCHES:
        db.events.record(
            team,
            search_event(f"{team}-{qid}", q, label=label, zero_hit=zero),
            at=T0 + timedelta(hours=h),
        )
    for i, (qid, rating) in enumerate(RATINGS):
        db.feedback.submit(
            team,
            query_id=f"{team}-{qid}",
            rating=rating,
            client=f"ip:{i}",
            now=T0 + timedelta(hours=31, minutes=i),
        )


def test_totals_rates_by_query_type_terms_and_days(db) -> None:
    _fill(db)
    db.events.record("other", search_event("x", "カードカードカード", zero_hit=True), at=T0)
    s = db.feedback.feedback_stats("cards", T0, T0 + timedelta(days=2))
    assert (s.searches, s.zero_hit, s.zero_hit_rate) == (4, 2, 0.5)
    assert (s.feedback, s.positive, s.negative, s.negative_rate) == (5, 2, 3, 0.6)
    by = {t.query_type: t for t in s.by_query_type}
    assert (by["vague"].searches, by["vague"].zero_hit, by["vague"].zero_hit_rate) == (2, 1, 0.5)
    assert (by["vague"].feedback, by["vague"].negative, by["vague"].negative_rate) == (3, 3, 1.0)
    assert (by["clear"].feedback, by["clear"].negative, by["clear"].negative_rate) == (2, 0, 0.0)
    terms = dict(s.top_negative_terms)
    # a twice, b once: カード once per feedback (not per occurrence), 手札 twice, ダメージ once
    assert terms["カード"] == 3 and terms["手札"] == 2 and terms["戻す"] == 2
    assert terms["ダメージ"] == 1 and terms["与える"] == 1 and "ランダム" not in terms
    assert "の" not in terms and "を" not in terms and "カ" not in terms
    assert s.top_negative_terms[0] == ("カード", 3)
    assert list(s.top_zero_hit_queries) == [
        ("ランダムな相手のフォロワーにダメージを与えるカード", 1),
        ("相手のリーダーにダメージを与えるカード", 1),
    ]
    days = {d.date: d for d in s.daily}
    assert (days[date(2025, 8, 25)].searches, days[date(2025, 8, 25)].zero_hit) == (3, 2)
    assert days[date(2025, 8, 26)].searches == 1
    assert (days[date(2025, 8, 26)].feedback, days[date(2025, 8, 26)].negative) == (5, 3)
    d = s.to_dict()
    assert d["top_negative_terms"][0] == {"term": "カード", "count": 3}
    assert d["daily"][0]["date"] == "2025-08-25"


def test_a_range_with_nothing_has_no_rates(db) -> None:
    _fill(db)
    s = db.feedback.feedback_stats("cards", T0 - timedelta(days=9), T0 - timedelta(days=8))
    assert (s.searches, s.feedback, s.zero_hit_rate, s.negative_rate) == (0, 0, None, None)
    assert s.top_negative_terms == () and s.daily == ()


def test_stats_never_count_another_team(db) -> None:
    _fill(db, "cards")
    _fill(db, "restaurant")
    a = db.feedback.feedback_stats("cards", T0, T0 + timedelta(days=2))
    assert (a.searches, a.feedback) == (4, 5)
    assert db.feedback.count("cards", Period(T0, T0 + timedelta(days=2))) == (5, 3)


def test_answers_are_no_searches_their_unanswered_rate_is_apart(db) -> None:
    """0件率 is searches that found nothing (as ``/metrics``); an unanswered question counts in
    the unanswered rate only — never as a zero-hit search."""
    _fill(db)
    for qid, answered, h in (("q1", True, 0), ("q2", False, 1), ("q3", False, 26)):
        db.events.record(
            "cards",
            {
                "event": "ANSWER_EVENT",
                "query_id": qid,
                "query": f"質問{qid}",
                "normalized_query": f"質問{qid}",
                "query_type": "ask",
                "hit_count": int(answered),
                "zero_hit": not answered,
            },
            titles=["出典"] if answered else [],
            at=T0 + timedelta(hours=h),
        )
    s = db.feedback.feedback_stats("cards", T0, T0 + timedelta(days=2))
    assert (s.searches, s.zero_hit, s.zero_hit_rate) == (4, 2, 0.5)  # as without the answers
    assert (s.questions, s.unanswered, s.unanswered_rate) == (3, 2, 0.6667)
    assert db.events.count("cards", Period(T0, T0 + timedelta(days=2))) == (4, 2)
    assert "質問q2" not in dict(s.top_zero_hit_queries)
    by = {t.query_type: t for t in s.by_query_type}
    assert by["ask"].searches == 0 and by["ask"].zero_hit_rate is None
    days = {d.date: d for d in s.daily}
    assert (days[date(2025, 8, 25)].searches, days[date(2025, 8, 25)].zero_hit) == (3, 2)
    assert (days[date(2025, 8, 25)].questions, days[date(2025, 8, 25)].unanswered) == (2, 1)
    assert (days[date(2025, 8, 26)].questions, days[date(2025, 8, 26)].unanswered) == (1, 1)
    d = s.to_dict()
    assert d["unanswered_rate"] == 0.6667 and d["daily"][0]["questions"] == 2


def test_negative_terms_are_named_as_written_without_light_verbs() -> None:
    """Counted by normalised form, named by the written form: 身だしなみ (not the lemma
    身嗜み), no 為る / 居る / 御 — what a person reads on the dashboard."""
    from tansaku.appdb.stats import negative_terms

    terms = dict(
        negative_terms(
            ["身だしなみとして爪はどうする?", "身嗜みの決まりは?", "お客さんがいるときの床掃除"],
            20,
        )
    )
    assert terms["身だしなみ"] == 2 and terms["爪"] == 1 and terms["客"] == 1
    for lemma in ("為る", "する", "居る", "いる", "御", "身嗜み", "どう"):
        assert lemma not in terms

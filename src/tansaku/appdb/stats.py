"""The improvement loop of design 004 in numbers, for a team and a half-open time range.

- searches and the zero-hit rate (``zero_hit / searches``: searches that found nothing — the
  definition of ``tansaku_zero_hit_total / tansaku_search_total`` at ``/metrics``), overall and
  by query type; answers (the server's ``ask`` events) are no searches;
- questions answered by the server and the unanswered rate (``unanswered / questions``: answers
  that said 「見つかりませんでした」 — ``tansaku_ask_total{outcome="unanswered"}`` at ``/metrics``);
- feedback totals and the negative rate (``negative / feedback``), overall and by query type;
- the most frequent *analysed* terms of negatively rated queries — Sudachi terms from
  :mod:`tansaku.text.analyzer`, each counted once per feedback (``カードを手札に戻す`` gives
  ``カード``, ``手札``, ``戻す``, not characters), named as written (``する``, not the lemma
  ``為る``), light verbs and the question frame left out — the candidates for synonyms and
  thresholds;
- the most frequent zero-hit queries and a day-by-day series (days in Asia/Tokyo).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import asdict, dataclass
from datetime import date, datetime
from functools import cache
from typing import TYPE_CHECKING, Any

from sqlalchemy import Integer, func, literal_column, select

from tansaku.appdb.events import ANSWER_QUERY_TYPE
from tansaku.appdb.models import Feedback, SearchEvent
from tansaku.appdb.rows import Period

if TYPE_CHECKING:
    from sqlalchemy.sql.elements import ColumnElement

    from tansaku.appdb.db import AppDB
    from tansaku.text.analyzer import Analyzer

TIME_ZONE = "Asia/Tokyo"


def _rate(part: int, whole: int) -> float | None:
    return round(part / whole, 4) if whole else None


@dataclass(frozen=True, slots=True)
class QueryTypeStats:
    query_type: str
    searches: int
    zero_hit: int
    zero_hit_rate: float | None
    feedback: int
    negative: int
    negative_rate: float | None


@dataclass(frozen=True, slots=True)
class DayStats:
    date: date
    searches: int
    zero_hit: int
    feedback: int
    negative: int
    questions: int = 0
    unanswered: int = 0


@dataclass(frozen=True, slots=True)
class FeedbackStats:
    team: str
    start: datetime
    end: datetime
    searches: int
    zero_hit: int
    zero_hit_rate: float | None
    feedback: int
    positive: int
    negative: int
    negative_rate: float | None
    by_query_type: tuple[QueryTypeStats, ...]
    top_negative_terms: tuple[tuple[str, int], ...]
    top_zero_hit_queries: tuple[tuple[str, int], ...]
    daily: tuple[DayStats, ...]
    questions: int = 0
    unanswered: int = 0
    unanswered_rate: float | None = None

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["start"] = self.start.isoformat()
        out["end"] = self.end.isoformat()
        out["top_negative_terms"] = [{"term": t, "count": n} for t, n in self.top_negative_terms]
        out["top_zero_hit_queries"] = [
            {"query": q, "count": n} for q, n in self.top_zero_hit_queries
        ]
        out["daily"] = [{**asdict(d), "date": d.date.isoformat()} for d in self.daily]
        return out


def _day(db: AppDB, column: Any) -> ColumnElement[Any]:
    """The Tokyo calendar day of a UTC timestamp column, as ``YYYY-MM-DD`` text."""
    if db.backend == "postgresql":
        local = func.timezone(TIME_ZONE, column)
        return func.to_char(local, literal_column("'YYYY-MM-DD'"))
    return func.strftime("%Y-%m-%d", column, "+9 hours")  # Tokyo has no DST


NO_CONTENT_TERMS = frozenset(
    {"為る", "居る", "有る", "成る", "出来る", "良い", "御", "さん", "様", "事", "物", "どう", "何"}
)
"""Analysed terms (normalised forms) that say nothing about what a query was after: light verbs
(する, いる, ある, なる, できる), honorific affixes, どう / 何 of the question frame."""


@cache
def _dictionary_analyzer() -> Analyzer:
    from tansaku.text.analyzer import Analyzer

    return Analyzer(form="dictionary")


def negative_terms(queries: list[str], limit: int) -> list[tuple[str, int]]:
    """The most frequent analysed terms, each counted once per query (ties by term).

    Terms are counted by Sudachi's normalised form (身だしなみ and 身嗜み are one term) and
    named by the dictionary form people write (身だしなみ, する — never the lemma 為る), the
    most frequent one where a term was written several ways; :data:`NO_CONTENT_TERMS` are
    left out."""
    from tansaku.text.analyzer import get_analyzer

    analyzer, written = get_analyzer(), _dictionary_analyzer()
    counts: Counter[str] = Counter()
    forms: dict[str, Counter[str]] = {}
    for q in queries:
        terms = analyzer.terms(q)
        shown = written.terms(q)
        if len(shown) != len(terms):  # both analyses drop the same morphemes; never seen
            shown = terms
        seen: set[str] = set()
        for term, form in zip(terms, shown, strict=True):
            if term in NO_CONTENT_TERMS:
                continue
            forms.setdefault(term, Counter())[form] += 1
            seen.add(term)
        counts.update(seen)
    named: Counter[str] = Counter()
    for term, n in counts.items():
        named[forms[term].most_common(1)[0][0]] += n
    return sorted(named.items(), key=lambda kv: (-kv[1], kv[0]))[:limit]


def feedback_stats(
    db: AppDB, team: str, start: datetime, end: datetime, *, top_terms: int = 20
) -> FeedbackStats:
    """Statistics of ``team`` over ``[start, end)`` (aware datetimes)."""
    period = Period(start, end)
    in_range_ev = (SearchEvent.team == team, *period.of(SearchEvent.created_at))
    zero = func.coalesce(func.sum(SearchEvent.zero_hit.cast(Integer)), 0)
    ev_day = _day(db, SearchEvent.created_at)
    is_answer = SearchEvent.query_type == ANSWER_QUERY_TYPE
    fb_day = _day(db, Feedback.created_at)
    with db.read() as s:
        ev_types = s.execute(
            select(SearchEvent.query_type, func.count(), zero)
            .where(*in_range_ev)
            .group_by(SearchEvent.query_type)
        ).all()
        ev_days = s.execute(
            select(ev_day, is_answer, func.count(), zero)
            .where(*in_range_ev)
            .group_by(ev_day, is_answer)
        ).all()
        fb_rows = s.execute(
            select(Feedback.rating, Feedback.meta, fb_day).where(
                Feedback.team == team, *period.of(Feedback.created_at)
            )
        ).all()
    top_zero = db.events.top_zero_hit(team, period)

    per_type: dict[str, list[int]] = {}  # type -> [searches, zero, feedback, negative]
    questions = unanswered = 0
    for qtype, n, z in ev_types:
        if qtype == ANSWER_QUERY_TYPE:  # answers: counted apart, never as searches
            questions, unanswered = int(n), int(z)
            per_type.setdefault(str(qtype), [0, 0, 0, 0])
        else:
            per_type.setdefault(str(qtype), [0, 0, 0, 0])[0:2] = [int(n), int(z)]
    # day -> [searches, zero, feedback, negative, questions, unanswered]
    days: dict[str, list[int]] = {}
    for d, answer, n, z in ev_days:
        slot = slice(4, 6) if answer else slice(0, 2)
        days.setdefault(str(d), [0] * 6)[slot] = [int(n), int(z)]
    negative_queries: list[str] = []
    for rating, meta, d in fb_rows:
        qtype = str((meta or {}).get("query_type") or "")
        row = per_type.setdefault(qtype, [0, 0, 0, 0])
        day = days.setdefault(str(d), [0] * 6)
        row[2] += 1
        day[2] += 1
        if rating < 0:
            row[3] += 1
            day[3] += 1
            negative_queries.append(str((meta or {}).get("query") or ""))

    searches = sum(v[0] for v in per_type.values())
    zero_hit = sum(v[1] for v in per_type.values())
    total_fb = len(fb_rows)
    negative = len(negative_queries)
    return FeedbackStats(
        team=team,
        start=start,
        end=end,
        searches=searches,
        zero_hit=zero_hit,
        zero_hit_rate=_rate(zero_hit, searches),
        feedback=total_fb,
        positive=total_fb - negative,
        negative=negative,
        negative_rate=_rate(negative, total_fb),
        by_query_type=tuple(
            QueryTypeStats(t, v[0], v[1], _rate(v[1], v[0]), v[2], v[3], _rate(v[3], v[2]))
            for t, v in sorted(per_type.items())
        ),
        top_negative_terms=tuple(negative_terms(negative_queries, top_terms)),
        top_zero_hit_queries=tuple(top_zero),
        daily=tuple(DayStats(date.fromisoformat(d), *v) for d, v in sorted(days.items())),
        questions=questions,
        unanswered=unanswered,
        unanswered_rate=_rate(unanswered, questions),
    )

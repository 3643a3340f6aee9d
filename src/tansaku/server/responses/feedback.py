"""``/api/feedback``, ``/api/feedback/stats`` and the unanswered log of ``/api/unanswered``.

A query type's line of the stats is the library's :class:`~tansaku.appdb.stats.QueryTypeStats`
itself (the body writes its fields as they are)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from tansaku.appdb.stats import QueryTypeStats


class FeedbackRecord(BaseModel):
    """保存した評価。meta はサーバーの記録から組み立てた検索・回答の情報。"""

    id: int
    query_id: str
    team: str
    rating: int
    reason: str | None
    meta: dict[str, Any]
    created_at: str


class TermCount(BaseModel):
    term: str
    count: int


class QueryCount(BaseModel):
    query: str
    count: int


class DayStats(BaseModel):
    date: str
    searches: int
    zero_hit: int
    feedback: int
    negative: int
    questions: int
    unanswered: int


class FeedbackStats(BaseModel):
    """期間の検索数・0件率・評価数・未回答率と、クエリ種別・日ごとの内訳(日は東京の日付)。"""

    team: str
    start: str
    end: str
    searches: int
    zero_hit: int
    zero_hit_rate: float | None
    feedback: int
    positive: int
    negative: int
    negative_rate: float | None
    by_query_type: list[QueryTypeStats]
    top_negative_terms: list[TermCount]
    top_zero_hit_queries: list[QueryCount]
    daily: list[DayStats]
    questions: int
    unanswered: int
    unanswered_rate: float | None


class UnansweredQuestion(BaseModel):
    id: int
    asked_at: str
    team: str
    collection: str
    question: str
    reason: str
    tools: list[str]
    resolved: bool
    resolved_at: str | None
    resolution: str | None


class UnansweredPage(BaseModel):
    """未回答の質問(新しい順)。total は条件に合う件数。"""

    total: int
    offset: int
    limit: int
    unanswered: list[UnansweredQuestion] = Field(description="このページの質問")

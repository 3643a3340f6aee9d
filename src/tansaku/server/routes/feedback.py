"""``POST /api/feedback`` and ``GET /api/feedback/stats`` (design 004).

The body carries ``query_id``, ``rating`` (1 👍; -1 or 0 👎, stored as -1) and an optional
``reason`` (or ``user_reason``), in the design's shape too (``query_text``, ``answer_text``,
``session_id``, ``meta``). The stored meta (query, axes and namespaces, top titles and scores,
min_score, query type, answer text, session, index and embedding versions) is rebuilt by appdb
from the team's stored event (:mod:`tansaku.appdb.feedback_meta`) — the client's ``query_text``
and ``meta`` are never read; its ``answer_text`` and ``session_id`` only where the server has
none. 201 on success,
404 for a query_id the team never searched, 429 past 10 a minute / 100 an hour per API key (or
per client address without a key), with ``Retry-After``.
"""

from __future__ import annotations

import hashlib
from datetime import UTC, date, datetime, time, timedelta
from functools import partial
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import Response

from tansaku.errors import InvalidRequest
from tansaku.server.auth import presented_key
from tansaku.server.dates import DateFrom, DateTo, check_date_text
from tansaku.server.events import collection_versions
from tansaku.server.respond import json_response
from tansaku.server.responses import WRITE, documented
from tansaku.server.responses.feedback import FeedbackRecord, FeedbackStats
from tansaku.server.schemas import FeedbackBody
from tansaku.server.state import StateDep, TeamDep
from tansaku.text.dates import TOKYO

router = APIRouter(tags=["フィードバック"])
DEFAULT_DAYS = 30


def client_of(request: Request) -> str:
    """The rate-limit identity: the API key (as a hash prefix, never the key) or the address."""
    key = presented_key(request)
    if key:
        return "key:" + hashlib.sha256(key.encode()).hexdigest()[:16]
    return f"ip:{request.client.host if request.client else 'unknown'}"


@router.post(
    "/api/feedback",
    status_code=201,
    summary="検索結果の評価",
    responses=documented(FeedbackRecord, *WRITE, 404, 429, status=201, description="保存した"),
)
def submit(body: FeedbackBody, request: Request, state: StateDep, team: TeamDep) -> Response:
    """例: `{"query_id": "…", "rating": -1, "reason": "ヒールカードが出ない"}`。
    rating は 1(👍)、-1 または 0(👎)。設計 004 の形(`query_text`, `answer_text`,
    `user_reason`, `meta`)も受け付けるが、検索のメタ情報はサーバーの記録から組み立てる。"""
    state.flush_events()  # the search it rates may have answered a moment ago
    record = state.appdb.feedback.submit(
        team,
        query_id=body.query_id,
        rating=body.stored_rating,
        reason=body.the_reason,
        client=client_of(request),
        answer_text=body.answer_text,
        session_id=body.session_id,
        versions=partial(collection_versions, state.client),
        correct=(body.correct_collection, body.correct_doc_id) if body.correct_doc_id else None,
        exists=partial(_has_doc, state, team),
    )
    state.metrics.feedback_total.labels(
        rating=str(record.rating), query_type=str(record.meta.get("query_type") or "unknown")
    ).inc()
    data = record.to_dict()
    data.pop("client", None)
    return json_response(data, 201)


def _has_doc(state: Any, team: str, collection: str, doc_id: str) -> bool:
    """Whether the team's part of ``collection`` holds the document ``doc_id``."""
    from tansaku.errors import TansakuError
    from tansaku.store.base import Filter

    try:
        with state.client.reading(collection) as col:
            found = col.store.scan(team, Filter(doc_ids=(doc_id,)), with_text=False)
            return any(True for _ in found)
    except TansakuError:
        return False


def parse_bound(value: str | None, *, end: bool, parameter: str | None = None) -> datetime | None:
    """``YYYY-MM-DD`` (a whole Asia/Tokyo day: ``to`` is inclusive) or an ISO datetime (without
    an offset: Tokyo time); a day outside the supported range is a 422 naming ``parameter``
    (default ``to`` / ``from``). Tokyo, as the pages show times and the dashboard counts days."""
    if value is None or not value.strip():
        return None
    check_date_text(value, parameter or ("to" if end else "from"))
    text = value.strip()
    try:
        if len(text) == 10:
            day = date.fromisoformat(text)
            return datetime.combine(day + timedelta(days=1) if end else day, time(), TOKYO)
        parsed = datetime.fromisoformat(text)
    except ValueError:
        raise InvalidRequest(
            f"日付「{text[:40]}」を読めません。YYYY-MM-DD か YYYY-MM-DDTHH:MM で指定してください"
        ) from None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=TOKYO)


@router.get(
    "/api/feedback/stats",
    summary="フィードバック集計",
    responses=documented(FeedbackStats, 400, 422),
)
def stats(
    state: StateDep,
    team: TeamDep,
    date_from: DateFrom = None,
    date_to: DateTo = None,
) -> Response:
    """期間(既定: 直近30日)の検索数・0件率・評価数・クエリ種別ごとの 👎 率、👎 のクエリに
    多い語(形態素解析)。例: `/api/feedback/stats?from=2025-12-01&to=2025-12-31`"""
    end = parse_bound(date_to, end=True) or datetime.now(UTC)
    start = parse_bound(date_from, end=False) or end - timedelta(days=DEFAULT_DAYS)
    if start >= end:
        raise InvalidRequest("from は to より前の日付にしてください")
    state.flush_events()  # every search answered so far is counted
    result = state.appdb.feedback.feedback_stats(team, start, end)
    return json_response(result.to_dict())

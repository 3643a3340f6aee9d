"""Feedback on searches (design 004): 👍 (+1) / 👎 (-1) with an optional reason.

``submit`` validates the input, enforces the rate limit *in the database* (so several server
workers agree), looks up the stored search event of ``query_id`` in the caller's team and stores
the row with a ``meta`` rebuilt from that event (:mod:`tansaku.appdb.feedback_meta`) — the
query meta is never the client's; of what it sends only ``query_id``, ``rating`` and ``reason``
are stored as given (an answer text and a session id only where the server has none).

Rate limit: :data:`RATE_LIMITS` (10 a minute and 100 an hour) per client, where the client is
``key:<prefix>`` for an API key or ``ip:<address>`` without one. The count and the insert run in
one write transaction serialised per client (``BEGIN IMMEDIATE`` on SQLite, a transaction-level
advisory lock on PostgreSQL), so concurrent requests cannot both slip under the limit.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from sqlalchemy import func, select

from tansaku.appdb.errors import InvalidInput, RateLimited
from tansaku.appdb.events import stored_event
from tansaku.appdb.feedback_meta import rebuild_meta
from tansaku.appdb.models import Feedback, utcnow
from tansaku.appdb.rows import ALL, EVER, JsonRecord, Page, Period, Repo, record_of
from tansaku.appdb.sanitize import clean_reason

if TYPE_CHECKING:
    from tansaku.appdb.stats import FeedbackStats

#: (most accepted, within this window, the window's name in messages)
RATE_LIMITS: tuple[tuple[int, timedelta, str], ...] = (
    (10, timedelta(minutes=1), "1分"),
    (100, timedelta(hours=1), "1時間"),
)
MAX_CLIENT_CHARS = 128


@dataclass(frozen=True, slots=True)
class FeedbackRecord(JsonRecord):
    id: int
    query_id: str
    team: str
    rating: int
    reason: str | None
    client: str
    meta: dict[str, Any]
    created_at: datetime


def _record(row: Feedback) -> FeedbackRecord:
    return record_of(FeedbackRecord, row)


def check_rating(rating: object) -> int:
    if isinstance(rating, bool) or rating not in (-1, 1):
        raise InvalidInput(f"rating は 1(良い)か -1(悪い)で指定してください(指定値: {rating!r})")
    return int(rating)  # type: ignore[call-overload]


def check_correct(
    searched: str | None,
    correct: tuple[str | None, str],
    exists: Callable[[str, str], bool] | None,
) -> dict[str, str]:
    """``{"collection", "doc_id"}`` of a chosen correct result, checked against the collections
    the search covered (``searched``: one name or several joined by ", ")."""
    collections = [c.strip() for c in (searched or "").split(",") if c.strip()]
    collection, doc_id = correct
    if not isinstance(doc_id, str) or not doc_id.strip():
        raise InvalidInput("正しい結果の文書 ID を指定してください")
    if collection is None:
        if len(collections) != 1:
            raise InvalidInput(
                "この検索は複数のコレクションにまたがります。"
                "正しい結果のコレクションも指定してください"
            )
        collection = collections[0]
    if collection not in collections:
        raise InvalidInput(
            f"コレクション「{collection}」はこの検索の対象ではありません"
            f"(対象: {'、'.join(collections) or 'なし'})"
        )
    if exists is not None and not exists(collection, doc_id.strip()):
        raise InvalidInput(f"正しい結果「{doc_id}」はコレクション「{collection}」にありません")
    return {"collection": collection, "doc_id": doc_id.strip()}


def check_client(client: str) -> str:
    if not client or len(client) > MAX_CLIENT_CHARS:
        raise ValueError(f"feedback client id must be 1..{MAX_CLIENT_CHARS} chars: {client!r}")
    return client


def _retry_after(times: list[datetime], limit: int, window: timedelta, now: datetime) -> int:
    """Seconds until the oldest of the last ``limit`` submissions leaves the window."""
    oldest = sorted(times, reverse=True)[limit - 1]
    return max(1, math.ceil((oldest + window - now).total_seconds()))


class FeedbackRepo(Repo):
    """Feedback of a team (``db.feedback``)."""

    def submit(
        self,
        team: str,
        *,
        query_id: str,
        rating: int,
        reason: str | None = None,
        client: str,
        now: datetime | None = None,
        answer_text: str | None = None,
        session_id: str | None = None,
        versions: Callable[[str], Mapping[str, str]] | None = None,
        correct: tuple[str | None, str] | None = None,
        exists: Callable[[str, str], bool] | None = None,
    ) -> FeedbackRecord:
        """Store a rating of the team's search ``query_id``.

        The meta is rebuilt on the server (:func:`tansaku.appdb.feedback_meta.rebuild_meta`):
        ``answer_text`` and ``session_id`` are the client's, used only where the server has
        none; ``versions(collection)`` gives the collection's ``index_version`` and
        ``embedding_version`` now, asked only for an event recorded without them.

        ``correct``: ``(collection or None, doc id)`` — the result the user chose as the right
        one (「正しい結果はこれ」), in a collection the search covered (None: its only one) and
        existing there (``exists(collection, doc_id)``); kept as ``meta["correct"]``, it makes
        the query a judgement (:meth:`judgements`).

        Raises :class:`InvalidInput` (rating, reason, the correct result), :class:`RateLimited`
        past the limits of ``client`` and :class:`NotFound` when the team has no search with
        that ``query_id``."""
        rating = check_rating(rating)
        cleaned = clean_reason(reason)
        client = check_client(client)
        if not isinstance(query_id, str) or not query_id.strip():
            raise InvalidInput("query_id を指定してください(検索結果に含まれる ID です)")
        now = now or utcnow()
        longest = max(w for _, w, _ in RATE_LIMITS)
        with self.db.write() as s:
            self.db.lock_in(s, f"feedback:{team}:{client}")
            times = list(
                s.scalars(
                    select(Feedback.created_at)
                    .where(
                        Feedback.team == team,
                        Feedback.client == client,
                        Feedback.created_at > now - longest,
                    )
                    .order_by(Feedback.created_at.desc())
                    .limit(max(n for n, _, _ in RATE_LIMITS))
                )
            )
            for limit, window, name in RATE_LIMITS:
                recent = [t for t in times if t > now - window]
                if len(recent) >= limit:
                    raise RateLimited(limit, name, _retry_after(recent, limit, window, now))
            event = stored_event(s, team, query_id)
            meta = rebuild_meta(
                s, event, answer_text=answer_text, session_id=session_id, versions=versions
            )
            if correct is not None:
                meta["correct"] = check_correct(event.collection, correct, exists)
            row = Feedback(
                query_id=query_id,
                team=team,
                rating=rating,
                reason=cleaned,
                client=client,
                meta=meta,
                created_at=now,
            )
            s.add(row)
            s.flush()
            return _record(row)

    def find(
        self, team: str, period: Period = EVER, *, rating: int | None = None, page: Page = ALL
    ) -> list[FeedbackRecord]:
        """The team's feedback in ``period``, oldest first."""
        stmt = select(Feedback).where(Feedback.team == team, *period.of(Feedback.created_at))
        if rating is not None:
            stmt = stmt.where(Feedback.rating == check_rating(rating))
        stmt = stmt.order_by(Feedback.created_at, Feedback.id)
        with self.db.read() as s:
            return [_record(r) for r in s.scalars(page.of(stmt))]

    def count(self, team: str, period: Period) -> tuple[int, int]:
        """(all, negative) feedback of the team in ``period``."""
        with self.db.read() as s:
            rows = s.execute(
                select(Feedback.rating, func.count())
                .where(Feedback.team == team, *period.of(Feedback.created_at))
                .group_by(Feedback.rating)
            ).all()
        by = {int(r): int(n) for r, n in rows}
        return sum(by.values()), by.get(-1, 0)

    def feedback_stats(
        self, team: str, start: datetime, end: datetime, *, top_terms: int = 20
    ) -> FeedbackStats:
        """Totals, negative rate by query type, zero-hit rate and the most frequent analysed
        terms of negatively rated queries (see :mod:`tansaku.appdb.stats`)."""
        from tansaku.appdb.stats import feedback_stats

        return feedback_stats(self.db, team, start, end, top_terms=top_terms)

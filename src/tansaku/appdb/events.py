"""Search events in the database: one row per search (the SEARCH_EVENT), keyed by ``query_id``.

Feedback is rebuilt from these rows and the dashboard counts them. ``record`` takes the JSON
event of :func:`tansaku.search.events.build_event` (the same dict the JSON-lines log writes);
``record_result`` builds it from a :class:`~tansaku.search.types.SearchResult` and adds the top
titles. Recording the same ``query_id`` twice keeps the first row.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

from sqlalchemy import Integer, func, select
from sqlalchemy.dialects import postgresql, sqlite

from tansaku.appdb.models import SearchEvent, utcnow
from tansaku.appdb.rows import EVER, JsonRecord, Page, Period, Repo, owned, record_of

if TYPE_CHECKING:
    from sqlalchemy import ColumnElement
    from sqlalchemy.orm import Session

    from tansaku.search.types import SearchResult

TOP_N = 5
#: The events :meth:`EventRepo.find` lists unless asked for another page.
FIRST = Page(100)
#: The query type of the server's answer events (``POST /api/ask``): answers, not searches — the
#: zero-hit counts leave them out, the unanswered rate counts them.
ANSWER_QUERY_TYPE = "ask"


@dataclass(frozen=True, slots=True)
class StoredEvent(JsonRecord):
    query_id: str
    team: str
    collection: str
    query: str
    normalized_query: str
    query_type: str
    expanded_queries: tuple[str, ...]
    axes: tuple[Mapping[str, Any], ...]
    namespaces: tuple[str, ...]
    stage: int
    min_score: float | None
    top_k: int | None
    top_doc_ids: tuple[str, ...]
    top_titles: tuple[str, ...]
    top_scores: tuple[float, ...]
    hit_count: int
    zero_hit: bool
    timings_ms: Mapping[str, float]
    created_at: datetime


def _stored(row: SearchEvent) -> StoredEvent:
    return record_of(StoredEvent, row)


def stored_event(s: Session, team: str, query_id: str) -> SearchEvent:
    """The team's search event ``query_id`` (``NotFound`` for another team's)."""
    return owned(s, SearchEvent, team, query_id, "検索 ID", key="query_id")


def _query_type(event: Mapping[str, Any]) -> str:
    c = event.get("classification")
    if isinstance(c, Mapping):
        return str(c.get("label") or "")
    return str(event.get("query_type") or c or "")


def _row_values(team: str, event: Mapping[str, Any], titles: Sequence[str]) -> dict[str, Any]:
    known = {"event", "query_id", "ts", "tenant", "collection", "query", "normalized_query"}
    known |= {"classification", "query_type", "expanded_queries", "axes", "namespaces"}
    known |= {"retry_stage", "min_score", "top_k", "top5_scores", "top5_doc_ids", "hit_count"}
    known |= {"zero_hit", "timings_ms"}
    scores = [float(s) for s in event.get("top5_scores") or []][:TOP_N]
    return {
        "query_id": str(event["query_id"]),
        "team": team,
        "collection": str(event.get("collection") or ""),
        "query": str(event.get("query") or ""),
        "normalized_query": str(event.get("normalized_query") or ""),
        "query_type": _query_type(event),
        "expanded_queries": [str(q) for q in event.get("expanded_queries") or []],
        "axes": [dict(a) for a in event.get("axes") or []],
        "namespaces": [str(n) for n in event.get("namespaces") or []],
        "stage": int(event.get("retry_stage") or 0),
        "min_score": None if event.get("min_score") is None else float(event["min_score"]),
        "top_k": None if event.get("top_k") is None else int(event["top_k"]),
        "top_doc_ids": [str(d) for d in event.get("top5_doc_ids") or []][:TOP_N],
        "top_titles": [str(t) for t in titles][:TOP_N],
        "top_scores": scores,
        "hit_count": int(event.get("hit_count") or 0),
        "zero_hit": bool(event.get("zero_hit", not scores)),
        "timings_ms": {str(k): float(v) for k, v in (event.get("timings_ms") or {}).items()},
        "extra": {k: v for k, v in event.items() if k not in known},
    }


@dataclass(frozen=True, slots=True)
class EventRow:
    """One search event waiting to be stored: the team (from its credentials), the
    SEARCH_EVENT dict, the titles of its top hits and when it happened (None: when stored)."""

    team: str
    event: Mapping[str, Any]
    titles: tuple[str, ...] = ()
    at: datetime | None = None


def _checked_values(row: EventRow) -> dict[str, Any]:
    tenant = row.event.get("tenant")
    if tenant not in (None, row.team):
        raise ValueError(f"event of tenant {tenant!r} recorded for team {row.team!r}")
    if not row.event.get("query_id"):
        raise ValueError("a search event needs its query_id")
    values = _row_values(row.team, row.event, row.titles)
    values["created_at"] = row.at or utcnow()
    return values


class EventRepo(Repo):
    """Search events of a team (``db.events``)."""

    def record(
        self,
        team: str,
        event: Mapping[str, Any],
        *,
        titles: Sequence[str] = (),
        at: datetime | None = None,
    ) -> None:
        """Store ``event`` (a SEARCH_EVENT dict) for ``team``; a repeated query_id is ignored.

        The team is the caller's (from its credentials); an event naming another tenant is a
        programming error and raises ``ValueError``."""
        self.record_many([EventRow(team, event, tuple(titles), at)])

    def record_many(self, rows: Sequence[EventRow]) -> None:
        """Store ``rows`` in one transaction (the server writes its searches in batches), each
        checked as :meth:`record` checks one; a repeated query_id is ignored."""
        if not rows:
            return
        values = [_checked_values(row) for row in rows]
        dialect = postgresql if self.db.backend == "postgresql" else sqlite
        stmt = dialect.insert(SearchEvent).on_conflict_do_nothing(index_elements=["query_id"])
        with self.db.write() as s:
            s.execute(stmt, values)

    @staticmethod
    def row_of(
        team: str, result: SearchResult, *, extra: Mapping[str, Any] | None = None
    ) -> EventRow:
        """The row :meth:`record_result` stores for ``result`` (built now, written later)."""
        from tansaku.search.events import build_event

        titles = [str(h.record.metadata.get("title") or h.doc_id) for h in result.hits[:TOP_N]]
        event = {**(extra or {}), **build_event(result)}
        return EventRow(team, event, tuple(titles), utcnow())

    def record_result(
        self,
        team: str,
        result: SearchResult,
        *,
        at: datetime | None = None,
        extra: Mapping[str, Any] | None = None,
    ) -> None:
        """Store the event of ``result`` with the titles of its top hits; ``extra`` (such as
        ``index_version``) is added to the event and kept in the row's ``extra``."""
        row = self.row_of(team, result, extra=extra)
        self.record_many([EventRow(row.team, row.event, row.titles, at or row.at)])

    def get(self, team: str, query_id: str) -> StoredEvent:
        with self.db.read() as s:
            return _stored(stored_event(s, team, query_id))

    def find(
        self, team: str, period: Period = EVER, *, zero_hit: bool | None = None, page: Page = FIRST
    ) -> list[StoredEvent]:
        """The team's events in ``period``, newest first."""
        stmt = select(SearchEvent).where(
            SearchEvent.team == team, *period.of(SearchEvent.created_at)
        )
        if zero_hit is not None:
            stmt = stmt.where(SearchEvent.zero_hit.is_(zero_hit))
        stmt = stmt.order_by(SearchEvent.id.desc())
        with self.db.read() as s:
            return [_stored(r) for r in s.scalars(page.of(stmt))]

    def count(self, team: str, period: Period = EVER) -> tuple[int, int]:
        """(searches, zero-hit searches) of the team in ``period``; answer events
        (:data:`ANSWER_QUERY_TYPE`) are no searches."""
        stmt = select(
            func.count(), func.coalesce(func.sum(SearchEvent.zero_hit.cast(Integer)), 0)
        ).where(*searches_in(team, period))
        with self.db.read() as s:
            total, zero = s.execute(stmt).one()
        return int(total), int(zero)

    def top_zero_hit(self, team: str, period: Period, *, limit: int = 10) -> list[tuple[str, int]]:
        """The most frequent zero-hit queries (normalised) of the team's searches in ``period``
        (an unanswered question is no zero-hit search)."""
        key = func.coalesce(func.nullif(SearchEvent.normalized_query, ""), SearchEvent.query)
        stmt = (
            select(key, func.count())
            .where(SearchEvent.zero_hit.is_(True), *searches_in(team, period))
            .group_by(key)
            .order_by(func.count().desc(), key)
            .limit(limit)
        )
        with self.db.read() as s:
            return [(str(q), int(n)) for q, n in s.execute(stmt)]


def searches_in(team: str, period: Period) -> tuple[ColumnElement[bool], ...]:
    """The conditions of the team's searches in ``period`` (its answer events left out)."""
    return (
        SearchEvent.team == team,
        SearchEvent.query_type != ANSWER_QUERY_TYPE,
        *period.of(SearchEvent.created_at),
    )

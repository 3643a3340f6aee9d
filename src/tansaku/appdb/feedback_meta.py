"""What a feedback row keeps of the search or answer it rates (design 004), rebuilt on the server.

- The query meta (query, type, axes and namespaces, top titles and scores, min_score, stage)
  comes from the stored event only.
- ``answer_text``: an answer's text as the server stored it in its conversation (the turn that
  carries the event's ``query_id``); only where the server has none (a search shown with a
  client's own summary) the client's text, cleaned, with ``answer_text_source = "client"``.
- ``session_id``: the conversation of an answer event; else the client's session id.
- ``index_version`` / ``embedding_version``: the collection's generation and embedder recorded
  with the search (``versions_at = "search"``); for events recorded without them, those of the
  collection when the rating arrives (``versions_at = "feedback"``).
- A "not found" answer cites nothing; its ``top_titles`` are then those of the searches the
  server ran for that turn (same team, same question, after the question was asked and before
  the answer was recorded), with ``top_titles_source = "searches"``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from datetime import timedelta
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from tansaku.appdb.events import ANSWER_QUERY_TYPE
from tansaku.appdb.models import Message, SearchEvent
from tansaku.appdb.sanitize import strip_controls

MAX_ANSWER_CHARS = 10_000
SESSION_ID = re.compile(r"[0-9A-Za-z_.:-]{1,64}")
#: Without a stored question, a turn's searches are those of this long before its answer.
TURN_WINDOW = timedelta(minutes=2)
VERSION_KEYS = ("index_version", "embedding_version")
TOP_N = 5


def event_meta(event: SearchEvent) -> dict[str, Any]:
    """What a feedback row keeps of its search: from the stored event only."""
    return {
        "query": event.query,
        "normalized_query": event.normalized_query,
        "query_type": event.query_type,
        "collection": event.collection,
        "namespaces": list(event.namespaces),
        "axes": list(event.axes),
        "top_titles": list(event.top_titles),
        "top_doc_ids": list(event.top_doc_ids),
        "top_scores": list(event.top_scores),
        "min_score": event.min_score,
        "stage": event.stage,
        "hit_count": event.hit_count,
        "zero_hit": event.zero_hit,
        "searched_at": event.created_at.isoformat(),
    }


def clean_answer_text(text: str | None) -> str | None:
    """A client's answer text: control characters removed, trimmed, at most
    :data:`MAX_ANSWER_CHARS` characters (cut, it is context, not a message)."""
    if not isinstance(text, str):
        return None
    cleaned = strip_controls(text).strip()
    return cleaned[:MAX_ANSWER_CHARS] or None


def clean_session_id(value: str | None) -> str | None:
    """A client's session id when it looks like one (letters, digits, ``_.:-``, ≤ 64)."""
    if isinstance(value, str) and SESSION_ID.fullmatch(value.strip()):
        return value.strip()
    return None


def _conversation_of(event: SearchEvent) -> str | None:
    cid = (event.extra or {}).get("conversation_id")
    return cid if isinstance(cid, str) and cid else None


def _stored_answer(s: Session, event: SearchEvent) -> str | None:
    """The answer text of the conversation turn that carries the event's query_id."""
    cid = _conversation_of(event)
    if cid is None:
        return None
    rows = s.scalars(
        select(Message)
        .where(
            Message.team == event.team,
            Message.conversation_id == cid,
            Message.role == "assistant",
        )
        .order_by(Message.id.desc())
        .limit(200)
    )
    for row in rows:
        if (row.data or {}).get("query_id") == event.query_id:
            return row.content
    return None


def _turn_start(s: Session, event: SearchEvent) -> Any:
    """Where an answer's turn began at the earliest: :data:`TURN_WINDOW` before its answer, and
    never before the team's previous answer to the same question (its searches are that one's)."""
    earlier = s.scalars(
        select(SearchEvent.created_at)
        .where(
            SearchEvent.team == event.team,
            SearchEvent.query_type == ANSWER_QUERY_TYPE,
            SearchEvent.query == event.query,
            SearchEvent.id < event.id,
        )
        .order_by(SearchEvent.id.desc())
        .limit(1)
    ).first()
    start = event.created_at - TURN_WINDOW
    return max(start, earlier) if earlier is not None else start


def turn_titles(s: Session, event: SearchEvent) -> tuple[list[str], list[str], list[str]]:
    """(titles, doc ids, query ids) of the searches the server ran for an answer's turn: the
    team's search events for the same question recorded in the turn (:func:`_turn_start` to
    the answer), the first-ranked hits first; empty when there were none with a hit."""
    start = _turn_start(s, event)
    rows = s.scalars(
        select(SearchEvent)
        .where(
            SearchEvent.team == event.team,
            SearchEvent.query == event.query,
            SearchEvent.query_id != event.query_id,
            SearchEvent.query_type != ANSWER_QUERY_TYPE,
            SearchEvent.created_at >= start,
            SearchEvent.created_at <= event.created_at,
        )
        .order_by(SearchEvent.id)
    ).all()
    scored: list[tuple[float, int, str, str]] = []
    for row in rows:
        ids = list(row.top_doc_ids) + [""] * len(row.top_titles)
        for rank, title in enumerate(row.top_titles):
            score = row.top_scores[rank] if rank < len(row.top_scores) else 0.0
            scored.append((-float(score), rank, str(title), str(ids[rank])))
    titles: dict[str, str] = {}
    for _, _, title, doc_id in sorted(scored, key=lambda t: (t[1], t[0])):
        titles.setdefault(title, doc_id)
    picked = list(titles.items())[:TOP_N]
    return [t for t, _ in picked], [d for _, d in picked], [r.query_id for r in rows]


def rebuild_meta(
    s: Session,
    event: SearchEvent,
    *,
    answer_text: str | None = None,
    session_id: str | None = None,
    versions: Callable[[str], Mapping[str, str]] | None = None,
) -> dict[str, Any]:
    """The meta of a feedback row on ``event`` (see the module docstring); ``versions`` gives
    a collection's current versions, asked only for an event recorded without them."""
    meta = event_meta(event)
    stored = _stored_answer(s, event)
    client_text = clean_answer_text(answer_text)
    meta["answer_text"] = stored if stored is not None else client_text
    meta["answer_text_source"] = (
        "server" if stored is not None else ("client" if client_text else None)
    )
    meta["session_id"] = _conversation_of(event) or clean_session_id(session_id)
    extra = event.extra or {}
    if any(extra.get(k) for k in VERSION_KEYS):
        meta.update({k: extra.get(k) or None for k in VERSION_KEYS})
        meta["versions_at"] = "search"
    else:
        given = versions(event.collection) if versions and event.collection else {}
        meta.update({k: given.get(k) or None for k in VERSION_KEYS})
        meta["versions_at"] = "feedback" if any(given.get(k) for k in VERSION_KEYS) else None
    if event.query_type == ANSWER_QUERY_TYPE and event.zero_hit and not event.top_titles:
        titles, doc_ids, query_ids = turn_titles(s, event)
        if titles:
            meta["top_titles"], meta["top_doc_ids"] = titles, doc_ids
            meta["top_titles_source"] = "searches"
            meta["searched_query_ids"] = query_ids
    return meta

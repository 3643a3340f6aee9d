"""The agent's conversation history stored in appdb (``new``, ``exists``, ``append``,
``history``, ``list``); :class:`tansaku.agent.conversations.Conversations`, the name of earlier
versions, is this class.

``StoredConversations(home / "appdb.sqlite")`` takes the legacy file path like the class it
replaces: the workspace is the file's folder and the conversations of an existing file are
copied into appdb once, on first use, keeping their ids.

An assistant turn may carry the ``query_id`` of the answer event recorded for it (the server's
``ANSWER_EVENT``, what ``POST /api/feedback`` rates): kept in the message's JSON ``data`` next
to its citations, so no schema change was needed. Turns stored before it was kept have none
(:attr:`StoredTurn.query_id` is ``None``) and cannot be rated afterwards.
"""

from __future__ import annotations

import builtins
import re
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sqlalchemy import select

from tansaku.appdb.errors import NotFound
from tansaku.appdb.handle import AppDBHandle
from tansaku.appdb.models import Feedback, Message
from tansaku.appdb.rows import Page

if TYPE_CHECKING:
    from tansaku.agent.conversations import ConversationInfo, Role, Turn
    from tansaku.agent.events import Citation
    from tansaku.appdb.db import AppDB

_ID = re.compile(r"[0-9a-f]{32}")
_QUERY_ID = re.compile(r"[0-9A-Za-z_-]{1,64}")
#: How many of the newest assistant turns :meth:`StoredConversations.attach_query_id` looks at.
ATTACH_WINDOW = 5


@dataclass(frozen=True, slots=True)
class StoredTurn:
    """A stored turn with what rating it needs: the ``query_id`` of its answer event (assistant
    turns recorded by the server; ``None`` for questions and older answers) and the team's
    latest rating of it (``1``, ``-1`` or ``None``)."""

    turn: Turn
    query_id: str | None = None
    rating: int | None = None

    def to_dict(self) -> dict[str, Any]:
        return self.turn.to_dict() | {"query_id": self.query_id, "rating": self.rating}


def _import_legacy(db: AppDB, path: Path) -> None:
    from tansaku.appdb.legacy_history import import_legacy_conversations

    import_legacy_conversations(db, path)


class StoredConversations:
    """Conversation history of a workspace in appdb; a team never reads or writes another
    team's conversation (:class:`~tansaku.agent.conversations.ConversationNotFound`)."""

    def __init__(self, target: Path | AppDB) -> None:
        self._handle = AppDBHandle(target, _import_legacy)
        self.path = self._handle.path

    @property
    def db(self) -> AppDB:
        return self._handle.get()

    @staticmethod
    def _not_found(conversation_id: str) -> Exception:
        from tansaku.agent.conversations import ConversationNotFound

        return ConversationNotFound(conversation_id)

    @contextmanager
    def _owned(self, conversation_id: str, team: str) -> Iterator[None]:
        """Raises ``ConversationNotFound`` unless ``team`` owns the conversation, before the
        block and for a ``NotFound`` inside it (the conversation deleted meanwhile)."""
        if not self.exists(conversation_id, team):
            raise self._not_found(conversation_id)
        try:
            yield
        except NotFound:
            raise self._not_found(conversation_id) from None

    def new(self, team: str) -> str:
        """A new conversation of ``team``; its id (32 hex digits, unguessable)."""
        return self.db.conversations.create(team).id

    def exists(self, conversation_id: str, team: str) -> bool:
        return bool(_ID.fullmatch(conversation_id or "")) and self.db.conversations.exists(
            team, conversation_id
        )

    def append(
        self,
        conversation_id: str,
        team: str,
        role: Role,
        text: str,
        citations: Sequence[Citation] = (),
        *,
        query_id: str | None = None,
    ) -> None:
        """Add a turn; raises ``ConversationNotFound`` unless ``team`` owns it. ``query_id``
        (assistant turns only): the answer event the turn's rating goes to."""
        if role not in ("user", "assistant"):
            raise ValueError(f"role must be 'user' or 'assistant', got {role!r}")
        data: dict[str, Any] = {"citations": [c.to_dict() for c in citations]}
        if query_id is not None:
            if role != "assistant":
                raise ValueError("only an assistant turn carries a query_id")
            data["query_id"] = _checked_query_id(query_id)
        with self._owned(conversation_id, team):
            self.db.conversations.add_message(
                team, conversation_id, role=role, content=text, data=data
            )

    def attach_query_id(self, conversation_id: str, team: str, query_id: str, *, text: str) -> bool:
        """Record ``query_id`` (the answer event just stored for the turn) on the newest
        assistant turn of the conversation that has the answer ``text`` and no query_id yet;
        whether one was found. Raises ``ConversationNotFound`` unless ``team`` owns it."""
        query_id = _checked_query_id(query_id)
        with self._owned(conversation_id, team), self.db.write() as s:
            rows = s.scalars(
                select(Message)
                .where(
                    Message.team == team,
                    Message.conversation_id == conversation_id,
                    Message.role == "assistant",
                )
                .order_by(Message.id.desc())
                .limit(ATTACH_WINDOW)
            )
            for row in rows:
                if row.content == text and not row.data.get("query_id"):
                    row.data = {**row.data, "query_id": query_id}  # a new dict: saved as changed
                    return True
        return False

    def history(self, conversation_id: str, team: str, limit: int = 20) -> builtins.list[Turn]:
        """The last ``limit`` turns, oldest first."""
        return [t.turn for t in self.turns(conversation_id, team, limit, ratings=False)]

    def turns(
        self, conversation_id: str, team: str, limit: int = 20, *, ratings: bool = True
    ) -> builtins.list[StoredTurn]:
        """The last ``limit`` turns, oldest first, with the query_id of each answer and (with
        ``ratings``) the team's latest rating of it."""
        from tansaku.agent.conversations import Turn
        from tansaku.agent.events import Citation

        with self._owned(conversation_id, team):
            if limit <= 0:
                return []
            messages = self.db.conversations.messages(team, conversation_id, last=limit)
        out = []
        for m in messages:
            if m.role not in ("user", "assistant"):
                continue
            turn = Turn(
                role="user" if m.role == "user" else "assistant",
                text=m.content,
                citations=tuple(Citation(**c) for c in m.data.get("citations", [])),
                created_at=m.created_at.isoformat(timespec="seconds"),
            )
            qid = m.data.get("query_id") if m.role == "assistant" else None
            out.append(StoredTurn(turn, qid if isinstance(qid, str) and qid else None))
        if not ratings:
            return out
        rated = self._ratings(team, [t.query_id for t in out if t.query_id])
        return [StoredTurn(t.turn, t.query_id, rated.get(t.query_id or "")) for t in out]

    def _ratings(self, team: str, query_ids: builtins.list[str]) -> dict[str, int]:
        """The team's latest rating of each of ``query_ids``."""
        if not query_ids:
            return {}
        with self.db.read() as s:
            rows = s.execute(
                select(Feedback.query_id, Feedback.rating)
                .where(Feedback.team == team, Feedback.query_id.in_(set(query_ids)))
                .order_by(Feedback.created_at, Feedback.id)
            )
            return {qid: int(rating) for qid, rating in rows}

    def list(self, team: str, *, limit: int = 200) -> builtins.list[ConversationInfo]:
        """The team's conversations, most recently used first."""
        from tansaku.agent.conversations import ConversationInfo

        return [
            ConversationInfo(
                id=c.id,
                created_at=c.created_at.isoformat(timespec="seconds"),
                updated_at=c.updated_at.isoformat(timespec="seconds"),
                turns=c.message_count,
                title=c.title,
            )
            for c in self.db.conversations.find(team, Page(limit))
        ]


def _checked_query_id(query_id: str) -> str:
    if not isinstance(query_id, str) or not _QUERY_ID.fullmatch(query_id):
        raise ValueError(f"query_id must be 1-64 letters, digits, '_' or '-', got {query_id!r}")
    return query_id

"""Conversation history: a team's conversations and their messages, oldest message first."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

from sqlalchemy import delete, func, select

from tansaku.appdb.errors import InvalidInput
from tansaku.appdb.models import Conversation, Message, utcnow
from tansaku.appdb.rows import JsonRecord, Page, Repo, owned, record_of

if TYPE_CHECKING:
    from sqlalchemy.orm import Session


ROLES = ("user", "assistant", "tool", "system")
MAX_TITLE_CHARS = 200
#: The conversations :meth:`ConversationRepo.find` lists unless asked for another page.
RECENT = Page(50)


@dataclass(frozen=True, slots=True)
class MessageRecord(JsonRecord):
    id: int
    conversation_id: str
    role: str
    content: str
    data: dict[str, Any]
    created_at: datetime


@dataclass(frozen=True, slots=True)
class ConversationRecord(JsonRecord):
    id: str
    team: str
    title: str
    meta: dict[str, Any]
    created_at: datetime
    updated_at: datetime
    message_count: int = 0


def _conv(row: Conversation, count: int = 0) -> ConversationRecord:
    return record_of(ConversationRecord, row, message_count=count)


def _msg(row: Message) -> MessageRecord:
    return record_of(MessageRecord, row)


def title_of(title: str) -> str:
    return " ".join((title or "").split())[:MAX_TITLE_CHARS]


class ConversationRepo(Repo):
    """Conversations of a team (``db.conversations``)."""

    def create(
        self,
        team: str,
        *,
        title: str = "",
        meta: dict[str, Any] | None = None,
        conversation_id: str | None = None,
    ) -> ConversationRecord:
        cid = conversation_id or uuid.uuid4().hex
        if not 0 < len(cid) <= 64:
            raise InvalidInput("会話 ID は 1〜64 文字で指定してください")
        now = utcnow()
        row = Conversation(
            id=cid,
            team=team,
            title=title_of(title),
            meta=dict(meta or {}),
            created_at=now,
            updated_at=now,
        )
        with self.db.write() as s:
            if s.get(Conversation, cid) is not None:
                raise InvalidInput(f"会話 ID「{cid}」は使われています")
            s.add(row)
            s.flush()
            return _conv(row)

    @staticmethod
    def _row(s: Session, team: str, conversation_id: str) -> Conversation:
        return owned(s, Conversation, team, conversation_id, "会話")

    def get(self, team: str, conversation_id: str) -> ConversationRecord:
        with self.db.read() as s:
            row = self._row(s, team, conversation_id)
            count = s.scalar(
                select(func.count())
                .select_from(Message)
                .where(Message.team == team, Message.conversation_id == conversation_id)
            )
            return _conv(row, int(count or 0))

    def exists(self, team: str, conversation_id: str) -> bool:
        with self.db.read() as s:
            return (
                s.scalar(
                    select(func.count())
                    .select_from(Conversation)
                    .where(Conversation.team == team, Conversation.id == conversation_id)
                )
                or 0
            ) > 0

    def find(self, team: str, page: Page = RECENT) -> list[ConversationRecord]:
        """The team's conversations, most recently active first, with message counts."""
        counts = (
            select(Message.conversation_id, func.count().label("n"))
            .where(Message.team == team)
            .group_by(Message.conversation_id)
            .subquery()
        )
        stmt = (
            select(Conversation, func.coalesce(counts.c.n, 0))
            .outerjoin(counts, counts.c.conversation_id == Conversation.id)
            .where(Conversation.team == team)
            .order_by(Conversation.updated_at.desc(), Conversation.id)
        )
        with self.db.read() as s:
            return [_conv(row, int(n)) for row, n in s.execute(page.of(stmt))]

    def add_message(
        self,
        team: str,
        conversation_id: str,
        *,
        role: str,
        content: str,
        data: dict[str, Any] | None = None,
    ) -> MessageRecord:
        """Append a message; the conversation's title is its first user message when unset."""
        if role not in ROLES:
            raise InvalidInput(f"role は {', '.join(ROLES)} のいずれかです(指定値: {role})")
        now = utcnow()
        with self.db.write() as s:
            conv = self._row(s, team, conversation_id)
            conv.updated_at = now
            if not conv.title and role == "user":
                conv.title = title_of(content)
            row = Message(
                conversation_id=conversation_id,
                team=team,
                role=role,
                content=content,
                data=dict(data or {}),
                created_at=now,
            )
            s.add(row)
            s.flush()
            return _msg(row)

    def messages(
        self, team: str, conversation_id: str, *, last: int | None = None
    ) -> list[MessageRecord]:
        """The conversation's messages in order (the ``last`` ones when given)."""
        with self.db.read() as s:
            self._row(s, team, conversation_id)
            stmt = select(Message).where(
                Message.team == team, Message.conversation_id == conversation_id
            )
            if last is not None:
                rows = list(s.scalars(stmt.order_by(Message.id.desc()).limit(last)))
                rows.reverse()
            else:
                rows = list(s.scalars(stmt.order_by(Message.id)))
            return [_msg(r) for r in rows]

    def rename(self, team: str, conversation_id: str, title: str) -> ConversationRecord:
        with self.db.write() as s:
            row = self._row(s, team, conversation_id)
            row.title = title_of(title)
            s.flush()
            return _conv(row)

    def delete(self, team: str, conversation_id: str) -> None:
        with self.db.write() as s:
            self._row(s, team, conversation_id)
            s.execute(
                delete(Message).where(
                    Message.team == team, Message.conversation_id == conversation_id
                )
            )
            s.execute(
                delete(Conversation).where(
                    Conversation.team == team, Conversation.id == conversation_id
                )
            )

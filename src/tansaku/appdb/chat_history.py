"""The agent's conversation history stored in appdb, with the API of
:class:`tansaku.agent.conversations.Conversations` (``new``, ``exists``, ``append``,
``history``, ``list``) so callers do not change.

``StoredConversations(home / "appdb.sqlite")`` takes the legacy file path like the class it
replaces: the workspace is the file's folder and the conversations of an existing file are
copied into appdb once, on first use, keeping their ids.
"""

from __future__ import annotations

import builtins
import re
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from tansaku.agent._appdb_handle import AppDBHandle
from tansaku.appdb.errors import NotFound

if TYPE_CHECKING:
    from tansaku.agent.conversations import ConversationInfo, Role, Turn
    from tansaku.agent.events import Citation
    from tansaku.appdb.db import AppDB

_ID = re.compile(r"[0-9a-f]{32}")


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

    def _check(self, conversation_id: str, team: str) -> None:
        if not _ID.fullmatch(conversation_id or "") or not self.db.conversations.exists(
            team, conversation_id
        ):
            raise self._not_found(conversation_id)

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
    ) -> None:
        """Add a turn; raises ``ConversationNotFound`` unless ``team`` owns it."""
        if role not in ("user", "assistant"):
            raise ValueError(f"role must be 'user' or 'assistant', got {role!r}")
        self._check(conversation_id, team)
        try:
            self.db.conversations.add_message(
                team,
                conversation_id,
                role=role,
                content=text,
                data={"citations": [c.to_dict() for c in citations]},
            )
        except NotFound:
            raise self._not_found(conversation_id) from None

    def history(self, conversation_id: str, team: str, limit: int = 20) -> builtins.list[Turn]:
        """The last ``limit`` turns, oldest first."""
        from tansaku.agent.conversations import Turn
        from tansaku.agent.events import Citation

        self._check(conversation_id, team)
        if limit <= 0:
            return []
        try:
            messages = self.db.conversations.messages(team, conversation_id, last=limit)
        except NotFound:
            raise self._not_found(conversation_id) from None
        return [
            Turn(
                role="user" if m.role == "user" else "assistant",
                text=m.content,
                citations=tuple(Citation(**c) for c in m.data.get("citations", [])),
                created_at=m.created_at.isoformat(timespec="seconds"),
            )
            for m in messages
            if m.role in ("user", "assistant")
        ]

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
            for c in self.db.conversations.find(team, limit=limit)
        ]

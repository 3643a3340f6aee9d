"""Conversations: the turns of each conversation id, stored in the workspace database and
scoped to a team — a team never reads or writes another team's conversation.

A SQLite file (``appdb.sqlite``) like the unanswered log; the application issue moves both
behind SQLAlchemy. Also here: what a follow-up means with no model (「その店舗の先週の売上は?」
after a question about 新宿店 → 「新宿店の先週の売上は?」).

>>> conversations = Conversations(home / "appdb.sqlite")
>>> cid = conversations.new("default")
>>> conversations.append(cid, "default", "user", "新宿店の冷蔵庫の故障は?")
>>> [t.text for t in conversations.history(cid, "default")]
"""

from __future__ import annotations

import builtins
import json
import re
import sqlite3
import uuid
from collections.abc import Iterator, Sequence
from contextlib import closing, contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from tansaku.agent.events import Citation
from tansaku.errors import TansakuError
from tansaku.text.dates import resolve_dates
from tansaku.text.names import stores_in

Role = Literal["user", "assistant"]
_ID = re.compile(r"[0-9a-f]{32}")
_SCHEMA = """
CREATE TABLE IF NOT EXISTS conversations (
    id TEXT PRIMARY KEY,
    team TEXT NOT NULL,
    created_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS conversation_turns (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    conversation_id TEXT NOT NULL REFERENCES conversations(id),
    created_at TEXT NOT NULL,
    role TEXT NOT NULL,
    text TEXT NOT NULL,
    citations TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS conversation_turns_by_id ON conversation_turns(conversation_id, id);
CREATE INDEX IF NOT EXISTS conversations_by_team ON conversations(team, created_at);
"""


class ConversationNotFound(TansakuError):
    """No conversation with this id for this team (another team's looks the same)."""

    def __init__(self, conversation_id: str) -> None:
        self.conversation_id = conversation_id
        super().__init__(
            f"会話「{conversation_id}」が見つかりません。"
            "--conversation を付けずに質問すると新しい会話が始まります"
        )


@dataclass(frozen=True, kw_only=True)
class Turn:
    role: Role
    text: str
    citations: tuple[Citation, ...] = ()
    created_at: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {
            "role": self.role,
            "text": self.text,
            "citations": [c.to_dict() for c in self.citations],
            "created_at": self.created_at,
        }


@dataclass(frozen=True, kw_only=True)
class ConversationInfo:
    id: str
    created_at: str
    updated_at: str
    turns: int
    title: str
    """The first question."""

    def to_dict(self) -> dict[str, Any]:
        return dict(vars(self))


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


class Conversations:
    def __init__(self, path: Path) -> None:
        self.path = path

    @contextmanager
    def _connect(self) -> Iterator[sqlite3.Connection]:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with closing(sqlite3.connect(self.path, timeout=30)) as con:
            con.executescript(_SCHEMA)
            with con:
                yield con

    def _owned(self, con: sqlite3.Connection, conversation_id: str, team: str) -> None:
        row = None
        if _ID.fullmatch(conversation_id or ""):
            row = con.execute(
                "SELECT 1 FROM conversations WHERE id = ? AND team = ?", (conversation_id, team)
            ).fetchone()
        if row is None:
            raise ConversationNotFound(conversation_id)

    def new(self, team: str) -> str:
        """A new conversation of ``team``; its id (32 hex digits, unguessable)."""
        conversation_id = uuid.uuid4().hex
        with self._connect() as con:
            con.execute(
                "INSERT INTO conversations (id, team, created_at) VALUES (?, ?, ?)",
                (conversation_id, team, _now()),
            )
        return conversation_id

    def exists(self, conversation_id: str, team: str) -> bool:
        try:
            with self._connect() as con:
                self._owned(con, conversation_id, team)
        except ConversationNotFound:
            return False
        return True

    def append(
        self,
        conversation_id: str,
        team: str,
        role: Role,
        text: str,
        citations: Sequence[Citation] = (),
    ) -> None:
        """Add a turn; raises :class:`ConversationNotFound` unless ``team`` owns it."""
        if role not in ("user", "assistant"):
            raise ValueError(f"role must be 'user' or 'assistant', got {role!r}")
        cites = json.dumps([c.to_dict() for c in citations], ensure_ascii=False)
        with self._connect() as con:
            self._owned(con, conversation_id, team)
            con.execute(
                "INSERT INTO conversation_turns (conversation_id, created_at, role, text, "
                "citations) VALUES (?, ?, ?, ?, ?)",
                (conversation_id, _now(), role, text, cites),
            )

    def history(self, conversation_id: str, team: str, limit: int = 20) -> list[Turn]:
        """The last ``limit`` turns, oldest first; raises :class:`ConversationNotFound` unless
        ``team`` owns the conversation."""
        with self._connect() as con:
            self._owned(con, conversation_id, team)
            rows = con.execute(
                "SELECT role, text, citations, created_at FROM conversation_turns "
                "WHERE conversation_id = ? ORDER BY id DESC LIMIT ?",
                (conversation_id, max(0, limit)),
            ).fetchall()
        return [
            Turn(
                role=r[0],
                text=r[1],
                citations=tuple(Citation(**c) for c in json.loads(r[2])),
                created_at=r[3],
            )
            for r in reversed(rows)
        ]

    def list(self, team: str) -> builtins.list[ConversationInfo]:
        """The team's conversations, most recently used first."""
        if not self.path.is_file():
            return []
        with self._connect() as con:
            rows = con.execute(
                "SELECT c.id, c.created_at, COALESCE(MAX(t.created_at), c.created_at), "
                "COUNT(t.id), (SELECT text FROM conversation_turns f WHERE f.conversation_id = "
                "c.id AND f.role = 'user' ORDER BY f.id LIMIT 1) "
                "FROM conversations c LEFT JOIN conversation_turns t ON t.conversation_id = c.id "
                "WHERE c.team = ? GROUP BY c.id ORDER BY MAX(COALESCE(t.id, 0)) DESC, "
                "c.created_at DESC",
                (team,),
            ).fetchall()
        return [
            ConversationInfo(
                id=r[0], created_at=r[1], updated_at=r[2], turns=r[3], title=r[4] or ""
            )
            for r in rows
        ]


# --- follow-ups with no model -------------------------------------------------------------

_ANAPHORA = re.compile(r"(その|この|あの|同じ)(店舗|お店|店)|そちらの店舗|同店|そこ")
_ELLIPSIS = re.compile(
    r"^(では|じゃあ|それでは|それなら|なら)?[、,\s]*(.{1,20}?)(は|も|だと|の場合は)[?？]?$"
)


def resolve_followup(question: str, earlier: Sequence[str]) -> str:
    """``question`` made self-contained from the earlier questions (newest last), for the
    offline router: 「その店舗」 becomes the store named last; an elliptical 「渋谷店は?」 or
    「先週は?」 takes the previous question with its store or date expression replaced.
    Anything else comes back unchanged."""
    if not earlier:
        return question
    resolved: builtins.list[str] = []
    for asked in earlier:  # each earlier question as it was understood
        resolved.append(_resolve(asked, resolved))
    return _resolve(question, resolved)


def _resolve(question: str, earlier: Sequence[str]) -> str:
    if not earlier:
        return question
    previous = earlier[-1]
    last_store = next((s for q in reversed(earlier) for s in reversed(stores_in(q))), None)
    if last_store and _ANAPHORA.search(question):
        return _ANAPHORA.sub(last_store, question, count=1)
    short = _ELLIPSIS.match(question.strip())
    if short is None:
        return question
    topic = short.group(2).strip()
    stores = stores_in(topic)
    found = resolve_dates(topic).range
    if stores == [topic]:
        old = stores_in(previous)
        return previous.replace(old[0], topic, 1) if old else f"{topic}の{previous}"
    if found is not None and found.expression == topic:
        before = resolve_dates(previous).range
        return previous.replace(before.expression, topic, 1) if before else f"{topic}の{previous}"
    return question

"""Conversations: the turns of each conversation id, scoped to a team — a team never reads or
writes another team's conversation. Also here: what a follow-up means with no model
(「その店舗の先週の売上は?」 after a question about 新宿店 → 「新宿店の先週の売上は?」).

:class:`Conversations` keeps the name and signature of earlier versions, whose history was a raw
SQLite file (``<home>/appdb.sqlite``): it is the history in appdb
(:class:`~tansaku.agent.history.StoredConversations`) of the file's folder, and the conversations
of an existing file are copied into it once, on first use, keeping their ids.

>>> conversations = Conversations(home / "appdb.sqlite")
>>> cid = conversations.new("default")
>>> conversations.append(cid, "default", "user", "新宿店の冷蔵庫の故障は?")
>>> [t.text for t in conversations.history(cid, "default")]
"""

from __future__ import annotations

import builtins
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from tansaku.agent.events import Citation
from tansaku.agent.history import StoredConversations
from tansaku.errors import TansakuError
from tansaku.text.dates import resolve_dates
from tansaku.text.names import stores_in

Role = Literal["user", "assistant"]


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


class Conversations(StoredConversations):
    """The conversation history of a workspace under the name of earlier versions:
    ``Conversations(home / "appdb.sqlite")`` (see the module docstring)."""


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

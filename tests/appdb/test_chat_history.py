"""StoredConversations: the agent's Conversations API over appdb (both backends), and the
one-time copy of the old raw-SQLite history."""

from __future__ import annotations

import json
import sqlite3
import uuid
from contextlib import closing
from pathlib import Path

import pytest

from tansaku.agent.conversations import ConversationNotFound, Conversations
from tansaku.agent.events import Citation
from tansaku.agent.history import StoredConversations
from tansaku.appdb import close_shared


@pytest.fixture
def convs(db) -> StoredConversations:
    return StoredConversations(db)


def test_turns_are_stored_in_order_with_their_citations(convs) -> None:
    cid = convs.new("shinjuku")
    cite = Citation(doc_id="r1", collection="reports", title="新宿店 日報", date="2025-12-10")
    convs.append(cid, "shinjuku", "user", "冷蔵庫の故障は?")
    convs.append(cid, "shinjuku", "assistant", "故障がありました[1]。", [cite])
    turns = convs.history(cid, "shinjuku")
    assert [(t.role, t.text) for t in turns] == [
        ("user", "冷蔵庫の故障は?"),
        ("assistant", "故障がありました[1]。"),
    ]
    assert turns[1].citations == (cite,)
    assert [t.text for t in convs.history(cid, "shinjuku", limit=1)] == ["故障がありました[1]。"]
    (info,) = convs.list("shinjuku")
    assert info.id == cid and info.turns == 2 and info.title == "冷蔵庫の故障は?"


def test_a_team_never_reads_or_writes_another_teams_conversation(convs) -> None:
    cid = convs.new("shinjuku")
    convs.append(cid, "shinjuku", "user", "新宿店の売上は?")
    with pytest.raises(ConversationNotFound, match="見つかりません"):
        convs.history(cid, "shibuya")
    with pytest.raises(ConversationNotFound):
        convs.append(cid, "shibuya", "user", "割り込み")
    assert convs.list("shibuya") == [] and not convs.exists(cid, "shibuya")
    assert [t.text for t in convs.history(cid, "shinjuku")] == ["新宿店の売上は?"]
    for bad in ("", "../../etc", "0" * 32, cid.upper()):
        with pytest.raises(ConversationNotFound):
            convs.history(bad, "shinjuku")
    with pytest.raises(ValueError, match="role must be"):
        convs.append(cid, "shinjuku", "system", "x")  # type: ignore[arg-type]


# The raw-SQLite history of earlier versions, as they wrote it.
LEGACY_SCHEMA = """
CREATE TABLE conversations (id TEXT PRIMARY KEY, team TEXT NOT NULL, created_at TEXT NOT NULL);
CREATE TABLE conversation_turns (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    conversation_id TEXT NOT NULL REFERENCES conversations(id),
    created_at TEXT NOT NULL,
    role TEXT NOT NULL,
    text TEXT NOT NULL,
    citations TEXT NOT NULL
);
"""


def _legacy_history(path: Path, cite: Citation) -> tuple[str, str]:
    """A legacy file with a shinjuku conversation of two turns and an empty shibuya one."""
    cid, other = uuid.uuid4().hex, uuid.uuid4().hex
    path.parent.mkdir(parents=True)
    with closing(sqlite3.connect(path)) as con, con:
        con.executescript(LEGACY_SCHEMA)
        con.executemany(
            "INSERT INTO conversations VALUES (?, ?, ?)",
            [
                (cid, "shinjuku", "2025-12-01T09:00:00+00:00"),
                (other, "shibuya", "2025-12-02T10:00:00+00:00"),
            ],
        )
        con.executemany(
            "INSERT INTO conversation_turns (conversation_id, created_at, role, text, citations)"
            " VALUES (?, ?, ?, ?, ?)",
            [
                (cid, "2025-12-01T09:00:00+00:00", "user", "先週の売上は?", "[]"),
                (
                    cid,
                    "2025-12-01T09:00:05+00:00",
                    "assistant",
                    "120万円でした[1]。",
                    json.dumps([cite.to_dict()], ensure_ascii=False),
                ),
            ],
        )
    return cid, other


def test_the_old_history_is_copied_once_keeping_ids(tmp_path) -> None:
    home = tmp_path / "ws"
    cite = Citation(doc_id="r9", collection="reports", title="日報")
    cid, other = _legacy_history(home / "appdb.sqlite", cite)
    try:
        stored = StoredConversations(home / "appdb.sqlite")
        assert [t.text for t in stored.history(cid, "shinjuku")] == [
            "先週の売上は?",
            "120万円でした[1]。",
        ]
        assert stored.history(cid, "shinjuku")[1].citations == (cite,)
        assert stored.exists(other, "shibuya") and not stored.exists(other, "shinjuku")
        stored.append(cid, "shinjuku", "user", "その前の週は?")
        again = StoredConversations(home / "appdb.sqlite")
        assert len(again.history(cid, "shinjuku")) == 3  # not copied a second time
        (info,) = again.list("shinjuku")
        assert info.title == "先週の売上は?" and info.turns == 3
        # the name of earlier versions is the same history
        assert len(Conversations(home / "appdb.sqlite").history(cid, "shinjuku")) == 3
    finally:
        close_shared()

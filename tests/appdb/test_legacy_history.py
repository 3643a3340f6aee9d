"""The one-time copy of the raw-SQLite conversation history of earlier versions into appdb."""

from __future__ import annotations

import json
import sqlite3
from datetime import UTC, datetime

from tansaku.appdb.legacy_history import import_legacy_conversations


def _legacy_file(path) -> None:
    con = sqlite3.connect(path)
    con.executescript(
        "CREATE TABLE conversations (id TEXT PRIMARY KEY, team TEXT, created_at TEXT);"
        "CREATE TABLE conversation_turns (id INTEGER PRIMARY KEY, conversation_id TEXT,"
        " created_at TEXT, role TEXT, text TEXT, citations TEXT);"
    )
    con.execute("INSERT INTO conversations VALUES ('c-1', 'shinjuku', '2025-08-01T09:00:00+00:00')")
    con.executemany(
        "INSERT INTO conversation_turns (conversation_id, created_at, role, text, citations)"
        " VALUES (?, ?, ?, ?, ?)",
        [
            ("c-1", "2025-08-01T09:00:00", "user", "冷蔵庫の温度が上がらない", None),
            (
                "c-1",
                "2025-08-01T09:00:05+00:00",
                "assistant",
                "霜取りを確認してください。",
                json.dumps([{"doc_id": "manual-3"}], ensure_ascii=False),
            ),
        ],
    )
    con.commit()
    con.close()


def test_conversations_are_copied_once_with_their_ids(db, tmp_path) -> None:
    legacy = tmp_path / "appdb.sqlite"
    _legacy_file(legacy)
    assert import_legacy_conversations(db, legacy) == 1
    assert import_legacy_conversations(db, legacy) == 0
    conv = db.conversations.get("shinjuku", "c-1")
    assert conv.title.startswith("冷蔵庫の温度")
    assert conv.created_at == datetime(2025, 8, 1, 9, tzinfo=UTC)
    user, answer = db.conversations.messages("shinjuku", "c-1")
    assert user.created_at == datetime(2025, 8, 1, 9, tzinfo=UTC)  # a naive time is UTC
    assert answer.data == {"citations": [{"doc_id": "manual-3"}]}
    assert legacy.is_file()
    assert import_legacy_conversations(db, tmp_path / "missing.sqlite") == 0

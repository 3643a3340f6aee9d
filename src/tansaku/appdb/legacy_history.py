"""Copying the raw-SQLite history of earlier versions (``<home>/appdb.sqlite``: tables
``conversations`` and ``conversation_turns``) into appdb, once per file."""

from __future__ import annotations

import hashlib
import json
import sqlite3
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tansaku.appdb.conversations import title_of
from tansaku.appdb.models import Conversation, Message, Setting, utcnow

if TYPE_CHECKING:
    from tansaku.appdb.db import AppDB


def import_legacy_conversations(db: AppDB, path: Path) -> int:
    """Copy the conversations of an earlier raw-SQLite history (``<home>/appdb.sqlite``,
    tables ``conversations`` and ``conversation_turns``) once, keeping their ids (so an id a
    user kept still continues); returns how many conversations were copied now."""
    if not path.is_file():
        return 0
    where = str(path.resolve())
    marker = "legacy_conversations:" + hashlib.sha256(where.encode("utf-8")).hexdigest()[:32]
    with db.read() as s:
        if s.get(Setting, marker) is not None:
            return 0
    con = sqlite3.connect(path.resolve().as_uri() + "?mode=ro", uri=True, timeout=30)
    try:
        tables = {r[0] for r in con.execute("SELECT name FROM sqlite_master")}
        if not {"conversations", "conversation_turns"} <= tables:
            convs, turns = [], []
        else:
            convs = con.execute("SELECT id, team, created_at FROM conversations").fetchall()
            turns = con.execute(
                "SELECT conversation_id, created_at, role, text, citations "
                "FROM conversation_turns ORDER BY id"
            ).fetchall()
    finally:
        con.close()
    by_conv: dict[str, list[Any]] = {}
    for t in turns:
        by_conv.setdefault(str(t[0]), []).append(t)
    copied = 0
    with db.write() as s:
        db.lock_in(s, marker)
        if s.get(Setting, marker) is not None:  # another process imported meanwhile
            return 0
        for cid, team, created in convs:
            if s.get(Conversation, str(cid)) is not None:
                continue
            mine = by_conv.get(str(cid), [])
            first_user = next((str(t[3]) for t in mine if t[2] == "user"), "")
            started = _parse_time(str(created))
            last = _parse_time(str(mine[-1][1])) if mine else started
            conv = Conversation(
                id=str(cid),
                team=str(team),
                title=title_of(first_user),
                meta={},
                created_at=started,
                updated_at=last,
            )
            s.add(conv)
            s.flush()
            for _, at, role, text, cites in mine:
                try:
                    citations = json.loads(cites or "[]")
                except ValueError:
                    citations = []
                s.add(
                    Message(
                        conversation_id=str(cid),
                        team=str(team),
                        role=str(role),
                        content=str(text),
                        data={"citations": citations},
                        created_at=_parse_time(str(at)),
                    )
                )
            copied += 1
        s.add(Setting(key=marker, value=json.dumps({"path": where, "conversations": copied})))
    return copied


def _parse_time(raw: str) -> datetime:
    try:
        t = datetime.fromisoformat(raw)
    except ValueError:
        return utcnow()
    return t if t.tzinfo else t.replace(tzinfo=UTC)

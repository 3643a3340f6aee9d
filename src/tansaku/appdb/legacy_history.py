"""Copying the raw-SQLite history of earlier versions (``<home>/appdb.sqlite``: tables
``conversations`` and ``conversation_turns``) into appdb, once per file."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tansaku.appdb.conversations import title_of
from tansaku.appdb.legacy import LegacyFile, json_list, parse_time
from tansaku.appdb.models import Conversation, Message

if TYPE_CHECKING:
    from sqlalchemy.orm import Session

    from tansaku.appdb.db import AppDB


def import_legacy_conversations(db: AppDB, path: Path) -> int:
    """Copy the conversations of an earlier raw-SQLite history (``<home>/appdb.sqlite``,
    tables ``conversations`` and ``conversation_turns``) once, keeping their ids (so an id a
    user kept still continues); returns how many conversations were copied now."""
    legacy = LegacyFile(db, path, "legacy_conversations")
    return legacy.copy_once(_read, _insert, counted="conversations")


Read = tuple[list[Any], list[Any]]


def _read(con: sqlite3.Connection, tables: set[str]) -> Read:
    if not {"conversations", "conversation_turns"} <= tables:
        return [], []
    convs = con.execute("SELECT id, team, created_at FROM conversations").fetchall()
    turns = con.execute(
        "SELECT conversation_id, created_at, role, text, citations "
        "FROM conversation_turns ORDER BY id"
    ).fetchall()
    return convs, turns


def _insert(s: Session, read: Read) -> int:
    convs, turns = read
    by_conv: dict[str, list[Any]] = {}
    for t in turns:
        by_conv.setdefault(str(t[0]), []).append(t)
    copied = 0
    for cid, team, created in convs:
        if s.get(Conversation, str(cid)) is not None:
            continue
        mine = by_conv.get(str(cid), [])
        first_user = next((str(t[3]) for t in mine if t[2] == "user"), "")
        started = parse_time(str(created))
        last = parse_time(str(mine[-1][1])) if mine else started
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
            s.add(
                Message(
                    conversation_id=str(cid),
                    team=str(team),
                    role=str(role),
                    content=str(text),
                    data={"citations": json_list(cites)},
                    created_at=parse_time(str(at)),
                )
            )
        copied += 1
    return copied

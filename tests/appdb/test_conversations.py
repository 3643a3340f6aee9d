"""Conversations and messages, scoped to a team."""

from __future__ import annotations

import pytest

from tansaku.appdb import InvalidInput, NotFound


def test_a_conversation_keeps_its_messages_in_order(db) -> None:
    conv = db.conversations.create("shinjuku")
    db.conversations.add_message("shinjuku", conv.id, role="user", content="昨日のクレームは?")
    db.conversations.add_message(
        "shinjuku",
        conv.id,
        role="assistant",
        content="2件ありました。",
        data={"citations": [{"doc_id": "r-0824", "title": "日報 8/24"}]},
    )
    db.conversations.add_message("shinjuku", conv.id, role="user", content="原因は?")
    msgs = db.conversations.messages("shinjuku", conv.id)
    assert [m.role for m in msgs] == ["user", "assistant", "user"]
    assert msgs[1].data["citations"][0]["doc_id"] == "r-0824"
    assert [m.content for m in db.conversations.messages("shinjuku", conv.id, last=2)] == [
        "2件ありました。",
        "原因は?",
    ]
    got = db.conversations.get("shinjuku", conv.id)
    assert got.title == "昨日のクレームは?" and got.message_count == 3


def test_recent_first_rename_and_delete(db) -> None:
    a = db.conversations.create("shinjuku", title="発注について")
    b = db.conversations.create("shinjuku", conversation_id="fixed-id")
    db.conversations.add_message("shinjuku", a.id, role="user", content="発注の締め切りは?")
    listed = db.conversations.find("shinjuku")
    assert [c.id for c in listed] == [a.id, b.id]
    assert listed[0].message_count == 1 and listed[0].title == "発注について"
    assert db.conversations.rename("shinjuku", b.id, "  新しい\n題名 ").title == "新しい 題名"
    db.conversations.delete("shinjuku", a.id)
    assert [c.id for c in db.conversations.find("shinjuku")] == ["fixed-id"]
    with pytest.raises(InvalidInput, match="使われています"):
        db.conversations.create("shinjuku", conversation_id="fixed-id")
    with pytest.raises(InvalidInput, match="role"):
        db.conversations.add_message("shinjuku", b.id, role="admin", content="x")


def test_a_team_never_reads_or_writes_another_teams_conversation(db) -> None:
    conv = db.conversations.create("shinjuku")
    db.conversations.add_message("shinjuku", conv.id, role="user", content="売上は?")
    for call in (
        lambda: db.conversations.get("shibuya", conv.id),
        lambda: db.conversations.messages("shibuya", conv.id),
        lambda: db.conversations.add_message("shibuya", conv.id, role="user", content="x"),
        lambda: db.conversations.rename("shibuya", conv.id, "x"),
        lambda: db.conversations.delete("shibuya", conv.id),
    ):
        with pytest.raises(NotFound):
            call()
    assert db.conversations.find("shibuya") == []
    assert not db.conversations.exists("shibuya", conv.id)
    assert db.conversations.get("shinjuku", conv.id).message_count == 1

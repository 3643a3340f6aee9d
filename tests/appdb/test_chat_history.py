"""StoredConversations: the agent's Conversations API over appdb (both backends), and the
one-time copy of the old raw-SQLite history."""

from __future__ import annotations

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


def test_the_old_history_is_copied_once_keeping_ids(tmp_path) -> None:
    home = tmp_path / "ws"
    old = Conversations(home / "appdb.sqlite")  # the raw-SQLite class of earlier versions
    cid = old.new("shinjuku")
    cite = Citation(doc_id="r9", collection="reports", title="日報")
    old.append(cid, "shinjuku", "user", "先週の売上は?")
    old.append(cid, "shinjuku", "assistant", "120万円でした[1]。", [cite])
    other = old.new("shibuya")
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
    finally:
        close_shared()

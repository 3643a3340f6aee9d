"""An answer turn keeps the query_id of its answer event, so an answer reopened from the history
can still be rated; older turns (stored before) have none. Both backends."""

from __future__ import annotations

import uuid

import pytest

from tansaku.agent.conversations import ConversationNotFound
from tansaku.agent.events import Citation
from tansaku.agent.history import StoredConversations

QUESTION = "衛生マニュアルの身だしなみのルールは?"
ANSWER = "清潔なユニフォームと帽子を着用します[1]。"


def answer_event(query_id: str, question: str) -> dict[str, object]:
    """An ANSWER_EVENT shaped like the server's ``record_answer``."""
    return {
        "event": "ANSWER_EVENT",
        "query_id": query_id,
        "collection": "manuals",
        "query": question,
        "normalized_query": question,
        "query_type": "ask",
        "namespaces": ["manuals"],
        "top5_doc_ids": ["hygiene"],
        "hit_count": 1,
        "zero_hit": False,
    }


@pytest.fixture
def convs(db) -> StoredConversations:
    return StoredConversations(db)


def test_an_answer_keeps_its_query_id_and_older_turns_have_none(convs, db) -> None:
    cid = convs.new("shinjuku")
    cite = Citation(doc_id="hygiene", collection="manuals", title="衛生管理マニュアル v2.0")
    convs.append(cid, "shinjuku", "user", "手洗いの手順は?")
    # an answer stored as earlier versions stored it: citations only
    db.conversations.add_message(
        "shinjuku", cid, role="assistant", content="石けんで30秒洗います。", data={"citations": []}
    )
    convs.append(cid, "shinjuku", "user", QUESTION)
    qid = uuid.uuid4().hex
    convs.append(cid, "shinjuku", "assistant", ANSWER, [cite], query_id=qid)
    turns = convs.turns(cid, "shinjuku")
    assert [(t.turn.role, t.query_id, t.rating) for t in turns] == [
        ("user", None, None),
        ("assistant", None, None),
        ("user", None, None),
        ("assistant", qid, None),
    ]
    last = turns[-1].to_dict()
    assert last["text"] == ANSWER and last["query_id"] == qid and last["rating"] is None
    assert last["citations"][0]["title"] == "衛生管理マニュアル v2.0"
    # history() (what the agent sends to the model) is unchanged
    assert [t.text for t in convs.history(cid, "shinjuku")][-1] == ANSWER
    assert convs.history(cid, "shinjuku")[-1].citations == (cite,)


def test_attach_marks_the_newest_matching_answer_once(convs) -> None:
    cid = convs.new("shinjuku")
    convs.append(cid, "shinjuku", "user", QUESTION)
    convs.append(cid, "shinjuku", "assistant", ANSWER)
    convs.append(cid, "shinjuku", "user", "帽子についてもう少し詳しく")
    convs.append(cid, "shinjuku", "assistant", ANSWER)  # the same words twice
    first, second = uuid.uuid4().hex, uuid.uuid4().hex
    assert convs.attach_query_id(cid, "shinjuku", first, text=ANSWER)
    assert convs.attach_query_id(cid, "shinjuku", second, text=ANSWER)
    assert not convs.attach_query_id(cid, "shinjuku", uuid.uuid4().hex, text=ANSWER)
    assert not convs.attach_query_id(cid, "shinjuku", uuid.uuid4().hex, text="別の回答")
    ids = [t.query_id for t in convs.turns(cid, "shinjuku") if t.turn.role == "assistant"]
    assert ids == [second, first]  # the newest answer got the first id


def test_a_team_never_attaches_to_or_reads_another_teams_turns(convs) -> None:
    cid = convs.new("shinjuku")
    convs.append(cid, "shinjuku", "user", QUESTION)
    convs.append(cid, "shinjuku", "assistant", ANSWER)
    with pytest.raises(ConversationNotFound):
        convs.attach_query_id(cid, "shibuya", uuid.uuid4().hex, text=ANSWER)
    with pytest.raises(ConversationNotFound):
        convs.turns(cid, "shibuya")
    assert all(t.query_id is None for t in convs.turns(cid, "shinjuku"))


def test_turns_carry_the_teams_latest_rating(convs, db) -> None:
    cid = convs.new("shinjuku")
    convs.append(cid, "shinjuku", "user", QUESTION)
    qid = uuid.uuid4().hex
    db.events.record("shinjuku", answer_event(qid, QUESTION), titles=["衛生管理マニュアル v2.0"])
    convs.append(cid, "shinjuku", "assistant", ANSWER, query_id=qid)
    assert convs.turns(cid, "shinjuku")[-1].rating is None
    db.feedback.submit("shinjuku", query_id=qid, rating=1, client="ip:127.0.0.1")
    db.feedback.submit(
        "shinjuku", query_id=qid, rating=-1, reason="帽子の章がない", client="ip:127.0.0.1"
    )
    assert convs.turns(cid, "shinjuku")[-1].rating == -1
    assert convs.turns(cid, "shinjuku", ratings=False)[-1].rating is None


def test_bad_query_ids_are_refused_and_nothing_is_stored(convs) -> None:
    cid = convs.new("shinjuku")
    convs.append(cid, "shinjuku", "user", QUESTION)
    for bad in ("", "x" * 65, "../etc", "id with space", "<script>"):
        with pytest.raises(ValueError, match="query_id"):
            convs.append(cid, "shinjuku", "assistant", ANSWER, query_id=bad)
        with pytest.raises(ValueError, match="query_id"):
            convs.attach_query_id(cid, "shinjuku", bad, text=ANSWER)
    with pytest.raises(ValueError, match="assistant"):
        convs.append(cid, "shinjuku", "user", "質問", query_id=uuid.uuid4().hex)
    assert [t.turn.text for t in convs.turns(cid, "shinjuku")] == [QUESTION]

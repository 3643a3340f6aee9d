"""Conversations: stored turns, team isolation, follow-ups through the model (the prior turns
are sent) and without one (the previous question's store or dates carried)."""

from __future__ import annotations

import pytest

from tansaku.agent import (
    ConversationNotFound,
    Conversations,
    ask,
    conversations,
    resolve_followup,
)
from tansaku.agent.citations import Sources
from tansaku.agent.conversations import stores_in
from tansaku.agent.events import Citation

from .clock import NOW
from .scripted import ScriptedModel, call, refs, review, say


@pytest.fixture
def convs(tmp_path) -> Conversations:
    return Conversations(tmp_path / "appdb.sqlite")


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


def test_roles_are_checked(convs) -> None:
    cid = convs.new("default")
    with pytest.raises(ValueError, match="role must be"):
        convs.append(cid, "default", "system", "x")  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("earlier", "question", "resolved"),
    [
        (["新宿店の冷蔵庫の故障は?"], "その店舗の先週の売上は?", "新宿店の先週の売上は?"),
        (["渋谷店と新宿店の様子は?"], "その店の昨日のクレームは?", "新宿店の昨日のクレームは?"),
        (["新宿店の冷蔵庫の故障は?"], "渋谷店は?", "渋谷店の冷蔵庫の故障は?"),
        (["先月のクレーム傾向を教えて"], "先週は?", "先週のクレーム傾向を教えて"),
        (["クレーム傾向を教えて"], "じゃあ先週は?", "先週のクレーム傾向を教えて"),
        (["冷蔵庫の故障は?"], "池袋店は?", "池袋店の冷蔵庫の故障は?"),
        (["新宿店の冷蔵庫の故障は?"], "食中毒の予防方法は?", "食中毒の予防方法は?"),
        (["新宿店の冷蔵庫の故障は?"], "渋谷店の売上は?", "渋谷店の売上は?"),
        ([], "その店舗の売上は?", "その店舗の売上は?"),
        (
            ["新宿店の冷蔵庫の故障は?", "その店舗の先週の売上は?"],
            "渋谷店は?",
            "渋谷店の先週の売上は?",
        ),
        (
            ["先月のクレーム傾向を教えて", "先週は?"],
            "新宿店は?",
            "新宿店の先週のクレーム傾向を教えて",
        ),
    ],
)
def test_followups_without_a_model(earlier, question, resolved) -> None:
    assert resolve_followup(question, earlier) == resolved


def test_store_names() -> None:
    assert stores_in("新宿店と渋谷店、お店の店舗数、店長") == ["新宿店", "渋谷店"]


def test_offline_followup_carries_the_store_into_the_statistics(ts, tables) -> None:
    from tansaku.tables import StoreScope, get_sales_trend

    first = ask(ts, "新宿店の冷蔵庫の故障は?", now=NOW, tables=tables, offline=True)
    assert first.conversation_id
    seen = []
    second = ask(
        ts,
        "その店舗の先週の売上は?",
        now=NOW,
        tables=tables,
        offline=True,
        conversation_id=first.conversation_id,
        on_event=seen.append,
    )
    assert second.conversation_id == first.conversation_id
    assert seen[0].type == "thought" and "新宿店の先週の売上は?" in seen[0].text
    expected = get_sales_trend(tables, "2025-12-01", "2025-12-07", scope=StoreScope.only("新宿店"))
    assert f"売上合計 {expected.total_sales:,}円" in second.text and "(新宿店)" in second.text
    turns = conversations(ts).history(first.conversation_id, "default")
    assert [t.text for t in turns if t.role == "user"] == [
        "新宿店の冷蔵庫の故障は?",
        "その店舗の先週の売上は?",
    ]


def test_a_caller_bound_to_a_store_is_never_widened_by_the_question(ts, tables) -> None:
    from tansaku.tables import StoreScope, get_sales_trend

    answer = ask(ts, "渋谷店の先週の売上は?", now=NOW, tables=tables, store="新宿店", offline=True)
    expected = get_sales_trend(tables, "2025-12-01", "2025-12-07", scope=StoreScope.only("新宿店"))
    assert f"売上合計 {expected.total_sales:,}円" in answer.text and "渋谷店" not in answer.text


def test_a_followup_sends_the_prior_turns_to_the_model(ts) -> None:
    model = ScriptedModel(
        [
            call(("search_past_cases", {"query": "新宿店 冷蔵庫の故障"})),
            lambda r: say(f"新宿店で冷蔵庫の故障がありました{refs(r)[0]}。"),
            review("新宿店で冷蔵庫の故障がありました[1]。"),
            say("どの店舗の件でしょうか。"),
            review("新宿店の件でしょうか。", status="smalltalk"),
        ]
    )
    first = ask(ts, "新宿店の冷蔵庫の故障は?", now=NOW, model=model)
    ask(ts, "その後どうなりましたか?", now=NOW, model=model, conversation_id=first.conversation_id)
    sent = model.requests[3].messages
    assert [m.role for m in sent] == ["system", "user", "assistant", "user"]
    assert sent[1].content == "新宿店の冷蔵庫の故障は?"
    assert "[1]" not in sent[2].content and "(出典: " in sent[2].content
    assert sent[3].content == "その後どうなりましたか?"


def test_another_teams_conversation_id_is_refused_before_anything_runs(ts) -> None:
    first = ask(ts, "冷蔵庫の故障", now=NOW, team="default", offline=True)
    model = ScriptedModel([])
    with pytest.raises(ConversationNotFound):
        ask(ts, "続き", now=NOW, team="other", model=model, conversation_id=first.conversation_id)
    assert model.requests == []


def test_sources_are_numbered_once_per_document() -> None:
    sources = Sources(collections={"reports": "reports"})
    one = sources.annotate("search_past_cases", '[{"doc_id": "r1"}, {"doc_id": "r2"}]')
    two = sources.annotate("expand_and_search_cases", '{"results": [{"doc_id": "r2"}]}')
    assert '"ref": "[1]"' in one and '"ref": "[2]"' in one and '"ref": "[2]"' in two
    assert len(sources) == 2
    assert sources.annotate("search_past_cases", '{"error": "失敗"}') == '{"error": "失敗"}'
    assert sources.annotate("search_past_cases", "[]") == "[]"
    rows = sources.annotate("search_stores", '{"results": [{"store_id": "S1", "store_name": "A"}]}')
    assert '"ref": "[3]"' in rows
    text, cites = sources.resolve("店舗Aがあります【3】。")
    assert text == "店舗Aがあります[1]。" and cites[0].collection == "stores"

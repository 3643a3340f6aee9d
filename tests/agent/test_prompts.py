"""The prompts and the parsing of what a model writes: thoughts, fenced or plain reflections."""

from __future__ import annotations

from tansaku.agent import history_messages
from tansaku.agent.conversations import Turn
from tansaku.agent.events import Citation
from tansaku.agent.prompts import split_thought, system_prompt
from tansaku.agent.reflection import context_of, parse_reflection

from .clock import NOW


def test_the_system_prompt_names_only_the_tools_the_toolset_has() -> None:
    text = system_prompt(["search_manual"], now=NOW, max_steps=4, store="新宿店")
    assert "search_manual" in text and "search_past_cases" not in text
    assert "2025-12-11 09:00(木曜日)" in text and "最大 4 回" in text and "新宿店" in text
    assert "出典番号" in text and "見つかりませんでした" in text


def test_thoughts_and_answers_are_split() -> None:
    assert split_thought("思考: 日報を調べます") == ("日報を調べます", "")
    assert split_thought("Thought: 検索済み\nFinal Answer: 故障です[1]。") == (
        "検索済み",
        "故障です[1]。",
    )
    assert split_thought("思考：調べた\n故障です。") == ("調べた", "故障です。")
    assert split_thought("回答: 故障です。") == ("", "故障です。")
    assert split_thought("故障です。回答: は不要") == ("", "故障です。回答: は不要")


def test_reflections_in_json_fenced_or_plain() -> None:
    fenced = '```json\n{"critique": "数値を削除", "status": "answered", "answer": "故障[1]。"}\n```'
    assert parse_reflection(fenced, "下書き").answer == "故障[1]。"
    odd = parse_reflection('{"critique": "", "status": "maybe", "answer": ""}', "下書き")
    assert odd.status == "answered" and odd.answer == "下書き"
    none = parse_reflection('{"critique": "", "status": "not_found", "answer": ""}', "下書き")
    assert none.status == "not_found" and none.answer == ""
    plain = parse_reflection("思考: 問題なし\n回答: 故障です[1]。", "下書き")
    assert plain.answer == "故障です[1]。" and plain.critique == ""
    assert parse_reflection("", "下書き").answer == "下書き"


def test_the_reviewer_context_is_bounded() -> None:
    text = context_of([("search_past_cases", "あ" * 10_000), ("search_manual", "い" * 10)], 2_000)
    assert "## search_past_cases" in text and "…(省略)" in text and len(text) < 2_200


def test_earlier_answers_carry_their_source_titles_not_their_markers() -> None:
    cite = Citation(doc_id="r1", collection="reports", title="新宿店 日報")
    msgs = history_messages(
        [
            Turn(role="user", text="冷蔵庫の故障は?"),
            Turn(role="assistant", text="故障がありました[1]。", citations=(cite,)),
        ]
    )
    assert [m.role for m in msgs] == ["user", "assistant"]
    assert msgs[1].content == "故障がありました。\n(出典: 新宿店 日報)"

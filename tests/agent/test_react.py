"""The ReAct loop with a scripted model over the real tools of a small restaurant workspace:
tool calls (parallel, failing, malformed, unknown), the limits (steps, time, tokens, context),
reflection, citations only from what the tools returned, the offline fallback."""

from __future__ import annotations

import json
import threading
from typing import Annotated

import pytest

from tansaku.agent import AgentLimits, run_agent, unanswered_log
from tansaku.agent.models.base import ModelRateLimited, ModelTimeout, ModelUnavailable
from tansaku.agent.prompts import FINAL_REQUEST
from tansaku.tools import ToolScope, Toolset, tool, toolset

from .clock import NOW
from .scripted import Request, ScriptedModel, call, refs, review, say

FRIDGE = {"query": "冷蔵庫の故障"}
_release = threading.Event()


@tool("wait_for_ledger", "台帳の取得を待ちます(テスト用)。")
def wait_for_ledger(scope: ToolScope, query: Annotated[str, "検索文"]) -> dict[str, str]:
    _release.wait(30)
    return {"ledger": query}


def _tool_docs(request: Request) -> list[str]:
    """The doc ids the tools returned, in marker order, as the model saw them."""
    docs: dict[str, str] = {}
    for m in request.messages:
        if m.role != "tool":
            continue
        data = json.loads(m.content)
        items = data.get("results", data) if isinstance(data, dict) else data
        for item in items if isinstance(items, list) else []:
            docs.setdefault(item["ref"], item["doc_id"])
    return list(docs.values())


def _answer_citing_first(request: Request) -> object:
    first = refs(request)[0]
    return say(f"思考: 冷蔵庫の故障があります。\n回答: 冷蔵庫の故障が報告されています{first}。")


def _types(answer) -> list[str]:
    return [e.type for e in answer.events]


def test_search_then_draft_then_reflection(ts) -> None:
    model = ScriptedModel(
        [
            call(("search_past_cases", FRIDGE), thought="思考: 日報を検索します"),
            _answer_citing_first,
            lambda r: review(f"冷蔵庫の故障が報告されています{refs_in_draft(r)}。"),
        ]
    )
    seen = []
    answer = run_agent(
        "冷蔵庫の故障はありましたか?", toolset(ts, now=NOW), model, on_event=seen.append
    )
    assert _types(answer) == [
        "thought",
        "tool_call",
        "tool_result",
        "thought",
        "draft",
        "critique",
        "answer",
    ]
    assert seen == list(answer.events)  # delivered as they happened, in the same order
    assert answer.model == "scripted:test" and not answer.unanswered
    first = _tool_docs(model.requests[1])[0]
    assert [c.doc_id for c in answer.citations] == [first]
    assert answer.citations[0].collection == "reports" and answer.citations[0].date
    assert answer.text == "冷蔵庫の故障が報告されています[1]。"
    # the model saw the system prompt, the specs and the question; reflection asked for JSON
    system = model.requests[0].messages[0]
    assert (
        system.role == "system" and "出典番号" in system.content and "2025-12-11" in system.content
    )
    assert "search_past_cases" in model.requests[0].tools
    assert model.requests[2].json_schema is not None and model.requests[2].tools == ()
    assert "冷蔵庫の故障が報告されています" in model.requests[2].messages[1].content


def refs_in_draft(request: Request) -> str:
    """The marker the draft used (the reviewer sees the same numbering)."""
    return "[1]" if "[1]" in request.messages[1].content else ""


def test_parallel_calls_run_together_and_answer_in_call_order(ts) -> None:
    model = ScriptedModel(
        [
            call(("search_past_cases", FRIDGE), ("search_manual", {"query": "食中毒の予防"})),
            lambda r: say(f"冷蔵庫の故障がありました{refs(r)[0]}。予防は手洗いです{refs(r)[-1]}。"),
            lambda r: review(r.messages[1].content.rsplit("# 回答案\n", 1)[1]),
        ]
    )
    answer = run_agent("冷蔵庫の故障と食中毒の予防", toolset(ts, now=NOW), model)
    calls = [e for e in answer.events if e.type == "tool_call"]
    results = [e for e in answer.events if e.type == "tool_result"]
    assert [e.call_id for e in calls] == ["call_0", "call_1"]
    assert {e.call_id for e in results} == {"call_0", "call_1"}
    tool_messages = [m for m in model.requests[1].messages if m.role == "tool"]
    assert [m.tool_call_id for m in tool_messages] == ["call_0", "call_1"]
    assert {c.collection for c in answer.citations} == {"reports", "manuals"}
    assert answer.text.count("[") == 2 and "[1]" in answer.text and "[2]" in answer.text


@pytest.mark.parametrize(
    ("name", "arguments", "error"),
    [
        ("search_past_cases", '{"query": "冷蔵庫', "引数が正しくありません"),
        ("delete_all_reports", "{}", "ツール「delete_all_reports」はありません"),
        ("search_past_cases", '{"query": "冷蔵庫", "team": "other"}', "引数 team はありません"),
        ("search_past_cases", '{"query": "冷蔵庫", "date_from": "昨日"}', "YYYY-MM-DD"),
    ],
)
def test_a_failing_call_comes_back_as_an_error_and_the_loop_goes_on(
    ts, name, arguments, error
) -> None:
    model = ScriptedModel(
        [
            call((name, arguments)),
            call(("search_past_cases", FRIDGE)),
            _answer_citing_first,
            lambda r: review("冷蔵庫の故障が報告されています[1]。"),
        ]
    )
    answer = run_agent("冷蔵庫の故障は?", toolset(ts, now=NOW), model)
    first_result = next(e for e in answer.events if e.type == "tool_result")
    assert first_result.text.startswith("エラー: ") and error in first_result.text
    observed = next(m for m in model.requests[1].messages if m.role == "tool").content
    assert error in json.loads(observed)["error"]
    assert answer.citations and not answer.unanswered
    malformed = next(e for e in answer.events if e.type == "tool_call")
    if arguments.endswith("冷蔵庫"):
        assert malformed.arguments is None and malformed.text == arguments


def test_at_the_step_limit_the_model_is_asked_once_more_without_tools(ts) -> None:
    model = ScriptedModel(
        [
            call(("search_past_cases", FRIDGE)),
            call(("search_past_cases", {"query": "冷蔵庫 故障 修理"})),
            lambda r: say(f"冷蔵庫の故障が報告されています{refs(r)[0]}。"),
            lambda r: review("冷蔵庫の故障が報告されています[1]。"),
        ]
    )
    answer = run_agent(
        "冷蔵庫の故障は?", toolset(ts, now=NOW), model, limits=AgentLimits(max_steps=2)
    )
    last = model.requests[2]
    assert last.tools == () and last.messages[-1].content == FINAL_REQUEST
    assert any("上限(2回)" in e.text for e in answer.events if e.type == "thought")
    assert answer.citations and answer.text.endswith("[1]。")


class _Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_the_time_budget_stops_tools_and_skips_reflection(ts) -> None:
    clock = _Clock()
    model = ScriptedModel(
        [
            call(("search_past_cases", FRIDGE)),
            call(("search_past_cases", {"query": "冷凍庫"})),
            lambda r: say(f"冷蔵庫の故障が報告されています{refs(r)[0]}。"),
        ]
    )

    def tick() -> None:
        clock.now += 70.0

    model.on_chat = tick
    limits = AgentLimits(total_seconds=100.0, clock=clock)
    answer = run_agent("冷蔵庫の故障は?", toolset(ts, now=NOW), model, limits=limits)
    assert len(model.requests) == 3 and model.requests[2].tools == ()
    assert model.requests[2].timeout and model.requests[2].timeout > 0
    assert any("時間の上限" in e.text for e in answer.events)
    assert "critique" not in _types(answer) and answer.citations


def test_the_token_budget_stops_tools(ts) -> None:
    model = ScriptedModel(
        [
            call(("search_past_cases", FRIDGE), prompt_tokens=900, completion_tokens=200),
            lambda r: say(f"冷蔵庫の故障です{refs(r)[0]}。"),
            review("冷蔵庫の故障です[1]。"),
        ]
    )
    answer = run_agent(
        "冷蔵庫の故障は?", toolset(ts, now=NOW), model, limits=AgentLimits(max_tokens=1000)
    )
    assert model.requests[1].tools == () and model.requests[1].messages[-1].content == FINAL_REQUEST
    assert any("トークンの上限" in e.text for e in answer.events)


def test_the_context_budget_stops_tools_and_shrinks_results(ts) -> None:
    model = ScriptedModel(
        [
            call(("search_past_cases", {"query": "冷蔵庫の故障", "top_k": 20})),
            lambda r: say(f"冷蔵庫の故障です{refs(r)[0]}。"),
            review("冷蔵庫の故障です[1]。"),
        ]
    )
    limits = AgentLimits(max_context_chars=3000)
    answer = run_agent("冷蔵庫の故障は?", toolset(ts, now=NOW), model, limits=limits)
    final = model.requests[1]
    assert final.tools == () and any("文脈の上限" in e.text for e in answer.events)
    assert sum(len(m.content) for m in final.messages) <= 3000 + 400
    assert answer.citations


@pytest.mark.parametrize(
    "failure",
    [
        ModelTimeout("言語モデルが60秒以内に応答しませんでした"),
        ModelRateLimited("言語モデルの利用制限(429)が続いています"),
        ModelUnavailable("言語モデルのサーバーに接続できません"),
    ],
)
def test_a_failing_model_hands_the_turn_to_the_offline_router(ts, failure) -> None:
    model = ScriptedModel([call(("search_past_cases", FRIDGE)), failure])
    answer = run_agent("冷蔵庫の故障", toolset(ts, now=NOW), model)
    assert answer.model == "offline" and answer.text and answer.citations
    error = next(e for e in answer.events if e.type == "error")
    assert "言語モデルなしで回答します" in error.text and str(failure) in error.text
    assert _types(answer)[-1] == "answer" and _types(answer).count("answer") == 1


def test_an_empty_reply_also_falls_back(ts) -> None:
    model = ScriptedModel([say("")])
    answer = run_agent("冷蔵庫の故障", toolset(ts, now=NOW), model)
    assert answer.model == "offline"
    assert "回答を返しませんでした" in next(e.text for e in answer.events if e.type == "error")


def test_a_failing_reflection_keeps_the_draft(ts) -> None:
    model = ScriptedModel(
        [call(("search_past_cases", FRIDGE)), _answer_citing_first, ModelTimeout("時間切れ")]
    )
    answer = run_agent("冷蔵庫の故障は?", toolset(ts, now=NOW), model)
    assert answer.model == "scripted:test" and answer.text == "冷蔵庫の故障が報告されています[1]。"
    assert "推敲できませんでした" in next(e.text for e in answer.events if e.type == "error")


def test_reflection_removes_an_unsupported_claim(ts) -> None:
    draft = "冷蔵庫の故障が報告されています[1]。修理費は50万円でした[1]。"
    model = ScriptedModel(
        [
            call(("search_past_cases", FRIDGE)),
            say(draft),
            review(
                "冷蔵庫の故障が報告されています[1]。",
                critique="修理費は検索結果にないため削除しました",
            ),
        ]
    )
    answer = run_agent("冷蔵庫の故障は?", toolset(ts, now=NOW), model)
    assert next(e.text for e in answer.events if e.type == "draft") == draft
    assert "修理費" in next(e.text for e in answer.events if e.type == "critique")
    assert answer.text == "冷蔵庫の故障が報告されています[1]。" and "50万円" not in answer.text


def test_citations_are_never_invented(ts) -> None:
    """A marker no tool returned is dropped with the sentence that relied on it."""
    model = ScriptedModel(
        [
            call(("search_past_cases", FRIDGE)),
            say("x"),
            lambda r: review(
                "冷蔵庫の故障が報告されています[2][1]。本社の調査では原因は落雷です[99]。"
                "対応済みです［１］。"
            ),
        ]
    )
    answer = run_agent("冷蔵庫の故障は?", toolset(ts, now=NOW), model)
    returned = _tool_docs(model.requests[1])
    assert answer.text == "冷蔵庫の故障が報告されています[1][2]。対応済みです[2]。"
    assert [c.doc_id for c in answer.citations] == [returned[1], returned[0]]
    assert {c.doc_id for c in answer.citations} <= set(returned)


def test_an_answer_without_sources_is_replaced_and_logged(ts) -> None:
    model = ScriptedModel(
        [say("売上は毎年20%ずつ伸びる見込みです。"), review("売上は毎年20%ずつ伸びる見込みです。")]
    )
    log = unanswered_log(ts)
    answer = run_agent("来年の売上予測は?", toolset(ts, now=NOW), model, unanswered=log)
    assert answer.unanswered and "裏付けのある回答を作れませんでした" in answer.text
    assert "20%" not in answer.text and answer.citations == ()
    assert log.list(team="default")[0].reason == "ツールで調べずに答えました"


def test_not_found_is_said_plainly_and_logged_with_the_tools_tried(ts) -> None:
    model = ScriptedModel(
        [
            call(("search_past_cases", {"query": "量子コンピュータ"})),
            call(("search_manual", {"query": "量子コンピュータ"})),
            say("見つかりませんでした。"),
            review(
                "申し訳ありません。量子コンピュータについての記録は見つかりませんでした。",
                status="not_found",
            ),
        ]
    )
    log = unanswered_log(ts)
    answer = run_agent("量子コンピュータの誤り訂正は?", toolset(ts, now=NOW), model, unanswered=log)
    assert answer.unanswered and "見つかりませんでした" in answer.text
    entry = log.list(team="default")[0]
    assert entry.question == "量子コンピュータの誤り訂正は?"
    assert entry.tools == ("search_past_cases", "search_manual")


def test_smalltalk_needs_no_source(ts) -> None:
    model = ScriptedModel(
        [
            say("こんにちは。ご質問をどうぞ。"),
            review("こんにちは。ご質問をどうぞ。", status="smalltalk"),
        ]
    )
    answer = run_agent("こんにちは", toolset(ts, now=NOW), model)
    assert not answer.unanswered and answer.text == "こんにちは。ご質問をどうぞ。"


def test_statistics_are_cited_as_the_tool_that_computed_them(ts, tables) -> None:
    model = ScriptedModel(
        [
            call(("get_claim_statistics", {"period": "先月"})),
            lambda r: say(f"先月のクレームは記録のとおりです{refs(r)[0]}。"),
            review("先月のクレームは記録のとおりです[1]。"),
        ]
    )
    answer = run_agent("先月のクレーム傾向は?", toolset(ts, now=NOW, tables=tables), model)
    (cite,) = answer.citations
    assert cite.doc_id == "get_claim_statistics" and cite.title == "クレーム統計"
    assert cite.date == "2025-11-01〜2025-11-30"


def test_limits_are_checked() -> None:
    with pytest.raises(ValueError, match="max_steps must be at least 1, got 0"):
        AgentLimits(max_steps=0)
    with pytest.raises(ValueError, match="tool_timeout must be positive"):
        AgentLimits(tool_timeout=0)


def test_a_tool_past_its_timeout_answers_with_an_error(ts) -> None:
    """A tool of the test's own that blocks until released; the search beside it still
    answers, the late one is reported to the model as an error."""
    base = toolset(ts, now=NOW)
    tools = Toolset([*base.specs, wait_for_ledger], base.scope)
    model = ScriptedModel(
        [
            call(("wait_for_ledger", {"query": "台帳"}), ("search_past_cases", FRIDGE)),
            lambda r: say(f"冷蔵庫の故障が報告されています{refs(r)[0]}。"),
            review("冷蔵庫の故障が報告されています[1]。"),
        ]
    )
    try:
        answer = run_agent("冷蔵庫の故障は?", tools, model, limits=AgentLimits(tool_timeout=3.0))
    finally:
        _release.set()
    late = next(e for e in answer.events if e.type == "tool_result" and e.call_id == "call_0")
    assert late.text.startswith("エラー: ") and "以内に終わりませんでした" in late.text
    observed = [m for m in model.requests[1].messages if m.role == "tool"]
    assert "error" in json.loads(observed[0].content) and "ref" in observed[1].content
    assert answer.citations and not answer.unanswered


def test_the_shipped_scripted_model_answers_in_order_or_by_function() -> None:
    """``tansaku.testing.ScriptedChatModel``: steps in order, an exhausted script names the
    request, a reply function answers every request (a dict becomes JSON)."""
    import json as _json

    from tansaku.agent.models.base import Message as _Message
    from tansaku.testing import ScriptedChatModel

    model = ScriptedChatModel(steps=[say("一つ目"), ValueError("二つ目は失敗")])
    hello = [_Message(role="user", content="こんにちは")]
    assert model.chat(hello).content == "一つ目"
    with pytest.raises(ValueError, match="二つ目"):
        model.chat(hello)
    with pytest.raises(AssertionError, match="request 3"):
        model.chat(hello)
    echo = ScriptedChatModel(reply=lambda r: {"echo": r.prompt})
    assert _json.loads(echo.chat(hello).content) == {"echo": "こんにちは"}
    assert [r.prompt for r in echo.requests] == ["こんにちは"]

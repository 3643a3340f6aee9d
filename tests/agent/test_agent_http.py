"""The agent through the real providers (``OpenAIChatModel``, ``GeminiChatModel``) against the
local fake servers over HTTP: tool calls (parallel, malformed, unknown), a 429 then success, a
timeout and an unreachable server falling back to the offline router, a refusal."""

from __future__ import annotations

import json

import pytest

from tansaku.agent import AgentLimits, ask, unanswered_log
from tansaku.testing import FakeGeminiServer, FakeOpenAIServer, Reply

from .clock import NOW

pytest.importorskip("openai")

KEY = "sk-test-agent-0001"
FRIDGE = {"query": "冷蔵庫の故障"}
ANSWER = "冷蔵庫の故障が報告されています[1]。"


def _review(answer: str, status: str = "answered") -> Reply:
    return Reply.say(json.dumps({"critique": "確認済み", "status": status, "answer": answer}))


@pytest.fixture
def srv():
    with FakeOpenAIServer(api_key=KEY, model="gpt-4o-mini") as server:
        yield server


def _model(srv: FakeOpenAIServer, **kw: object):
    from tansaku.agent.models.openai_compat import OpenAIChatModel

    opts: dict = {"model": "gpt-4o-mini", "base_url": srv.base_url, "api_key": KEY, **kw}
    return OpenAIChatModel(**opts)


def test_a_question_answered_through_the_openai_protocol(ts, srv) -> None:
    srv.script(
        Reply.call("search_past_cases", FRIDGE),
        Reply.say("思考: 日報に記録があります。\n回答: " + ANSWER),
        _review(ANSWER),
    )
    answer = ask(ts, "冷蔵庫の故障はありましたか?", now=NOW, model=_model(srv))
    assert answer.model == "openai:gpt-4o-mini" and answer.text == ANSWER
    (observation,) = srv.turns[1].tool_results()
    returned = json.loads(observation.content)
    assert observation.name == "search_past_cases" and returned[0]["ref"] == "[1]"
    assert [c.doc_id for c in answer.citations] == [returned[0]["doc_id"]]
    assert "search_past_cases" in srv.turns[0].tools and srv.turns[2].json_schema is not None
    assert srv.turns[2].tools == ()


def test_parallel_malformed_and_unknown_calls_over_http(ts, srv) -> None:
    srv.script(
        Reply.calls(
            ("search_past_cases", FRIDGE),
            ("search_manual", '{"query": "食中毒'),
            ("drop_table", {"name": "reports"}),
        ),
        Reply.say(ANSWER),
        _review(ANSWER),
    )
    answer = ask(ts, "冷蔵庫の故障は?", now=NOW, model=_model(srv))
    results = srv.turns[1].tool_results()
    assert [m.name for m in results] == ["search_past_cases", "search_manual", "drop_table"]
    assert "引数が正しくありません" in json.loads(results[1].content)["error"]
    assert "ツール「drop_table」はありません" in json.loads(results[2].content)["error"]
    assert answer.citations and answer.model == "openai:gpt-4o-mini"


def test_a_429_then_success_is_retried_by_the_provider(ts, srv) -> None:
    srv.script(
        Reply.error(429, "Rate limit reached", retry_after=0.01),
        Reply.call("search_past_cases", FRIDGE),
        Reply.say(ANSWER),
        _review(ANSWER),
    )
    answer = ask(ts, "冷蔵庫の故障は?", now=NOW, model=_model(srv, max_retries=2))
    assert answer.model == "openai:gpt-4o-mini" and answer.citations
    assert not [e for e in answer.events if e.type == "error"]


def test_a_model_that_keeps_answering_429_falls_back_offline(ts, srv) -> None:
    srv.script(*[Reply.error(429, "Rate limit reached", retry_after=0.01)] * 2)
    answer = ask(ts, "冷蔵庫の故障", now=NOW, model=_model(srv, max_retries=1))
    assert answer.model == "offline" and answer.citations
    error = next(e for e in answer.events if e.type == "error")
    assert "言語モデルなしで回答します" in error.text and KEY not in error.text


def test_a_timeout_falls_back_offline(ts, srv) -> None:
    srv.script(Reply.call("search_past_cases", FRIDGE), Reply.slow(5.0))
    limits = AgentLimits(model_timeout=0.5)
    answer = ask(ts, "冷蔵庫の故障", now=NOW, model=_model(srv, max_retries=0), limits=limits)
    assert answer.model == "offline" and answer.text and answer.citations
    assert [e.type for e in answer.events][:3] == ["tool_call", "tool_result", "error"]


def test_an_unreachable_server_falls_back_offline(ts) -> None:
    with FakeOpenAIServer() as gone:
        url = gone.base_url
    from tansaku.agent.models.openai_compat import OpenAIChatModel

    model = OpenAIChatModel(model="m", base_url=url, max_retries=0)
    answer = ask(ts, "冷蔵庫の故障", now=NOW, model=model)
    assert answer.model == "offline" and "接続できません" in answer.events[0].text


def test_a_refusal_is_not_an_answer(ts, srv) -> None:
    srv.script(Reply.refuse("I'm sorry, but I can't help with that."))
    answer = ask(ts, "冷蔵庫の故障", now=NOW, model=_model(srv))
    assert answer.unanswered and answer.citations == () and "見つかりません" in answer.text
    assert "sorry" not in answer.text and len(srv.turns) == 1  # no reflection of a refusal
    critique = next(e.text for e in answer.events if e.type == "critique")
    assert critique == "言語モデルが回答を断りました"
    assert unanswered_log(ts).list(team="default")[0].reason == critique


def test_a_question_answered_through_the_gemini_protocol(ts) -> None:
    pytest.importorskip("google.genai")
    from tansaku.agent.models.gemini import GeminiChatModel

    with FakeGeminiServer(api_key=KEY) as gem:
        gem.script(
            Reply.call("search_manual", {"query": "食中毒の予防"}),
            Reply.say("手洗いを徹底します[1]。"),
            _review("手洗いを徹底してください[1]。"),
        )
        model = GeminiChatModel(model="gemini-2.5-flash", api_key=KEY, base_url=gem.url)
        answer = ask(ts, "食中毒の予防方法を教えて", now=NOW, model=model)
        (observation,) = gem.turns[1].tool_results()
    assert answer.model.startswith("gemini") and answer.text == "手洗いを徹底してください[1]。"
    returned = json.loads(observation.content)["output"]  # Gemini wraps a list in an object
    assert answer.citations[0].doc_id == returned[0]["doc_id"]
    assert answer.citations[0].collection == "manuals"


def _gemini(gem: FakeGeminiServer):
    pytest.importorskip("google.genai")
    from tansaku.agent.models.gemini import GeminiChatModel

    return GeminiChatModel(model="gemini-2.5-flash", api_key=KEY, base_url=gem.url)


def test_a_malformed_function_call_is_asked_again_once(ts) -> None:
    with FakeGeminiServer(api_key=KEY) as gem:
        gem.script(
            Reply.call("search_manual", '{"query": "食中毒の予防'),  # MALFORMED_FUNCTION_CALL
            Reply.call("search_manual", {"query": "食中毒の予防"}),
            Reply.say("手洗いを徹底します[1]。"),
            _review("手洗いを徹底してください[1]。"),
        )
        answer = ask(ts, "食中毒の予防方法を教えて", now=NOW, model=_gemini(gem))
        turns = gem.turns
    assert answer.text == "手洗いを徹底してください[1]。" and not answer.unanswered
    assert answer.citations and answer.citations[0].collection == "manuals"
    assert len(turns) == 4 and turns[1].messages == turns[0].messages  # the same question again
    thoughts = [e.text for e in answer.events if e.type == "thought"]
    assert "言語モデルの応答が壊れていたため、もう一度尋ねます" in thoughts
    assert not any(e.type == "error" for e in answer.events)


def test_a_second_malformed_reply_is_treated_as_no_answer(ts) -> None:
    with FakeGeminiServer(api_key=KEY) as gem:
        gem.script(
            Reply.call("search_manual", '{"query": "食中毒'),
            Reply.call("search_manual", "[1, 2]"),  # not an object: malformed too
        )
        answer = ask(ts, "食中毒の予防方法を教えて", now=NOW, model=_gemini(gem))
        assert gem.pending == 0 and len(gem.turns) == 2  # asked again once, not more
    errors = [e.text for e in answer.events if e.type == "error"]
    assert errors and "言語モデルが回答を返しませんでした" in errors[0]
    assert answer.text  # the offline router answered instead of an empty answer


def test_the_store_the_user_and_the_weekday_reach_the_model(ts, srv) -> None:
    """Design 000's context (store, user, date and weekday) in what the provider receives."""
    srv.script(Reply.say("思考: 挨拶です。\n回答: こんにちは。"), _review("こんにちは。"))
    ask(ts, "こんにちは", now=NOW, model=_model(srv), store="新宿店", user="田中太郎")
    system = srv.turns[0].messages[0]
    assert system.role == "system"
    assert "質問者: 田中太郎" in system.content and "新宿店" in system.content
    assert f"({'月火水木金土日'[NOW.weekday()]}曜日)" in system.content


def test_a_user_name_with_control_characters_is_refused(ts, srv) -> None:
    from tansaku.errors import InvalidRequest

    with pytest.raises(InvalidRequest, match="質問者"):
        ask(ts, "こんにちは", now=NOW, model=_model(srv), user="田中\x1b[2J")
    assert srv.turns == []

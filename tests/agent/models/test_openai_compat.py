"""OpenAIChatModel against the fake chat-completions server, over HTTP on 127.0.0.1: every
scripted case, non-streamed and streamed."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from tansaku.agent.models import (
    ChatModel,
    Message,
    ModelError,
    ModelRateLimited,
    ModelTimeout,
    ModelUnavailable,
    ToolCall,
)
from tansaku.agent.models.openai_compat import OpenAIChatModel
from tansaku.testing import ChatTurn, FakeOpenAIServer, Reply, ScriptedCall

from .conftest import ROUTE_SCHEMA

KEY = "sk-test-7f3a9c2e5b1d"
QUESTION = [Message.system("あなたは店舗運営の相談役です。"), Message.user("昨日の問題を教えて")]


@pytest.fixture
def srv() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer(api_key=KEY) as server:
        yield server


def make(srv: FakeOpenAIServer, **kw: object) -> OpenAIChatModel:
    opts: dict = {"model": "gpt-4o-mini", "base_url": srv.base_url, "api_key": KEY, **kw}
    return OpenAIChatModel(**opts)


@pytest.fixture(params=["plain", "stream"])
def mode(request: pytest.FixtureRequest) -> str:
    return request.param


class Streamed:
    """``on_text`` for the streamed mode (None in the plain mode), with what it received."""

    def __init__(self, mode: str) -> None:
        self.pieces: list[str] = []
        self.on_text = self.pieces.append if mode == "stream" else None


def test_a_text_reply(srv: FakeOpenAIServer, mode: str) -> None:
    srv.script(Reply.say("昨日は冷蔵庫の故障が1件ありました。"))
    s = Streamed(mode)
    reply = make(srv).chat(QUESTION, on_text=s.on_text)
    assert reply.content == "昨日は冷蔵庫の故障が1件ありました。"
    assert reply.finish_reason == "stop" and reply.tool_calls == ()
    assert reply.model == "gpt-4o-mini"
    assert reply.usage["prompt_tokens"] > 0 and reply.usage["completion_tokens"] > 0
    if mode == "stream":
        assert len(s.pieces) > 1 and "".join(s.pieces) == reply.content
    sent = srv.requests[-1]
    assert sent.headers["authorization"] == f"Bearer {KEY}"
    assert sent.body["messages"] == [
        {"role": "system", "content": "あなたは店舗運営の相談役です。"},
        {"role": "user", "content": "昨日の問題を教えて"},
    ]
    assert sent.body.get("stream", False) is (mode == "stream")


def test_one_tool_call(srv: FakeOpenAIServer, mode: str, specs: list) -> None:
    srv.script(Reply.call("search_past_cases", {"query": "冷蔵庫の故障"}, id="call_abc"))
    reply = make(srv).chat(QUESTION, tools=specs, on_text=Streamed(mode).on_text)
    assert reply.finish_reason == "tool_calls"
    assert reply.tool_calls == (
        ToolCall(id="call_abc", name="search_past_cases", arguments='{"query": "冷蔵庫の故障"}'),
    )
    tools = srv.requests[-1].body["tools"]
    assert [t["function"]["name"] for t in tools] == ["search_past_cases", "get_current_time"]
    assert tools[0]["function"]["parameters"]["required"] == ["query"]


def test_parallel_tool_calls_are_assembled_from_their_deltas(
    srv: FakeOpenAIServer, mode: str, specs: list
) -> None:
    srv.script(
        Reply.calls(
            ("search_past_cases", {"query": "レジの違算 新宿店", "limit": 5}),
            ("get_current_time", {}),
            ("search_past_cases", {"query": "お客様からのクレーム"}),
        )
    )
    reply = make(srv).chat(QUESTION, tools=specs, on_text=Streamed(mode).on_text)
    assert [c.name for c in reply.tool_calls] == [
        "search_past_cases",
        "get_current_time",
        "search_past_cases",
    ]
    assert [json.loads(c.arguments) for c in reply.tool_calls] == [
        {"query": "レジの違算 新宿店", "limit": 5},
        {},
        {"query": "お客様からのクレーム"},
    ]
    assert len({c.id for c in reply.tool_calls}) == 3


def test_malformed_arguments_come_back_verbatim(
    srv: FakeOpenAIServer, mode: str, specs: list
) -> None:
    srv.script(Reply.call("search_past_cases", '{"query": "冷蔵庫の'))
    reply = make(srv).chat(QUESTION, tools=specs, on_text=Streamed(mode).on_text)
    assert reply.tool_calls[0].arguments == '{"query": "冷蔵庫の'


def test_an_unknown_tool_name_is_passed_on(srv: FakeOpenAIServer, mode: str, specs: list) -> None:
    srv.script(Reply.call("delete_all_records", {"team": "other"}))
    reply = make(srv).chat(QUESTION, tools=specs, on_text=Streamed(mode).on_text)
    assert reply.tool_calls[0].name == "delete_all_records"


def test_a_refusal(srv: FakeOpenAIServer, mode: str) -> None:
    srv.script(Reply.refuse("申し訳ありませんが、その依頼にはお応えできません。"))
    s = Streamed(mode)
    reply = make(srv).chat(QUESTION, on_text=s.on_text)
    assert reply.finish_reason == "refusal"
    assert reply.content == "申し訳ありませんが、その依頼にはお応えできません。"
    assert s.pieces == []  # a refusal is not answer text


def test_structured_output_sends_the_schema(srv: FakeOpenAIServer, mode: str) -> None:
    srv.script(Reply.say('{"category": "vague", "reason": "「問題」が曖昧"}'))
    reply = make(srv).chat(QUESTION, json_schema=ROUTE_SCHEMA, on_text=Streamed(mode).on_text)
    assert json.loads(reply.content)["category"] == "vague"
    fmt = srv.requests[-1].body["response_format"]
    assert fmt["type"] == "json_schema"
    assert fmt["json_schema"]["name"] == "route"
    assert fmt["json_schema"]["schema"] == ROUTE_SCHEMA
    assert srv.turns[-1].json_schema == ROUTE_SCHEMA


def test_a_429_with_retry_after_is_retried(srv: FakeOpenAIServer, mode: str) -> None:
    srv.script(Reply.error(429, retry_after=0.01), Reply.say("お待たせしました。"))
    reply = make(srv).chat(QUESTION, on_text=Streamed(mode).on_text)
    assert reply.content == "お待たせしました。"
    assert len(srv.requests) == 2


def test_429_after_every_retry_is_rate_limited(srv: FakeOpenAIServer) -> None:
    srv.script(*[Reply.error(429, retry_after=0.01)] * 3)
    with pytest.raises(ModelRateLimited) as info:
        make(srv, max_retries=2).chat(QUESTION)
    assert len(srv.requests) == 3
    message = str(info.value)
    assert "利用上限" in message and srv.base_url in message and "gpt-4o-mini" in message
    assert KEY not in message


def test_a_server_error_is_retried_then_reported(srv: FakeOpenAIServer) -> None:
    srv.script(Reply.error(503, retry_after=0.01), Reply.say("復旧しました。"))
    assert make(srv).chat(QUESTION).content == "復旧しました。"
    srv.script(*[Reply.error(500, "backend exploded", retry_after=0.01)] * 2)
    with pytest.raises(ModelUnavailable, match="サーバーエラー"):
        make(srv, max_retries=1).chat(QUESTION)


def test_a_reply_slower_than_the_timeout(srv: FakeOpenAIServer, mode: str) -> None:
    srv.script(Reply.slow(30, Reply.say("遅すぎる回答")))
    with pytest.raises(ModelTimeout) as info:
        make(srv, max_retries=0).chat(QUESTION, timeout=0.5, on_text=Streamed(mode).on_text)
    assert "0.5 秒以内" in str(info.value)


def test_a_timeout_is_retried_by_the_sdk(srv: FakeOpenAIServer) -> None:
    srv.script(Reply.slow(30), Reply.say("二度目で届きました。"))
    reply = make(srv, max_retries=1).chat(QUESTION, timeout=0.5)
    assert reply.content == "二度目で届きました。"


def test_a_stream_that_trickles_past_the_timeout(srv: FakeOpenAIServer) -> None:
    srv.script(Reply(text="とても長い回答が少しずつ届きます。" * 3, chunk_delay_s=0.2))
    with pytest.raises(ModelTimeout):
        make(srv, max_retries=0).chat(QUESTION, timeout=0.5, on_text=lambda _: None)


def test_a_wrong_key_is_unavailable_and_never_shown(srv: FakeOpenAIServer) -> None:
    model = OpenAIChatModel(model="gpt-4o-mini", base_url=srv.base_url, api_key="sk-wrong-0000")
    with pytest.raises(ModelUnavailable) as info:
        model.chat(QUESTION)
    assert "認証" in str(info.value) and "sk-wrong-0000" not in str(info.value)
    assert len(srv.requests) == 1  # a 401 is not retried


def test_nothing_listening_is_unavailable() -> None:
    with FakeOpenAIServer() as gone:
        url = gone.base_url
    with pytest.raises(ModelUnavailable, match="接続できません"):
        OpenAIChatModel(model="m", base_url=url, max_retries=0).chat(QUESTION)


def test_a_rejected_request_is_a_model_error_not_retried(srv: FakeOpenAIServer) -> None:
    with pytest.raises(ModelError, match="要求を受け付けませんでした") as info:
        make(srv).chat(QUESTION)  # nothing scripted: the fake answers 400
    assert type(info.value) is ModelError
    assert len(srv.requests) == 1


def test_a_conversation_with_tool_results_is_valid_openai(
    srv: FakeOpenAIServer, specs: list
) -> None:
    def handler(turn: ChatTurn) -> Reply:
        results = turn.tool_results()
        if not results:
            return Reply.calls(
                ScriptedCall("get_current_time", {}),
                ScriptedCall("search_past_cases", {"query": "問題"}),
            )
        return Reply.say(f"{len(results)}件の結果をもとに回答します: {results[1].content}")

    srv.handler = handler
    model = make(srv)
    history = list(QUESTION)
    first = model.chat(history, tools=specs)
    history.append(Message.assistant(first.content, first.tool_calls))
    history += [Message.tool(first.tool_calls[0], '{"date": "2025-12-10"}')]
    history += [Message.tool(first.tool_calls[1], '[{"title": "冷蔵庫の故障"}]')]
    second = model.chat(history, tools=specs)
    assert second.content == '2件の結果をもとに回答します: [{"title": "冷蔵庫の故障"}]'
    sent = srv.requests[-1].body["messages"]
    assert sent[2]["role"] == "assistant" and sent[2]["content"] is None
    assert [m["tool_call_id"] for m in sent[3:]] == [c.id for c in first.tool_calls]
    assert srv.turns[-1].tool_results()[1].name == "search_past_cases"


def test_local_servers_get_max_tokens_and_the_model_options(srv: FakeOpenAIServer) -> None:
    srv.script(Reply.say("はい"))
    make(srv, temperature=0.2).chat(QUESTION, max_tokens=64)
    body = srv.requests[-1].body
    assert body["max_tokens"] == 64 and body["temperature"] == 0.2
    srv.script(Reply.say("はい"))
    make(srv, temperature=0.2).chat(QUESTION, temperature=0.0)
    assert srv.requests[-1].body["temperature"] == 0.0


def test_on_text_errors_are_the_callers(srv: FakeOpenAIServer) -> None:
    srv.script(Reply.say("途中で止めます"))

    def boom(_: str) -> None:
        raise KeyError("表示側の不具合")

    with pytest.raises(KeyError):
        make(srv).chat(QUESTION, on_text=boom)


def test_it_is_a_chat_model(srv: FakeOpenAIServer) -> None:
    model = make(srv, provider="ollama")
    assert isinstance(model, ChatModel)
    assert model.name == "ollama:gpt-4o-mini"
    assert KEY not in repr(model)

"""GeminiChatModel (google-genai SDK) against the fake Gemini server over HTTP on 127.0.0.1:
every scripted case, generateContent and streamGenerateContent."""

from __future__ import annotations

import base64
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
)
from tansaku.agent.models.gemini import GeminiChatModel
from tansaku.errors import ConfigError
from tansaku.testing import ChatTurn, FakeGeminiServer, Reply, ScriptedCall

from .conftest import ROUTE_SCHEMA

KEY = "AIza-test-5c8d1e9f"
QUESTION = [
    Message.system("あなたは店舗運営の相談役です。"),
    Message.user("食中毒の予防方法を教えて"),
]


@pytest.fixture
def srv() -> Iterator[FakeGeminiServer]:
    with FakeGeminiServer(api_key=KEY) as server:
        yield server


def make(srv: FakeGeminiServer, **kw: object) -> GeminiChatModel:
    opts: dict = {"model": "gemini-2.5-flash", "api_key": KEY, "base_url": srv.url}
    return GeminiChatModel(**{"retry_delay": 0.01, **opts, **kw})


@pytest.fixture(params=["plain", "stream"])
def mode(request: pytest.FixtureRequest) -> str:
    return request.param


class Streamed:
    def __init__(self, mode: str) -> None:
        self.pieces: list[str] = []
        self.on_text = self.pieces.append if mode == "stream" else None


def test_a_text_reply(srv: FakeGeminiServer, mode: str) -> None:
    srv.script(Reply.say("手洗いと加熱、保管温度の管理が基本です。"))
    s = Streamed(mode)
    reply = make(srv).chat(QUESTION, on_text=s.on_text)
    assert reply.content == "手洗いと加熱、保管温度の管理が基本です。"
    assert reply.finish_reason == "stop" and reply.model == "gemini-2.5-flash"
    assert reply.usage["prompt_tokens"] > 0 and reply.usage["completion_tokens"] > 0
    sent = srv.requests[-1]
    assert sent.path.endswith(":streamGenerateContent" if mode == "stream" else ":generateContent")
    assert sent.headers["x-goog-api-key"] == KEY
    assert sent.body["systemInstruction"]["parts"] == [{"text": "あなたは店舗運営の相談役です。"}]
    assert sent.body["contents"] == [
        {"role": "user", "parts": [{"text": "食中毒の予防方法を教えて"}]}
    ]
    if mode == "stream":
        assert sent.query == {"alt": "sse"}
        assert len(s.pieces) > 1 and "".join(s.pieces) == reply.content


def test_function_calls_parallel(srv: FakeGeminiServer, mode: str, specs: list) -> None:
    srv.script(
        Reply.calls(("search_past_cases", {"query": "食中毒 予防"}), ("get_current_time", {}))
    )
    reply = make(srv).chat(QUESTION, tools=specs, on_text=Streamed(mode).on_text)
    assert reply.finish_reason == "tool_calls"
    assert [(c.name, json.loads(c.arguments)) for c in reply.tool_calls] == [
        ("search_past_cases", {"query": "食中毒 予防"}),
        ("get_current_time", {}),
    ]
    assert len({c.id for c in reply.tool_calls}) == 2
    assert base64.b64decode(reply.tool_calls[0].signature) == b"fake-signature-1"
    declared = srv.requests[-1].body["tools"][0]["functionDeclarations"]
    assert [d["name"] for d in declared] == ["search_past_cases", "get_current_time"]
    assert srv.turns[-1].tools == ("search_past_cases", "get_current_time")


def test_function_responses_go_back_in_one_turn_with_the_signature(
    srv: FakeGeminiServer, specs: list
) -> None:
    def handler(turn: ChatTurn) -> Reply:
        results = turn.tool_results()
        if not results:
            return Reply.calls(
                ScriptedCall("search_past_cases", {"query": "食中毒"}, id="fc-1"),
                ScriptedCall("get_current_time", {}),
            )
        return Reply.say(f"{results[0].name}: {json.loads(results[0].content)['hits'][0]}")

    srv.handler = handler
    model = make(srv)
    history = list(QUESTION)
    first = model.chat(history, tools=specs)
    assert first.tool_calls[0].id == "fc-1"
    history.append(Message.assistant(first.content, first.tool_calls))
    history.append(Message.tool(first.tool_calls[0], '{"hits": ["加熱は中心温度75℃で1分以上"]}'))
    history.append(Message.tool(first.tool_calls[1], '"2025-12-10T09:00:00+09:00"'))
    second = model.chat(history, tools=specs)
    assert second.content == "search_past_cases: 加熱は中心温度75℃で1分以上"
    contents = srv.requests[-1].body["contents"]
    assert [c["role"] for c in contents] == ["user", "model", "user"]
    call_part = contents[1]["parts"][0]
    assert base64.b64decode(call_part["thoughtSignature"]) == b"fake-signature-1"
    assert call_part["functionCall"]["id"] == "fc-1"
    assert "id" not in contents[1]["parts"][1]["functionCall"]  # Gemini gave none: none sent
    responses = [p["functionResponse"] for p in contents[2]["parts"]]
    assert responses[0] == {
        "id": "fc-1",
        "name": "search_past_cases",
        "response": {"hits": ["加熱は中心温度75℃で1分以上"]},
    }
    assert responses[1]["response"] == {"output": "2025-12-10T09:00:00+09:00"}


def test_a_malformed_function_call(srv: FakeGeminiServer, mode: str, specs: list) -> None:
    srv.script(Reply.call("search_past_cases", '{"query": "食中毒'))
    reply = make(srv).chat(QUESTION, tools=specs, on_text=Streamed(mode).on_text)
    assert reply.finish_reason == "error" and reply.tool_calls == ()


def test_an_unknown_function_name_is_passed_on(
    srv: FakeGeminiServer, mode: str, specs: list
) -> None:
    srv.script(Reply.call("drop_table", {"name": "stores"}))
    reply = make(srv).chat(QUESTION, tools=specs, on_text=Streamed(mode).on_text)
    assert reply.tool_calls[0].name == "drop_table"


def test_a_refusal(srv: FakeGeminiServer, mode: str) -> None:
    srv.script(Reply.refuse())
    reply = make(srv).chat(QUESTION, on_text=Streamed(mode).on_text)
    assert reply.finish_reason == "refusal" and reply.content == ""


def test_structured_output(srv: FakeGeminiServer, mode: str) -> None:
    srv.script(Reply.say('{"category": "manual", "reason": "予防方法はマニュアルにある"}'))
    reply = make(srv).chat(QUESTION, json_schema=ROUTE_SCHEMA, on_text=Streamed(mode).on_text)
    assert json.loads(reply.content)["category"] == "manual"
    config = srv.requests[-1].body["generationConfig"]
    assert config["responseMimeType"] == "application/json"
    assert config["responseJsonSchema"] == ROUTE_SCHEMA


def test_options_reach_the_generation_config(srv: FakeGeminiServer) -> None:
    srv.script(Reply.say("はい"))
    make(srv, temperature=0.3).chat(QUESTION, max_tokens=128)
    config = srv.requests[-1].body["generationConfig"]
    assert config["temperature"] == 0.3 and config["maxOutputTokens"] == 128


def test_a_429_then_success(srv: FakeGeminiServer, mode: str) -> None:
    srv.script(Reply.error(429), Reply.say("お待たせしました。"))
    reply = make(srv).chat(QUESTION, on_text=Streamed(mode).on_text)
    assert reply.content == "お待たせしました。" and len(srv.requests) == 2


def test_429_after_every_retry(srv: FakeGeminiServer) -> None:
    srv.script(*[Reply.error(429)] * 3)
    with pytest.raises(ModelRateLimited) as info:
        make(srv, max_retries=2).chat(QUESTION)
    assert len(srv.requests) == 3
    assert "gemini-2.5-flash" in str(info.value) and KEY not in str(info.value)


def test_a_timeout(srv: FakeGeminiServer, mode: str) -> None:
    srv.script(Reply.slow(30))
    with pytest.raises(ModelTimeout, match=r"0\.5 秒以内"):
        make(srv, max_retries=0).chat(QUESTION, timeout=0.5, on_text=Streamed(mode).on_text)


def test_a_timeout_is_retried(srv: FakeGeminiServer) -> None:
    srv.script(Reply.slow(30), Reply.say("二度目で届きました。"))
    assert make(srv, max_retries=1).chat(QUESTION, timeout=0.5).content == "二度目で届きました。"


def test_a_wrong_key(srv: FakeGeminiServer) -> None:
    with pytest.raises(ModelUnavailable, match="認証") as info:
        make(srv, api_key="AIza-wrong-1234").chat(QUESTION)
    assert "AIza-wrong-1234" not in str(info.value)


def test_no_key_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="GEMINI_API_KEY"):
        GeminiChatModel(model="gemini-2.5-flash", api_key="")


def test_nothing_listening() -> None:
    with FakeGeminiServer() as gone:
        url = gone.url
    model = GeminiChatModel(model="gemini-2.5-flash", api_key=KEY, base_url=url, max_retries=0)
    with pytest.raises(ModelUnavailable, match="接続できません"):
        model.chat(QUESTION)


def test_a_rejected_request_is_a_model_error(srv: FakeGeminiServer) -> None:
    with pytest.raises(ModelError, match="要求を受け付けませんでした") as info:
        make(srv).chat(QUESTION)  # nothing scripted: the fake answers 400
    assert type(info.value) is ModelError and len(srv.requests) == 1


def test_it_is_a_chat_model(srv: FakeGeminiServer) -> None:
    model = make(srv)
    assert isinstance(model, ChatModel) and model.name == "gemini:gemini-2.5-flash"
    assert KEY not in repr(model)

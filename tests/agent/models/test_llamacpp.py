"""The local llama.cpp provider: the per-step JSON schema (a tool call or final_answer), the
messages a template with no tool support sees, the mapping back — and, when llama-cpp-python
and the 0.5B GGUF are installed, one real run."""

from __future__ import annotations

import importlib.util
import json
import os
from pathlib import Path

import pytest

from tansaku.agent.models import Message, ToolCall
from tansaku.agent.models.llamacpp import (
    FINAL,
    action_schema,
    observed,
    parse_action,
    to_llama_messages,
    tool_instructions,
)

from .conftest import CLOCK, SEARCH


def test_the_schema_offers_each_tool_with_its_arguments_and_final_answer() -> None:
    schema = action_schema([SEARCH, CLOCK])
    options = schema["anyOf"]
    assert [o["properties"]["action"]["const"] for o in options] == [
        "search_past_cases",
        "get_current_time",
        FINAL,
    ]
    assert options[0]["properties"]["arguments"] == SEARCH.parameters
    assert options[2]["required"] == ["action", "answer"]


def test_the_first_step_of_a_turn_must_call_a_tool() -> None:
    names = [
        o["properties"]["action"]["const"] for o in action_schema([SEARCH], final=False)["anyOf"]
    ]
    assert names == ["search_past_cases"]
    call = ToolCall(id="c1", name="search_past_cases", arguments='{"query": "違算"}')
    asked = [Message.user("昨日の違算は?")]
    assert not observed(asked)
    assert observed([*asked, Message.assistant("", [call]), Message.tool(call, "[]")])
    follow_up = [
        *asked,
        Message.assistant("", [call]),
        Message.tool(call, "[]"),
        Message.assistant("500円でした。"),
        Message.user("その店舗の先週の売上は?"),
    ]
    assert not observed(follow_up)


def test_a_tool_step_becomes_a_tool_call() -> None:
    reply = parse_action(
        '{"action": "search_past_cases", "arguments": {"query": "冷蔵庫"}}', "stop"
    )
    assert reply.finish_reason == "tool_calls"
    (call,) = reply.tool_calls
    assert call.name == "search_past_cases" and json.loads(call.arguments) == {"query": "冷蔵庫"}


def test_final_answer_becomes_content() -> None:
    reply = parse_action('{"action": "final_answer", "answer": "昨日は3件でした。"}', "stop")
    assert reply.content == "昨日は3件でした。" and reply.tool_calls == ()


def test_cut_off_json_is_reported_not_invented() -> None:
    assert parse_action('{"action": "final_answer", "answer": "昨日', "length").finish_reason == (
        "length"
    )
    assert parse_action("[]", "stop").finish_reason == "error"


def test_history_is_rendered_for_a_template_without_tools() -> None:
    call = ToolCall(id="call_1", name="search_past_cases", arguments='{"query": "違算"}')
    messages = [
        Message.system("あなたは店舗運営の相談役です。"),
        Message.user("レジの違算について教えて"),
        Message.assistant("", [call]),
        Message.tool(call, '[{"title": "新宿店 違算 500円"}]'),
    ]
    out = to_llama_messages(messages, [SEARCH, CLOCK])
    assert [m["role"] for m in out] == ["system", "user", "assistant", "user"]
    assert out[0]["content"].startswith("あなたは店舗運営の相談役です。")
    assert "search_past_cases" in out[0]["content"] and FINAL in out[0]["content"]
    assert json.loads(out[2]["content"]) == {
        "action": "search_past_cases",
        "arguments": {"query": "違算"},
    }
    assert "新宿店 違算 500円" in out[3]["content"] and FINAL in out[3]["content"]


def test_instructions_keep_descriptions_short() -> None:
    text = tool_instructions([SEARCH])
    assert "query(string、必須、検索する内容)" in text  # what it takes, not only its type


def test_instructions_name_the_values_a_tool_takes() -> None:
    """A small model shown only ``source_types(array)`` sends 「日報」; shown what the tool takes
    (its description), it sends daily_report."""
    from tansaku.tools.search import search_past_cases

    text = tool_instructions([search_past_cases])
    assert "source_types(array、daily_report / bbs_post / bbs_comment)" in text


def _gguf() -> Path | None:
    explicit = os.environ.get("TANSAKU_TEST_GGUF")
    if explicit:
        return Path(explicit)
    from tansaku.agent.models.install import installed_models, models_dir

    found = [m.path for m in installed_models(models_dir(os.environ.get("TANSAKU_MODELS_HOME")))]
    return found[0] if found else None


@pytest.mark.integration
def test_the_real_local_model_routes_a_question() -> None:
    if importlib.util.find_spec("llama_cpp") is None:
        pytest.skip("llama-cpp-python is not installed (pip install 'tansaku[local]')")
    path = _gguf()
    if path is None or not path.is_file():
        pytest.skip(
            "no GGUF model: `tansaku models install qwen2.5-0.5b --home DIR` and set "
            "TANSAKU_MODELS_HOME=DIR (or TANSAKU_TEST_GGUF=file.gguf)"
        )
    from tansaku.agent.models.llamacpp import LlamaCppChatModel

    model = LlamaCppChatModel(path, n_ctx=2048)
    question = [Message.system("あなたは店舗運営の相談役です。"), Message.user("現在の時刻は?")]
    reply = model.chat(question, tools=[SEARCH, CLOCK], max_tokens=96)
    assert reply.finish_reason in ("tool_calls", "stop")
    if reply.tool_calls:
        assert reply.tool_calls[0].name in ("search_past_cases", "get_current_time")
        json.loads(reply.tool_calls[0].arguments)
    structured = model.chat(
        [Message.user("「冷蔵庫が壊れた」は曖昧な質問ですか? JSON で答えて")],
        json_schema={
            "type": "object",
            "properties": {"vague": {"type": "boolean"}},
            "required": ["vague"],
        },
        max_tokens=32,
    )
    assert isinstance(json.loads(structured.content)["vague"], bool)

"""The registry as LangChain tools, driven through LangChain's own API (invoke, tool calls,
async, the OpenAI tool format) on a real workspace."""

from __future__ import annotations

import json
import sys

import anyio
import pytest
from langchain_core.messages import AIMessage, ToolMessage
from langchain_core.tools import BaseTool, StructuredTool
from langchain_core.utils.function_calling import convert_to_openai_tool

from tansaku.errors import MissingExtra
from tansaku.integrations.langchain import as_langchain_tools
from tansaku.tools import toolset

from .conftest import NOW, OTHER_TEAM_TEXT


@pytest.fixture
def tools(hash_client):
    return toolset(hash_client, now=NOW)


def test_every_registry_tool_with_its_name_description_and_schema(tools) -> None:
    lc = as_langchain_tools(tools)
    assert [t.name for t in lc] == [s.name for s in tools.specs]
    for tool, spec in zip(lc, tools.specs, strict=True):
        assert isinstance(tool, StructuredTool) and isinstance(tool, BaseTool)
        assert tool.description == spec.description
        assert tool.args == spec.parameters["properties"]
        function = convert_to_openai_tool(tool)["function"]
        assert function["name"] == spec.name and function["description"] == spec.description
        assert function["parameters"]["properties"] == spec.parameters["properties"]
        assert function["parameters"].get("required", []) == spec.parameters.get("required", [])


def test_invoke_returns_the_toolsets_json(tools) -> None:
    search_manual = {t.name: t for t in as_langchain_tools(tools)}["search_manual"]
    arguments = {"query": "食中毒の予防方法", "top_k": 2}
    text = search_manual.invoke(arguments)
    assert text == tools.call("search_manual", arguments)
    hits = json.loads(text)
    assert len(hits) == 2 and hits[0]["doc_id"] == "hygiene" and "食中毒" in hits[0]["content"]


def test_a_models_tool_calls_run_as_tool_messages(tools) -> None:
    by_name = {t.name: t for t in as_langchain_tools(tools)}
    reply = AIMessage(
        content="",
        tool_calls=[
            {"name": "search_past_cases", "args": {"query": "冷蔵庫の故障"}, "id": "call_1"},
            {"name": "get_current_time", "args": {}, "id": "call_2"},
            {"name": "search_manual", "args": {"query": "手洗い", "top_k": "多め"}, "id": "call_3"},
        ],
    )
    messages = [by_name[call["name"]].invoke(call) for call in reply.tool_calls]
    assert all(isinstance(m, ToolMessage) for m in messages)
    assert [m.tool_call_id for m in messages] == ["call_1", "call_2", "call_3"]
    cases = json.loads(messages[0].content)
    assert cases and any("冷蔵庫" in c["content"] for c in cases)
    assert OTHER_TEAM_TEXT not in messages[0].content  # the toolset's team, not the model's
    assert json.loads(messages[1].content)["date"] == "2025-12-11"
    assert json.loads(messages[2].content) == {
        "error": "引数が正しくありません: 引数 top_k の型が違います(integer で指定してください)"
    }


def test_async_and_batch(tools) -> None:
    expand = {t.name: t for t in as_langchain_tools(tools)}["expand_and_search_cases"]

    async def main():
        return await expand.ainvoke({"query": "昨日の問題", "top_k": 5})

    result = json.loads(anyio.run(main))
    assert result["original_query"] == "昨日の問題" and len(result["results"]) <= 5
    assert {r["date"] for r in result["results"]} == {"2025-12-10"}
    team = {t.name: t for t in as_langchain_tools(tools)}["list_rag_collections"]
    first, second = team.batch([{}, {}])
    assert first == second and {c["name"] for c in json.loads(first)["collections"]} == {
        "reports",
        "manuals",
    }


def test_a_scope_argument_is_refused_not_obeyed(tools) -> None:
    search = {t.name: t for t in as_langchain_tools(tools)}["search_past_cases"]
    refused = json.loads(search.invoke({"query": "冷蔵庫の故障", "team": "other"}))
    assert "引数 team はありません" in refused["error"]


def test_a_missing_langchain_names_the_extra(tools, monkeypatch) -> None:
    monkeypatch.setitem(sys.modules, "langchain_core.tools", None)
    with pytest.raises(MissingExtra, match=r"tansaku\[langchain\]"):
        as_langchain_tools(tools)

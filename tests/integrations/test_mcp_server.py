"""The MCP adapter in process (the SDK's own client against ``mcp_server``), the bind rules and
the bearer guard. The subprocess runs of ``tansaku mcp`` are in ``test_mcp_e2e.py``."""

from __future__ import annotations

import functools
import json
import socket
import sys
from typing import Annotated

import anyio
import httpx
import pytest
from mcp import Client

from tansaku.errors import InvalidRequest, MissingExtra
from tansaku.integrations.mcp_server import (
    bearer_auth,
    check_bind,
    is_loopback,
    mcp_server,
    require_sdk,
    serve_http,
    tool_definitions,
)
from tansaku.tools import ToolScope, Toolset, tool, toolset

from .conftest import NOW, OTHER_TEAM_TEXT

TOKEN = "kX9-s3cr3t-t0ken-for-tests"


def _run(toolset_: Toolset, script):
    async def main():
        async with Client(mcp_server(toolset_)) as client:
            return await script(client)

    return anyio.run(main)


def test_lists_every_tool_of_the_registry_as_it_is(hash_client) -> None:
    tools = toolset(hash_client, now=NOW)

    async def script(client):
        return (await client.list_tools()).tools

    listed = _run(tools, script)
    assert [t.name for t in listed] == [s.name for s in tools.specs]
    for entry, spec in zip(listed, tools.specs, strict=True):
        assert entry.description == spec.description and "使う場面" in entry.description
        assert entry.input_schema == spec.parameters


def test_the_server_says_whose_data_it_serves(hash_client) -> None:
    tools = toolset(hash_client, team="other", now=NOW)

    async def script(client):
        return client.server_info, client.instructions

    info, instructions = _run(tools, script)
    assert info.name == "tansaku" and info.title == "探索 tansaku"
    assert "チーム「other」のデータだけ" in instructions
    assert "reports=reports、manuals=manuals)" in instructions  # only collections that exist
    assert '{"error": "…"}' in instructions


def test_search_manual_returns_the_toolsets_json(hash_client) -> None:
    tools = toolset(hash_client, now=NOW)
    arguments = {"query": "食中毒の予防方法", "top_k": 3}

    async def script(client):
        return await client.call_tool("search_manual", arguments)

    result = _run(tools, script)
    assert not result.is_error
    text = result.content[0].text
    assert text == tools.call("search_manual", arguments)  # what the agent sees, byte for byte
    hits = json.loads(text)
    assert 1 <= len(hits) <= 3 and "hygiene" in {h["doc_id"] for h in hits}
    assert any("食中毒" in h["content"] for h in hits)


def test_errors_are_the_japanese_tool_results_flagged_as_errors(hash_client) -> None:
    tools = toolset(hash_client, now=NOW)

    async def script(client):
        return [
            await client.call_tool("search_manual", {"query": "食中毒", "top_k": "たくさん"}),
            await client.call_tool("search_manual", {}),
            await client.call_tool("存在しないツール", {"query": "冷蔵庫"}),
        ]

    wrong_type, missing, unknown = _run(tools, script)
    assert all(r.is_error for r in (wrong_type, missing, unknown))
    assert json.loads(wrong_type.content[0].text) == {
        "error": "引数が正しくありません: 引数 top_k の型が違います(integer で指定してください)"
    }
    assert json.loads(missing.content[0].text)["error"].endswith("引数 query が必要です")
    assert "ツール「存在しないツール」はありません" in json.loads(unknown.content[0].text)["error"]


def test_a_call_cannot_name_another_team(hash_client) -> None:
    """The team is the toolset's: an argument naming one is refused, and the default team's
    server never returns the other team's record."""
    tools = toolset(hash_client, now=NOW)

    async def script(client):
        widened = await client.call_tool(
            "search_past_cases", {"query": "冷蔵庫の故障", "team": "other"}
        )
        own = await client.call_tool("search_past_cases", {"query": OTHER_TEAM_TEXT, "top_k": 20})
        return widened, own

    widened, own = _run(tools, script)
    assert widened.is_error and "引数 team はありません" in widened.content[0].text
    assert OTHER_TEAM_TEXT not in own.content[0].text

    async def other(client):
        return await client.call_tool("search_past_cases", {"query": "冷蔵庫の故障"})

    theirs = _run(toolset(hash_client, team="other", now=NOW), other)
    assert [h["doc_id"] for h in json.loads(theirs.content[0].text)] == ["s"]


def test_concurrent_calls_each_get_their_own_answer(hash_client) -> None:
    """Calls run in worker threads; answers are not mixed up between concurrent calls."""
    tools = toolset(hash_client, now=NOW)
    queries = ["食中毒の予防方法", "クレーム対応の手順", "お客様のお出迎え", "冷蔵庫の温度管理"]

    async def script(client):
        results: dict[str, str] = {}

        async def one(query: str) -> None:
            result = await client.call_tool("search_manual", {"query": query, "top_k": 2})
            results[query] = result.content[0].text

        async with anyio.create_task_group() as group:
            for query in queries:
                group.start_soon(one, query)
        return results

    results = _run(tools, script)
    assert results == {q: tools.call("search_manual", {"query": q, "top_k": 2}) for q in queries}
    assert len(set(results.values())) == len(queries)


def test_a_tool_added_to_the_registry_is_served_without_changes(hash_client) -> None:
    @tool("count_characters", '文字数を数えます。\n例: {"text": "冷蔵庫"} / {"text": "あ"} / {}')
    def count_characters(scope: ToolScope, text: Annotated[str, "数える文字列"] = "") -> dict:
        return {"team": scope.team, "characters": len(text)}

    base = toolset(hash_client, team="other", now=NOW)
    tools = Toolset([*base.specs, count_characters], base.scope)

    async def script(client):
        listed = [t.name for t in (await client.list_tools()).tools]
        return listed, await client.call_tool("count_characters", {"text": "冷蔵庫の故障"})

    listed, result = _run(tools, script)
    assert listed[-1] == "count_characters" and len(listed) == len(base.specs) + 1
    assert json.loads(result.content[0].text) == {"team": "other", "characters": 6}


@pytest.mark.parametrize("host", ["127.0.0.1", "127.0.0.2", "localhost", "::1", "[::1]"])
def test_loopback_binds_need_nothing(host) -> None:
    assert is_loopback(host)
    check_bind(host)


@pytest.mark.parametrize("host", ["0.0.0.0", "192.168.1.10", "::", "example.com"])
def test_a_non_loopback_bind_needs_allow_remote_and_a_token(host) -> None:
    assert not is_loopback(host)
    with pytest.raises(InvalidRequest, match="--allow-remote とトークン"):
        check_bind(host)
    with pytest.raises(InvalidRequest, match=r"不足: --allow-remote"):
        check_bind(host, token=TOKEN)
    with pytest.raises(InvalidRequest, match=r"不足: --token"):
        check_bind(host, allow_remote=True)
    check_bind(host, allow_remote=True, token=TOKEN)


def test_a_short_token_is_refused_everywhere() -> None:
    for host in ("127.0.0.1", "0.0.0.0"):
        with pytest.raises(InvalidRequest, match="16文字以上"):
            check_bind(host, allow_remote=True, token="password")


def test_a_port_in_use_is_a_clear_error(hash_client) -> None:
    tools = toolset(hash_client, now=NOW)
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        ready: list[str] = []
        with pytest.raises(InvalidRequest, match=f"127.0.0.1:{port} で待ち受けられません"):
            anyio.run(functools.partial(serve_http, tools, port=port, on_ready=ready.append))
        assert ready == []


def test_serve_http_refuses_a_public_bind_before_binding(hash_client) -> None:
    tools = toolset(hash_client, now=NOW)
    with pytest.raises(InvalidRequest, match="--allow-remote"):
        anyio.run(functools.partial(serve_http, tools, host="0.0.0.0", port=0))


def test_bearer_guard_checks_every_request() -> None:
    async def app(scope, receive, send):
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"ok"})

    guarded = bearer_auth(app, TOKEN)

    async def main():
        transport = httpx.ASGITransport(app=guarded)
        async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as http:
            return [
                await http.post("/mcp"),
                await http.post("/mcp", headers={"Authorization": "Bearer wrong-token-wrong!!"}),
                await http.post("/mcp", headers={"Authorization": f"Basic {TOKEN}"}),
                await http.post("/mcp", headers={"Authorization": f"bearer {TOKEN}"}),
                await http.get("/mcp", headers={"Authorization": f"Bearer {TOKEN}"}),
            ]

    none, wrong, basic, lower, right = anyio.run(main)
    for refused in (none, wrong, basic):
        assert refused.status_code == 401
        assert refused.headers["www-authenticate"].startswith("Bearer")
        assert refused.json() == {
            "error": "認証が必要です。Authorization: Bearer <トークン> を付けてください"
        }
    assert (lower.status_code, right.status_code, right.text) == (200, 200, "ok")


def test_a_missing_sdk_names_the_extra(monkeypatch) -> None:
    monkeypatch.setitem(sys.modules, "mcp.server", None)
    with pytest.raises(MissingExtra, match=r"tansaku\[mcp\]"):
        require_sdk()
    with pytest.raises(MissingExtra):
        tool_definitions(Toolset([], ToolScope(client=None)))  # type: ignore[arg-type]


def test_an_error_reaches_the_client_without_the_servers_paths(hash_client) -> None:
    """A library error naming files of the workspace (or elsewhere on the server) is sent
    with the workspace's paths made relative and any other absolute path cut to its name."""
    from tansaku.errors import StorageError

    home = hash_client.workspace.home

    @tool("broken_listing", "壊れたコレクションを読む。\n例: {}")
    def broken_listing(scope: ToolScope) -> dict:
        raise StorageError(
            f"{home}/collections/gone/gens/g000001/shard にデータがありません"
            " (/var/lib/tansaku/segments/segment.json)"
        )

    base = toolset(hash_client, now=NOW)
    tools = Toolset([*base.specs, broken_listing], base.scope)

    async def script(client):
        return await client.call_tool("broken_listing", {})

    result = _run(tools, script)
    assert result.is_error
    message = json.loads(result.content[0].text)["error"]
    assert message.startswith("collections/gone/gens/g000001/shard にデータがありません")
    assert "…/segment.json" in message
    assert str(home) not in message and "/var/lib" not in message

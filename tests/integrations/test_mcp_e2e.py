"""`tansaku mcp` as a user runs it: a real subprocess on a workspace built with the bundled
embedder, driven by the MCP SDK's own client over stdio and over streamable HTTP."""

from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import sys
import threading
from contextlib import contextmanager
from datetime import date
from pathlib import Path

import anyio
import httpx
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

import tansaku
from tansaku.agent.answer.tool import answer_question
from tansaku.testing import HashEmbedder
from tansaku.tools import toolset

from .conftest import OTHER_TEAM_TEXT

pytestmark = [pytest.mark.e2e, pytest.mark.integration]

TANSAKU = str(Path(sys.executable).with_name("tansaku"))
NOW_OPT = ["--now", "2025-12-11T09:00"]
TOKEN = "e2e-Qm7t-b3arer-t0ken-0123"
STARTUP_LINES = 50  # stderr lines read while waiting for the endpoint


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "TANSAKU_MCP_TOKEN"}
    return env | extra


def _stdio(home: Path, errlog, *args: str) -> Client:
    params = StdioServerParameters(
        command=TANSAKU, args=["mcp", "--home", str(home), *NOW_OPT, *args], env=_env()
    )
    return Client(stdio_client(params, errlog=errlog))


def _text(result) -> str:
    assert len(result.content) == 1 and result.content[0].type == "text"
    return result.content[0].text


def test_stdio_lists_and_calls_the_tools(real_home, tmp_path) -> None:
    with tansaku.connect(real_home, create=False) as client:
        expected = [(s.name, s.description, s.parameters) for s in toolset(client).specs]
    expected.append((answer_question.name, answer_question.description, answer_question.parameters))

    async def main():
        with open(tmp_path / "stderr.txt", "w", encoding="utf-8") as errlog:
            async with _stdio(real_home, errlog) as mcp:
                listed = (await mcp.list_tools()).tools
                manual = await mcp.call_tool("search_manual", {"query": "食中毒の予防方法"})
                cases = await mcp.call_tool(
                    "search_past_cases", {"query": "冷蔵庫の故障", "date_from": "2025-12-10"}
                )
                bad = await mcp.call_tool("search_manual", {"query": "食中毒", "top_k": "三"})
                widened = await mcp.call_tool(
                    "search_past_cases", {"query": "冷蔵庫の故障", "team": "other"}
                )
                return listed, manual, cases, bad, widened

    listed, manual, cases, bad, widened = anyio.run(main)
    assert [(t.name, t.description, t.input_schema) for t in listed] == expected

    hits = json.loads(_text(manual))
    assert not manual.is_error and hits and "hygiene" in {h["doc_id"] for h in hits}
    assert any("食中毒予防" in (h["chapter"] or "") for h in hits)

    reports = json.loads(_text(cases))
    assert not cases.is_error and reports
    assert any(r["store"] == "渋谷店" and "冷蔵庫" in r["content"] for r in reports)
    assert all(r["date"] >= "2025-12-10" for r in reports)
    assert OTHER_TEAM_TEXT not in _text(cases)

    assert bad.is_error and json.loads(_text(bad)) == {
        "error": "引数が正しくありません: 引数 top_k の型が違います(integer で指定してください)"
    }
    assert widened.is_error and "引数 team はありません" in json.loads(_text(widened))["error"]

    log = (tmp_path / "stderr.txt").read_text(encoding="utf-8")
    assert "チーム「default」" in log and "stdio で待ち受けます" in log


def test_a_server_reads_only_its_team_and_the_named_collections(real_home, tmp_path) -> None:
    scope = ["--team", "other", "--collection", "reports=reports"]

    async def main():
        with open(tmp_path / "stderr.txt", "w", encoding="utf-8") as errlog:
            async with _stdio(real_home, errlog, *scope) as mcp:
                cases = await mcp.call_tool("search_past_cases", {"query": "冷蔵庫の故障"})
                manual = await mcp.call_tool("search_manual", {"query": "食中毒の予防方法"})
                return cases, manual

    cases, manual = anyio.run(main)
    assert [r["content"] for r in json.loads(_text(cases))] == [OTHER_TEAM_TEXT]
    assert manual.is_error
    assert json.loads(_text(manual)) == {"error": "マニュアルのコレクションが設定されていません"}
    log = (tmp_path / "stderr.txt").read_text(encoding="utf-8")
    assert "チーム「other」(コレクション reports=reports)" in log


FAQ_CSV = (
    "id,質問,回答\n"
    "faq-01,有給休暇の申請方法を教えてください,勤怠システムの「休暇申請」画面から取得日の3営業日前までに申請してください。\n"
    "faq-02,交通費の精算期限は,利用した月の翌月5日までに経費精算システムで申請してください。\n"
)


def test_a_plain_collection_is_answered_through_answer_question(tmp_path) -> None:
    """`tansaku mcp --collection faq`: a team's own FAQ answers, with its answer part cited."""
    home = tmp_path / "ws"
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "faq.csv").write_text(FAQ_CSV, encoding="utf-8")
    with tansaku.connect(home, embedder=HashEmbedder(32)) as client:
        assert client.ingest([tmp_path / "src"], collection="faq").ok

    async def main():
        with open(tmp_path / "stderr.txt", "w", encoding="utf-8") as errlog:
            params = StdioServerParameters(
                command=TANSAKU,
                args=["mcp", "--home", str(home), *NOW_OPT, "--collection", "faq"],
                env=_env(TANSAKU_EMBEDDER="hash"),
            )
            async with Client(stdio_client(params, errlog=errlog)) as mcp:
                ask = {"question": "有給休暇の申請方法は？"}
                good = await mcp.call_tool("answer_question", ask)
                off = await mcp.call_tool("answer_question", {"question": "明日の天気は？"})
                empty = await mcp.call_tool("answer_question", {"question": "  "})
                return good, off, empty

    good, off, empty = anyio.run(main)
    data = json.loads(_text(good))
    assert not good.is_error and not data["unanswered"], data
    assert data["citations"][0]["doc_id"] == "faq-01" and "勤怠システム" in data["answer"]
    assert json.loads(_text(off))["unanswered"]
    assert empty.is_error and "質問が空です" in json.loads(_text(empty))["error"]


def test_a_workspace_with_tables_serves_the_statistics_and_sql_tools(tmp_path) -> None:
    pytest.importorskip("duckdb")
    from tansaku.demo.tables import install_demo_tables

    home = tmp_path / "ws"
    install_demo_tables(home, now=date(2025, 12, 11))

    async def main():
        with open(tmp_path / "stderr.txt", "w", encoding="utf-8") as errlog:
            async with _stdio(home, errlog) as mcp:
                names = [t.name for t in (await mcp.list_tools()).tools]
                pets = await mcp.call_tool(
                    "search_stores",
                    {"sql_query": "SELECT store_name FROM stores WHERE pets_allowed = 'TRUE'"},
                )
                dropped = await mcp.call_tool("search_stores", {"sql_query": "DROP TABLE stores"})
                claims = await mcp.call_tool("get_claim_statistics", {"period": "先月"})
                return names, pets, dropped, claims

    names, pets, dropped, claims = anyio.run(main)
    assert {"search_stores", "search_events", "get_claim_statistics", "compare_periods"} <= set(
        names
    )
    rows = json.loads(_text(pets))
    assert not pets.is_error and rows["results"] and "store_name" in rows["results"][0]
    assert dropped.is_error and json.loads(_text(dropped))["error"]
    stats = json.loads(_text(claims))
    assert not claims.is_error and stats["period_expression"] == "先月"
    assert stats["period"]["start_date"] == "2025-11-01"  # --now fixed "先月"
    assert stats["summary"]["claim_count"] > 0


@contextmanager
def _http_server(home: Path, *args: str, env: dict[str, str] | None = None):
    """`tansaku mcp --transport http --port 0 …`; yields (endpoint URL, stderr lines so far)."""
    proc = subprocess.Popen(
        [TANSAKU, "mcp", "--transport", "http", "--port", "0", "--home", str(home), *args],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        encoding="utf-8",
        env=env or _env(),
    )
    lines: queue.Queue[str] = queue.Queue()
    threading.Thread(target=lambda: [lines.put(x) for x in proc.stderr], daemon=True).start()
    seen: list[str] = []
    try:
        url = None
        for _ in range(STARTUP_LINES):
            line = lines.get(timeout=300)  # a guard against a hung start, not a measurement
            seen.append(line)
            if "待ち受け中: " in line:
                url = line.split("待ち受け中: ", 1)[1].split("(", 1)[0].strip()
                break
        assert url and url.startswith("http://127.0.0.1:") and url.endswith("/mcp"), seen
        yield url, seen
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    assert proc.returncode == 0, seen
    assert proc.stdout is not None and proc.stdout.read() == ""  # nothing but the protocol


def test_streamable_http_with_a_bearer_token(real_home) -> None:
    with _http_server(real_home, *NOW_OPT, env=_env(TANSAKU_MCP_TOKEN=TOKEN)) as (url, seen):
        assert "Bearer トークンあり" in seen[-1]
        initialize = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "curl", "version": "1"},
            },
        }
        accept = {"Accept": "application/json, text/event-stream"}
        anonymous = httpx.post(url, json=initialize, headers=accept)
        wrong = httpx.post(url, json=initialize, headers=accept | {"Authorization": "Bearer x"})
        for refused in (anonymous, wrong):
            assert refused.status_code == 401
            assert "Authorization: Bearer" in refused.json()["error"]
        rebinding = httpx.post(
            url,
            json=initialize,
            headers=accept | {"Authorization": f"Bearer {TOKEN}", "Host": "evil.example"},
        )
        assert rebinding.status_code in (403, 421)  # the SDK's DNS-rebinding guard on loopback

        async def main():
            headers = {"Authorization": f"Bearer {TOKEN}"}
            async with (
                create_mcp_http_client(headers=headers) as http,
                Client(streamable_http_client(url, http_client=http)) as mcp,
            ):
                names = [t.name for t in (await mcp.list_tools()).tools]
                manual = await mcp.call_tool(
                    "search_manual", {"query": "お客様が怒っているときの対応"}
                )
                bad = await mcp.call_tool("search_manual", {"query": "接客", "category": 3})
                return names, manual, bad

        names, manual, bad = anyio.run(main)
    assert "search_manual" in names and "search_past_cases" in names
    hits = json.loads(_text(manual))
    assert not manual.is_error and "complaints" in {h["doc_id"] for h in hits}
    assert bad.is_error and "引数 category の型が違います" in json.loads(_text(bad))["error"]


def _refused(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [TANSAKU, "mcp", *args],
        stdin=subprocess.DEVNULL,  # a stdio server that starts ends at once
        capture_output=True,
        text=True,
        encoding="utf-8",
        env=_env(),
    )


def test_a_non_loopback_bind_is_refused_before_anything_listens(real_home) -> None:
    home = ["--home", str(real_home)]
    for args in (
        ["--transport", "http", "--host", "0.0.0.0"],
        ["--transport", "http", "--host", "0.0.0.0", "--token", TOKEN],
        ["--transport", "http", "--host", "0.0.0.0", "--allow-remote"],
    ):
        done = _refused(*args, *home)
        assert done.returncode == 2, done.stderr
        assert "--allow-remote とトークン" in done.stderr and "待ち受け中" not in done.stderr
        assert done.stdout == ""
    short = _refused("--transport", "http", "--token", "abc", *home)
    assert short.returncode == 2 and "16文字以上" in short.stderr


def test_bad_options_are_refused_in_japanese(real_home, tmp_path) -> None:
    home = ["--home", str(real_home)]
    cases = [
        (["--transport", "sse"], 2, "--transport は stdio か http です"),
        (["--collection", "=manuals"], 2, "コレクション名 か 役割=コレクション名"),
        (["--collection", "nosuch"], 1, "コレクション「nosuch」が見つかりません"),
        (["--collection", "manuals=存在しない"], 2, "コレクション名「存在しない」は使えません"),
        (["--collection", "manuals=nosuch"], 1, "コレクション「nosuch」が見つかりません"),
        (["--team", "他チーム"], 2, "チーム名「他チーム」は使えません"),
        (["--now", "昨日"], 2, ""),
    ]
    for args, code, message in cases:
        done = _refused(*args, *home)
        assert done.returncode == code, (args, done.stderr)
        assert done.stderr.startswith("エラー:") and message in done.stderr, done.stderr
    typo = _refused("--team", "nobody", *home)
    assert typo.returncode == 0 and typo.stdout == ""
    assert "注意: チーム「nobody」のデータはコレクション reports、manuals にまだありません" in (
        typo.stderr
    )
    missing = _refused("--home", str(tmp_path / "nowhere"))
    assert missing.returncode == 1 and "ワークスペース" in missing.stderr
    assert not (tmp_path / "nowhere").exists()

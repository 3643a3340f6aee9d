"""``tansaku ask`` and ``tansaku chat`` in fresh processes on a workspace built with the real
default embedder: JSON output, follow-ups by conversation id, team isolation, live events, a
configured model (the fake OpenAI server over HTTP), chat driven through stdin, Ctrl-C."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import tansaku
from tansaku.testing import FakeOpenAIServer, Reply

from .clock import NOW

pytestmark = pytest.mark.e2e
TANSAKU = [sys.executable, "-m", "tansaku.cli.main"]
DAY = "2025-12-11"
REPORTS = {
    "r1": ("新宿店", "朝の仕込み時に冷蔵庫の故障が発覚し、一部の食材を廃棄しました。"),
    "r2": ("渋谷店", "お客様から料理の温度が低いとのクレームがありました。すぐに作り直しました。"),
    "r3": ("池袋店", "レジの現金が千円合わなかったため、店長が再確認しました。"),
}


@pytest.fixture(scope="module")
def home(tmp_path_factory) -> Path:
    pytest.importorskip("duckdb")
    from tansaku.demo.tables import install_demo_tables

    ws = tmp_path_factory.mktemp("cli") / "ws"
    records = [
        tansaku.Record(
            id=f"{k}:body",
            doc_id=k,
            field="body",
            text=text,
            metadata={"date": "2025-12-10", "store": store, "source_type": "daily_report"},
        )
        for k, (store, text) in REPORTS.items()
    ]
    with tansaku.connect(ws) as client:
        client.ingest_records(records, collection="reports")
    install_demo_tables(ws, now=NOW)
    return ws


def _env(home: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TANSAKU_", "OPENAI_"))}
    return {**env, "TANSAKU_HOME": str(home), "PYTHONUTF8": "1", "NO_COLOR": "1", **extra}


def run(home: Path, *args: str, stdin: str = "", **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*TANSAKU, *args],
        input=stdin,
        capture_output=True,
        text=True,
        encoding="utf-8",
        env=_env(home, **env),
        timeout=300,
    )


def test_ask_json_followup_and_team_isolation(home) -> None:
    first = run(home, "ask", "新宿店の冷蔵庫の故障は?", "--now", DAY, "--json", "--no-llm")
    assert first.returncode == 0, first.stderr
    data = json.loads(first.stdout)
    assert set(data) == {"answer", "citations", "events", "conversation_id", "unanswered", "model"}
    assert data["model"] == "offline" and data["citations"][0]["doc_id"] == "r1"
    cid = data["conversation_id"]
    follow = run(
        home, "ask", "その店舗の先週の売上は?", "--conversation", cid, "--now", DAY, "--json"
    )
    assert follow.returncode == 0, follow.stderr
    answer = json.loads(follow.stdout)
    assert answer["conversation_id"] == cid and "(新宿店)" in answer["answer"]
    assert "売上合計" in answer["answer"] and "2025-12-01〜2025-12-07" in answer["answer"]
    other = run(home, "ask", "続きは?", "--conversation", cid, "--team", "other", "--json")
    assert other.returncode == 1 and "見つかりません" in other.stderr and other.stdout == ""


def test_ask_prints_sources_and_live_events(home) -> None:
    done = run(home, "ask", "冷蔵庫の故障", "--now", DAY, "--show-thoughts", "--no-llm")
    assert done.returncode == 0, done.stderr
    assert "冷蔵庫の故障" in done.stdout and "[1] " in done.stdout and "(r1)" in done.stdout
    assert "考え: " in done.stderr and "ツール: コレクションを検索 「" in done.stderr
    assert "会話 ID: " in done.stderr


def test_ask_on_a_missing_workspace_is_an_error(tmp_path) -> None:
    done = run(tmp_path / "nothing", "ask", "冷蔵庫の故障")
    assert done.returncode == 1 and "ワークスペース" in done.stderr
    assert not (tmp_path / "nothing").exists()


def test_bad_options_are_refused(home) -> None:
    bad = run(home, "ask", "冷蔵庫", "--collection", "reports=日報")
    assert bad.returncode == 2 and "--collection reports=日報" in bad.stderr
    assert run(home, "ask", "  ").returncode == 2


def test_ask_through_a_configured_model_server(home) -> None:
    pytest.importorskip("openai")
    review = {"critique": "確認済み", "status": "answered", "answer": "冷蔵庫が故障しました[1]。"}
    with FakeOpenAIServer(api_key="sk-cli-test", model="qwen2.5:7b") as srv:
        srv.script(
            Reply.call("search_past_cases", {"query": "冷蔵庫の故障"}),
            Reply.say("冷蔵庫が故障しました[1]。"),
            Reply.say(json.dumps(review, ensure_ascii=False)),
        )
        done = run(
            home,
            "ask",
            "冷蔵庫の故障は?",
            "--json",
            "--now",
            DAY,
            TANSAKU_LLM_PROVIDER="ollama",
            TANSAKU_LLM_BASE_URL=srv.base_url,
            TANSAKU_LLM_MODEL="qwen2.5:7b",
            TANSAKU_LLM_API_KEY="sk-cli-test",
        )
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["model"] == "ollama:qwen2.5:7b" and data["answer"] == "冷蔵庫が故障しました[1]。"
    assert data["citations"][0]["doc_id"] == "r1"
    types = [e["type"] for e in data["events"]]
    assert types == ["tool_call", "tool_result", "draft", "critique", "answer"]


def test_chat_keeps_one_conversation_until_new(home) -> None:
    lines = "\n".join(
        [
            "新宿店の冷蔵庫の故障は?",
            "その店舗の先週の売上は?",
            "/new",
            "その店舗の先週の売上は?",
            "/help",
            "/quit",
            "ここは読まれない",
        ]
    )
    done = run(home, "chat", "--now", DAY, "--no-llm", stdin=lines + "\n")
    assert done.returncode == 0, done.stderr
    assert done.stdout.count("(新宿店)") == 1  # the follow-up; after /new, no store to carry
    assert "新しい会話を始めます" in done.stderr and "コマンド /help はありません" in done.stderr
    assert "終了します(会話 ID: " in done.stderr and "読まれない" not in done.stdout


def test_chat_ends_cleanly_at_the_end_of_input(home) -> None:
    done = run(home, "chat", "--no-llm", stdin="")
    assert done.returncode == 0 and done.stderr.rstrip().endswith("終了します")


def test_chat_ends_cleanly_on_ctrl_c(home) -> None:
    proc = subprocess.Popen(
        [*TANSAKU, "chat", "--no-llm"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=_env(home),
    )
    assert proc.stderr is not None
    seen = b""
    deadline = time.monotonic() + 120
    while "質問>".encode() not in seen and time.monotonic() < deadline:
        chunk = os.read(proc.stderr.fileno(), 4096)
        if not chunk:
            break
        seen += chunk
    proc.send_signal(signal.SIGINT)
    _, rest = proc.communicate(timeout=60)
    assert proc.returncode == 0, (seen + rest).decode()
    assert "終了します" in (seen + rest).decode("utf-8")
    assert b"Traceback" not in seen + rest

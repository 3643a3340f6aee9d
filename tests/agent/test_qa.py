"""Q/A pair generation on the bundled manuals: records with qa_question / qa_answer / combined and
their source, resumable runs (a second run asks nothing, failed chunks are asked again, a line
torn by a kill is generated again without duplicates), then end to end through the CLI and the
fake OpenAI server — including ``kill -9`` in the middle of a run."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

import tansaku
from tansaku.agent.models.base import ModelUnavailable
from tansaku.agent.qa import (
    QA_SCHEMA,
    QAGenerationError,
    generate_qa,
    parse_pairs,
    progress_path,
    qa_config,
    source_chunks,
)
from tansaku.config import Axis, AxisMode, load_config
from tansaku.errors import CollectionNotFound, InvalidRequest
from tansaku.testing import ChatRequest, ScriptedChatModel
from tansaku.tools import toolset

pytestmark = pytest.mark.integration

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
_SENTENCE = re.compile(r"[^。]+。")
KEYWORDS = (Axis(name="keyword", mode=AxisMode.BM25),)  # no embedder needed: fast tests
FAST = replace(qa_config("manuals_qa"), axes=KEYWORDS)
QA_TOML = """name = "qa"
description = "マニュアルの Q/A"
[[axes]]
name = "keyword"
fields = ["qa_question", "qa_answer"]
mode = "bm25"
"""


def pairs_for(prompt: str, n: int = 2) -> dict[str, Any]:
    """What a careful model would write: questions on the chunk's own sentences."""
    text = prompt.split("# テキスト\n", 1)[1].split("\n\n# 出力フォーマット", 1)[0]
    sentences = [s.strip() for s in _SENTENCE.findall(text)][:n] or [text.strip()]
    return {
        "qa_pairs": [
            {"question": f"「{s[:20]}」とはどういうことですか?", "answer": s} for s in sentences
        ]
    }


def ScriptedModel(fail_on: Sequence[str] = (), error: Exception | None = None) -> ScriptedChatModel:
    """A chat model answering from the prompt; ``fail_on`` (substrings of a chunk) get garbage."""

    def reply(request: ChatRequest) -> Any:
        if error is not None:
            raise error
        if any(s in request.prompt for s in fail_on):
            return "申し訳ありません、うまく作れませんでした"
        return pairs_for(request.prompt)

    return ScriptedChatModel(reply=reply, model_name="scripted:qa")


def prompts(model: ScriptedChatModel) -> list[str]:
    return [r.prompt for r in model.requests]


@pytest.fixture
def ts(tmp_path):
    client = tansaku.connect(tmp_path / "ws")
    cfg = replace(load_config(EXAMPLES / "configs" / "manuals.toml"), axes=KEYWORDS)
    assert client.ingest([EXAMPLES / "manuals"], collection="manuals", config=cfg).ok
    yield client
    client.close()


def _docs(client, collection: str, team: str = "default") -> dict[str, set[str]]:
    """doc id -> its fields, read from the store."""
    with client.reading(collection) as col:
        ids = list(col.store.hashes(team))
        out: dict[str, set[str]] = {}
        for r in col.store.get(team, ids):
            out.setdefault(r.doc_id, set()).add(r.field)
    return out


def test_pairs_become_records_with_their_source(ts) -> None:
    model = ScriptedModel()
    chunks = source_chunks(ts, "manuals", limit=4)
    report = generate_qa(
        ts, model, source="manuals", target="manuals_qa", limit=4, per_chunk=2, workers=2
    )
    assert (report.chunks, report.generated, report.skipped, report.pairs) == (4, 4, 0, 8)
    assert report.ingested == {"inserted": 24, "updated": 0, "unchanged": 0}
    docs = _docs(ts, "manuals_qa")
    assert len(docs) == 8 and all(
        f == {"qa_question", "qa_answer", "combined"} for f in docs.values()
    )
    assert all(s == QA_SCHEMA for s in [r.json_schema for r in model.requests])
    first = next(p for p in prompts(model) if chunks[0].text in p)
    assert "以下のテキストから、内容に基づく質問と回答のペアを2個生成してください。" in first
    assert "# 文書\nクレーム対応マニュアル v1.1" in first
    hit = ts.search("お客様のお話を最後まで伺う", collection="manuals_qa").hits[0]
    meta = hit.record.metadata
    assert meta["source_collection"] == "manuals" and meta["source_doc_id"] == "complaints"
    assert meta["source_chunk_id"] in {c.id for c in chunks} and meta["source_type"] == "qa_pair"
    assert hit.record.field in {"qa_question", "qa_answer", "combined"}
    tools = toolset(ts, collections={"qa": "manuals_qa"})
    found = json.loads(tools.call("search_rag_knowledge_base", {"query": "お客様のお話"}))
    assert found["results"][0]["question"].endswith("とはどういうことですか?")
    assert found["results"][0]["answer"] and "content" not in found["results"][0]


def test_a_second_run_asks_nothing(ts) -> None:
    generate_qa(ts, ScriptedModel(), source="manuals", target="manuals_qa", config=FAST, limit=3)
    again = ScriptedModel()
    report = generate_qa(ts, again, source="manuals", target="manuals_qa", config=FAST, limit=3)
    assert (report.skipped, report.generated, report.pairs) == (3, 0, 6)
    assert prompts(again) == [] and report.ingested["unchanged"] == 18
    more = generate_qa(ts, again, source="manuals", target="manuals_qa", config=FAST, limit=5)
    assert (more.skipped, more.generated) == (3, 2) and len(prompts(again)) == 2


def test_failed_chunks_are_asked_again(ts) -> None:
    chunks = source_chunks(ts, "manuals", limit=4)
    bad = ScriptedModel(fail_on=[chunks[1].text[:40]])
    report = generate_qa(
        ts, bad, source="manuals", target="manuals_qa", config=FAST, limit=4, workers=1
    )
    assert report.generated == 3 and [c for c, _ in report.failed] == [chunks[1].id]
    assert "ペア" in report.failed[0][1] or "JSON" in report.failed[0][1] or report.failed[0][1]
    assert (
        sum(chunks[1].text[:40] in p for p in prompts(bad)) == 2
    )  # asked once more, then given up
    good = ScriptedModel()
    rerun = generate_qa(ts, good, source="manuals", target="manuals_qa", config=FAST, limit=4)
    assert (rerun.skipped, rerun.generated, rerun.failed) == (3, 1, ())
    assert len(_docs(ts, "manuals_qa")) == 8


def test_a_dead_model_stops_the_run_and_loses_nothing(ts) -> None:
    generate_qa(ts, ScriptedModel(), source="manuals", target="manuals_qa", config=FAST, limit=2)
    dead = ScriptedModel(error=ModelUnavailable("接続できません(http://127.0.0.1:9/v1)"))
    with pytest.raises(QAGenerationError, match="続きから再開できます"):
        generate_qa(ts, dead, source="manuals", target="manuals_qa", config=FAST, workers=1)
    # five failures in a row stop the run; the one chunk already queued beside them may still
    # start before the pool is shut down (a race of the machine's load, not a sixth request)
    assert len(prompts(dead)) in (5, 6)
    path = progress_path(ts, "manuals", "manuals_qa", "default")
    assert len(path.read_text(encoding="utf-8").splitlines()) == 2
    assert len(_docs(ts, "manuals_qa")) == 4


def test_a_torn_line_is_generated_again_without_duplicates(ts) -> None:
    chunks = source_chunks(ts, "manuals", limit=4)
    generate_qa(ts, ScriptedModel(), source="manuals", target="manuals_qa", config=FAST, limit=3)
    path = progress_path(ts, "manuals", "manuals_qa", "default")
    lines = path.read_bytes().splitlines(keepends=True)
    path.write_bytes(b"".join(lines[:2]) + lines[2][: len(lines[2]) // 2])  # killed mid-write
    model = ScriptedModel()
    report = generate_qa(ts, model, source="manuals", target="manuals_qa", config=FAST, limit=4)
    assert (report.skipped, report.generated) == (2, 2) and len(prompts(model)) == 2
    assert report.ingested["inserted"] == 6  # the 4th chunk; the 3rd replaced its own ids
    assert len(_docs(ts, "manuals_qa")) == 8
    lines = [x.decode("utf-8", "replace") for x in path.read_bytes().splitlines()]
    assert len(lines) == 5 and not _ok(lines[2])  # the torn line stays, ignored
    assert sorted(json.loads(x)["chunk_id"] for x in lines if _ok(x)) == sorted(
        c.id for c in chunks
    )


def test_bad_requests_are_refused(ts) -> None:
    model = ScriptedModel()
    with pytest.raises(InvalidRequest, match="同じコレクション"):
        generate_qa(ts, model, source="manuals", target="manuals")
    with pytest.raises(InvalidRequest, match="per_chunk は 1〜10"):
        generate_qa(ts, model, source="manuals", target="qa", per_chunk=0)
    with pytest.raises(CollectionNotFound):
        generate_qa(ts, model, source="reports", target="qa")
    assert prompts(model) == []


def test_parse_pairs_cleans_and_bounds() -> None:
    text = json.dumps(
        {
            "qa_pairs": [
                {"question": "手洗いは\x00何秒?", "answer": "30秒以上です。"},
                {"question": "手洗いは 何秒?", "answer": "重複"},
                {"question": "", "answer": "質問がない"},
                {"question": "爪は?", "answer": "短く切ります。" * 500},
                "壊れた項目",
                {"question": "四つ目", "answer": "上限を超える"},
            ]
        },
        ensure_ascii=False,
    )
    pairs = parse_pairs(f"```json\n{text}\n```", 2)
    assert [p.question for p in pairs] == ["手洗いは 何秒?", "爪は?"]
    assert len(pairs[1].answer) == 1000
    with pytest.raises(ValueError):
        parse_pairs('{"qa_pairs": []}', 3)


# -- end to end: the CLI, the configured model, the fake OpenAI server -------------------------

runner = CliRunner()


def _server_env(monkeypatch, url: str) -> dict[str, str]:
    pytest.importorskip("tansaku.agent.models.config")
    env = {
        "TANSAKU_LLM_PROVIDER": "openai",
        "TANSAKU_LLM_BASE_URL": url,
        "TANSAKU_LLM_MODEL": "fake-model",
        "TANSAKU_LLM_API_KEY": "test-key",
    }
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    return env


def _reply(turn):
    from tansaku.testing import Reply

    return Reply.say(json.dumps(pairs_for(turn.last.content), ensure_ascii=False))


@pytest.mark.e2e
def test_cli_without_a_model_says_so(ts, monkeypatch) -> None:
    from tansaku.cli.main import app

    for key in ("TANSAKU_LLM_PROVIDER", "TANSAKU_LLM_BASE_URL", "TANSAKU_LLM_MODEL"):
        monkeypatch.delenv(key, raising=False)
    home = str(ts.workspace.home)
    result = runner.invoke(
        app, ["qa", "generate", "--from", "manuals", "--into", "qa", "--home", home]
    )
    assert result.exit_code == 1 and "Q/A の生成には言語モデルが必要です" in result.output


@pytest.mark.e2e
def test_cli_generates_through_the_fake_server(ts, tmp_path, monkeypatch) -> None:
    from tansaku.cli.main import app
    from tansaku.testing import FakeOpenAIServer

    (tmp_path / "qa.toml").write_text(QA_TOML, encoding="utf-8")
    home = str(ts.workspace.home)
    args = ["qa", "generate", "--from", "manuals", "--into", "manuals_qa", "--home", home]
    args += ["--limit", "3", "--per-chunk", "2", "--config", str(tmp_path / "qa.toml"), "--json"]
    with FakeOpenAIServer(handler=_reply, api_key="test-key") as srv:
        _server_env(monkeypatch, srv.base_url)
        result = runner.invoke(app, args)
        assert result.exit_code == 0, result.output
        data = json.loads(result.stdout)
        assert (data["chunks"], data["generated"], data["pairs"]) == (3, 3, 6)
        assert data["source"] == "manuals" and data["target"] == "manuals_qa"
        assert len(srv.turns) == 3 and srv.turns[0].json_schema == QA_SCHEMA
        again = json.loads(runner.invoke(app, args).stdout)
        assert (again["skipped"], again["generated"]) == (3, 0) and len(srv.turns) == 3
    with tansaku.connect(home) as check:
        assert check.collection("manuals_qa").config.axes[0].fields == ("qa_question", "qa_answer")
        assert len(_docs(check, "manuals_qa")) == 6


_RUN = "import sys; from tansaku.cli.main import main; sys.argv[0] = 'tansaku'; main()"


@pytest.mark.e2e
def test_kill_9_midway_then_rerun_loses_and_duplicates_nothing(ts, tmp_path, monkeypatch) -> None:
    from tansaku.cli.main import app
    from tansaku.testing import FakeOpenAIServer, Reply

    (tmp_path / "qa.toml").write_text(QA_TOML, encoding="utf-8")
    home = str(ts.workspace.home)
    args = ["qa", "generate", "--from", "manuals", "--into", "manuals_qa", "--home", home]
    args += ["--limit", "12", "--workers", "2", "--config", str(tmp_path / "qa.toml")]
    progress = progress_path(ts, "manuals", "manuals_qa", "default")

    def slow(turn):
        return Reply.slow(
            0.3, Reply.say(json.dumps(pairs_for(turn.last.content), ensure_ascii=False))
        )

    with FakeOpenAIServer(handler=slow, api_key="test-key") as srv:
        env = {**os.environ, **_server_env(monkeypatch, srv.base_url)}
        proc = subprocess.Popen([sys.executable, "-c", _RUN, *args], env=env)
        try:
            for _ in range(600):  # until three chunks are recorded (or the run ends)
                if progress.is_file() and len(progress.read_bytes().splitlines()) >= 3:
                    break
                if proc.poll() is not None:
                    break
                time.sleep(0.05)
            assert proc.poll() is None, "the run ended before it could be killed"
            os.kill(proc.pid, signal.SIGKILL)
        finally:
            proc.wait(30)
        before = [ln for ln in progress.read_bytes().splitlines() if ln.strip()]
        assert 3 <= len(before) < 12
        asked_before = len(srv.turns)
        srv.handler = _reply
        result = runner.invoke(app, [*args, "--json"])
        assert result.exit_code == 0, result.output
        data = json.loads(result.stdout)
        assert data["chunks"] == 12 and data["skipped"] + data["generated"] == 12
        generated = data["generated"]
        assert generated == len(srv.turns) - asked_before  # only what the file lacked
        assert 12 - len(before) <= generated <= 12 - len(before) + 1  # +1: a torn last line
    chunks = source_chunks(ts, "manuals", limit=12)
    rows = [json.loads(x) for x in progress.read_text(encoding="utf-8").splitlines() if _ok(x)]
    assert sorted({r["chunk_id"] for r in rows}) == sorted(c.id for c in chunks)
    docs = _docs(ts, "manuals_qa")
    assert len(docs) == 24  # two pairs for each of the 12 chunks, none twice
    with ts.reading("manuals_qa") as col:
        records = col.store.get("default", [f"{d}:qa_question" for d in docs])
    per_chunk: dict[str, int] = {}
    for r in records:
        per_chunk[r.metadata["source_chunk_id"]] = (
            per_chunk.get(r.metadata["source_chunk_id"], 0) + 1
        )
    assert per_chunk == {c.id: 2 for c in chunks}


def _ok(line: str) -> bool:
    try:
        json.loads(line)
    except ValueError:
        return False
    return True

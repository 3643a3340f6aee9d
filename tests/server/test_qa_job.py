"""``POST /api/qa/generate`` over real HTTP, with the workspace's model (``tansaku.toml``
``[llm]``) pointing at the fake OpenAI server on 127.0.0.1: a job with chunks done / total, the
pairs searchable afterwards in the caller's team only, a second run resumes (asks nothing
already done, asks again what failed), and the refusals — no model (409), bad or foreign
collections, a team in the body."""

from __future__ import annotations

import json
import re
import threading
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from tansaku.agent.qa import QA_SCHEMA
from tansaku.testing import FakeOpenAIServer, Reply

from .support import ALPHA_MANUALS, KEY_ALPHA, KEY_BETA, Live

pytestmark = pytest.mark.integration

LLM_ENV = (
    "TANSAKU_LLM_PROVIDER",
    "TANSAKU_LLM_BASE_URL",
    "TANSAKU_LLM_MODEL",
    "TANSAKU_LLM_API_KEY",
)
_SENTENCE = re.compile(r"[^。]+。")


def chunk_text(prompt: str) -> str:
    return prompt.split("# テキスト\n", 1)[1].split("\n\n# 出力フォーマット", 1)[0]


def pairs_reply(turn: Any) -> Reply:
    """What a careful model writes: one question per sentence of the chunk, answered by it."""
    sentences = [s.strip() for s in _SENTENCE.findall(chunk_text(turn.last.content))][:2]
    pairs = [{"question": f"{s[:12]}…について教えてください", "answer": s} for s in sentences]
    return Reply.say(json.dumps({"qa_pairs": pairs}, ensure_ascii=False))


def configure_model(home: Path, base_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The workspace's ``[llm]``: the fake server; its key in the environment (never a file)."""
    for name in LLM_ENV:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("QA_TEST_LLM_KEY", "sk-qa-test")
    (home / "tansaku.toml").write_text(
        "[llm]\n"
        'provider = "openai"\n'
        f'base_url = "{base_url}"\n'
        'model = "fake-qa"\n'
        'api_key_env = "QA_TEST_LLM_KEY"\n'
        "max_retries = 0\n",
        encoding="utf-8",
    )


def wait_job(http: httpx.Client, job_id: str, until: Any = None) -> dict[str, Any]:
    """Poll ``/api/jobs/{id}`` until it has finished (or ``until(job)`` holds)."""
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        job = http.get(f"/api/jobs/{job_id}").json()
        if until(job) if until else job["status"] in ("done", "failed"):
            return job
        time.sleep(0.05)
    raise AssertionError(f"job {job_id} did not get there: {job}")


def home_of(live: Live) -> Path:
    return Path(live.state.client.workspace.home)


def test_without_a_model_the_api_says_so_and_writes_nothing(fresh, monkeypatch):
    for name in LLM_ENV:
        monkeypatch.delenv(name, raising=False)
    with fresh.client(KEY_ALPHA) as alpha:
        r = alpha.post("/api/qa/generate", json={"source": "manuals", "target": "manuals_qa"})
        assert r.status_code == 409
        error = r.json()["error"]
        assert error["code"] == "model_not_configured"
        assert "Q/A の生成には言語モデルが必要です" in error["message"]
        names = [c["name"] for c in alpha.get("/api/collections").json()["collections"]]
        assert names == ["manuals"]
    assert not (home_of(fresh) / "qa").exists()


def test_a_job_generates_pairs_with_progress_and_they_are_searchable(fresh, monkeypatch):
    release = threading.Event()

    def handler(turn: Any) -> Reply:
        if "冷蔵庫" not in chunk_text(turn.last.content):
            release.wait(60)  # the other chunks wait until the test has seen 1 of 3 done
        return pairs_reply(turn)

    with FakeOpenAIServer(handler=handler, api_key="sk-qa-test", model="fake-qa") as srv:
        configure_model(home_of(fresh), srv.base_url, monkeypatch)
        with fresh.client(KEY_ALPHA) as alpha, fresh.client(KEY_BETA) as beta:
            body = {"source": "manuals", "target": "manuals_qa", "per_chunk": 2}
            r = alpha.post("/api/qa/generate", json=body)
            assert r.status_code == 202, r.text
            job = r.json()
            assert job["kind"] == "qa" and job["collection"] == "manuals_qa"
            assert job["params"] == {"source": "manuals", "target": "manuals_qa", "per_chunk": 2}
            try:
                midway = wait_job(
                    alpha,
                    job["id"],
                    lambda j: j["progress"].get("generate", {}).get("done") == 1,
                )
                assert midway["status"] == "running" and midway["stage"] == "generate"
                total = len(ALPHA_MANUALS)
                assert midway["progress"]["generate"] == {"done": 1, "total": total}
                assert beta.get(f"/api/jobs/{job['id']}").status_code == 404
            finally:
                release.set()
            done = wait_job(alpha, job["id"])
            assert done["status"] == "done", done
            result = done["result"]
            assert (result["chunks"], result["generated"], result["pairs"]) == (3, 3, 3)
            assert result["model"] == "openai:fake-qa" and result["failed"] == []
            assert result["progress_file"] == "qa/manuals__manuals_qa__alpha.jsonl"
            assert done["progress"]["generate"] == {"done": 3, "total": 3}
            assert len(srv.turns) == 3 and srv.turns[0].json_schema == QA_SCHEMA
            assert srv.requests[0].headers.get("authorization") == "Bearer sk-qa-test"

            hits = alpha.post(
                "/api/search", json={"query": "アレルギーのお客様", "collection": "manuals_qa"}
            ).json()["hits"]
            assert hits and hits[0]["metadata"]["source_doc_id"] == "allergy"
            assert hits[0]["metadata"]["source_type"] == "qa_pair"
            listed = {c["name"] for c in alpha.get("/api/collections").json()["collections"]}
            assert listed == {"manuals", "manuals_qa"}
            missing = beta.post("/api/search", json={"query": "冷蔵庫", "collection": "manuals_qa"})
            assert missing.status_code == 404  # beta never sees alpha's pairs

            again = alpha.post("/api/qa/generate", json=body).json()
            rerun = wait_job(alpha, again["id"])["result"]
            assert (rerun["skipped"], rerun["generated"]) == (3, 0)
            assert len(srv.turns) == 3  # nothing asked twice


def test_failed_chunks_are_reported_and_asked_again_by_the_next_job(fresh, monkeypatch):
    def broken_on_allergy(turn: Any) -> Reply:
        if "アレルギー" in chunk_text(turn.last.content):
            return Reply.say("すみません、JSON を書けませんでした")
        return pairs_reply(turn)

    with FakeOpenAIServer(handler=broken_on_allergy, model="fake-qa") as srv:
        configure_model(home_of(fresh), srv.base_url, monkeypatch)
        with fresh.client(KEY_ALPHA) as alpha:
            body = {"source": "manuals", "target": "faq", "limit": 3}
            first = wait_job(alpha, alpha.post("/api/qa/generate", json=body).json()["id"])
            assert first["status"] == "done"
            assert [f["chunk_id"] for f in first["failures"]] == ["allergy:body"]
            assert first["result"]["generated"] == 2
            srv.handler = pairs_reply
            asked = len(srv.turns)
            second = wait_job(alpha, alpha.post("/api/qa/generate", json=body).json()["id"])
            result = second["result"]
            assert (result["skipped"], result["generated"], result["failed"]) == (2, 1, [])
            assert len(srv.turns) - asked == 1  # only the chunk that failed
            assert "アレルギー" in chunk_text(srv.turns[-1].last.content)


def test_refusals_in_the_house_error_shape(live, monkeypatch):
    with FakeOpenAIServer(model="fake-qa") as srv:
        configure_model(home_of(live), srv.base_url, monkeypatch)
        try:
            with live.client(KEY_ALPHA) as alpha:
                cases = {
                    "same": ({"source": "manuals", "target": "manuals"}, 400, "invalid_request"),
                    "unknown source": ({"source": "nope", "target": "x_qa"}, 404, None),
                    "beta's source": ({"source": "secret", "target": "x_qa"}, 404, None),
                    "beta's target": ({"source": "manuals", "target": "secret"}, 409, None),
                    "bad name": ({"source": "manuals", "target": "../x"}, 400, None),
                    "per_chunk": ({"source": "manuals", "target": "q", "per_chunk": 0}, 422, None),
                    "limit": ({"source": "manuals", "target": "q", "limit": -1}, 422, None),
                    "team": ({"source": "manuals", "target": "q", "team": "beta"}, 422, None),
                }
                for name, (body, status, code) in cases.items():
                    r = alpha.post("/api/qa/generate", json=body)
                    assert r.status_code == status, (name, r.text)
                    error = r.json()["error"]
                    assert error["message"] and not error["message"].isascii(), name
                    assert code is None or error["code"] == code, name
                    assert "金庫" not in r.text, name
            assert srv.turns == []  # nothing reached the model
        finally:
            (home_of(live) / "tansaku.toml").unlink()

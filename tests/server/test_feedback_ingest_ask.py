"""Feedback (design 004), ingest uploads as background jobs while searches go on, and agent
turns as JSON and as server-sent events — over a real uvicorn server."""

from __future__ import annotations

import json
import threading
import time

import pytest

from .support import KEY_ALPHA, KEY_BETA

pytestmark = pytest.mark.integration


def test_feedback_201_meta_from_the_server_404_and_429(fresh):
    with fresh.client(KEY_ALPHA) as http:
        qid = http.post(
            "/api/search", json={"query": "冷蔵庫の温度", "collection": "manuals"}
        ).json()["query_id"]
        r = http.post(
            "/api/feedback",
            json={"query_id": qid, "rating": -1, "reason": "<script>alert(1)</script>温度が違う"},
        )
        assert r.status_code == 201, r.text
        row = r.json()
        assert row["meta"]["query"] == "冷蔵庫の温度"
        assert row["meta"]["top_titles"][0] == "冷蔵庫の温度管理"
        assert "<script>" not in row["reason"] and "温度が違う" in row["reason"]
        assert "client" not in row
        missing = http.post("/api/feedback", json={"query_id": "no-such-id", "rating": 1})
        assert missing.status_code == 404
        assert http.post("/api/feedback", json={"query_id": qid, "rating": 2}).status_code == 422
        long = http.post("/api/feedback", json={"query_id": qid, "rating": 1, "reason": "あ" * 301})
        assert long.status_code == 422
        statuses = [
            http.post("/api/feedback", json={"query_id": qid, "rating": 1}).status_code
            for _ in range(12)
        ]
        assert statuses[:9] == [201] * 9 and statuses[9:] == [429] * 3
        limited = http.post("/api/feedback", json={"query_id": qid, "rating": 1})
        assert int(limited.headers["retry-after"]) >= 1
        assert limited.json()["error"]["code"] == "rate_limited"
        metrics = http.get("/metrics").text
        assert 'tansaku_feedback_total{query_type="clear",rating="-1"} 1.0' in metrics
        stats = http.get("/api/feedback/stats").json()
        assert stats
    with fresh.client(KEY_BETA) as beta:  # another key has its own budget
        qid_b = beta.post("/api/search", json={"query": "金庫", "collection": "secret"}).json()[
            "query_id"
        ]
        assert beta.post("/api/feedback", json={"query_id": qid_b, "rating": 1}).status_code == 201


def _wait(http, job_id: str) -> dict:
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        job = http.get(f"/api/jobs/{job_id}").json()
        if job["status"] in ("done", "failed"):
            return job
        time.sleep(0.2)
    raise AssertionError("job did not finish")


def test_upload_ingests_as_a_job_while_searches_continue(fresh):
    body = "\n\n".join(
        f"## 第{i}章 仕込み\n\n第{i}工程では野菜を洗い、包丁とまな板を分けて使います。"
        for i in range(40)
    )
    files = [
        (
            "files",
            ("仕込みマニュアル.md", f"# 仕込みマニュアル\n\n{body}".encode(), "text/markdown"),
        ),
        (
            "files",
            ("メモ.txt", "閉店後は冷凍庫の扉が閉まっているか確認する。".encode(), "text/plain"),
        ),
        ("files", ("壊れた.pdf", b"%PDF-1.4 not really a pdf", "application/pdf")),
        ("files", ("画像.png", b"\x89PNG\r\n", "image/png")),
    ]
    errors: list[str] = []
    done = threading.Event()
    counts = [0]

    def searcher() -> None:
        with fresh.client(KEY_ALPHA) as http:
            while not done.is_set():
                r = http.post("/api/search", json={"query": "冷蔵庫", "collection": "manuals"})
                if r.status_code != 200 or r.json()["hits"][0]["doc_id"] != "fridge":
                    errors.append(r.text)
                counts[0] += 1

    threads = [threading.Thread(target=searcher) for _ in range(3)]
    for t in threads:
        t.start()
    try:
        with fresh.client(KEY_ALPHA) as http:
            r = http.post("/api/ingest", data={"collection": "manuals"}, files=files)
            assert r.status_code == 202, r.text
            job = _wait(http, r.json()["id"])
    finally:
        done.set()
        for t in threads:
            t.join()
    assert errors == []
    assert counts[0] > 0
    assert job["status"] == "done", job
    assert job["result"]["inserted"] >= 2
    failed = {f["path"]: f["reason"] for f in job["failures"]}
    assert set(failed) == {"壊れた.pdf", "画像.png"}
    assert all("/uploads/" not in reason for reason in failed.values())
    assert job["progress"]
    with fresh.client(KEY_ALPHA) as http:
        hits = http.post(
            "/api/search", json={"query": "冷凍庫の扉", "collection": "manuals"}
        ).json()["hits"]
        assert hits[0]["doc_id"] == "メモ"
        metrics = http.get("/metrics").text
        assert "tansaku_ingest_chunks_total" in metrics
    with fresh.client(KEY_BETA) as beta:
        assert beta.get(f"/api/jobs/{job['id']}").status_code == 404
        hits = beta.post(
            "/api/search", json={"query": "冷凍庫の扉", "collection": "manuals"}
        ).json()["hits"]
        assert all(h["doc_id"] != "メモ" for h in hits)
    assert not list((fresh.state.client.workspace.home / "server" / "uploads").iterdir())
    # the job outlives the process that ran it: another runner reads it from appdb
    from tansaku.server.jobs import JobRunner

    other = JobRunner(1, store=fresh.state.appdb.jobs)
    saved = other.get(job["id"], team="alpha")
    assert saved is not None and saved["status"] == "done"
    assert {f["path"] for f in saved["failures"]} == {"壊れた.pdf", "画像.png"}
    assert saved["result"]["inserted"] == job["result"]["inserted"]
    assert other.get(job["id"], team="beta") is None
    other.shutdown()


def test_upload_limits_and_names(live):
    with live.client(KEY_ALPHA) as http:
        hidden = http.post(
            "/api/ingest",
            data={"collection": "manuals"},
            files={"files": (".env", b"SECRET=1", "text/plain")},
        )
        assert hidden.status_code == 400 and hidden.json()["error"]["code"] == "invalid_filename"
        dup = http.post(
            "/api/ingest",
            data={"collection": "manuals"},
            files=[
                ("files", ("a.md", b"x", "text/markdown")),
                ("files", ("a.md", b"y", "text/markdown")),
            ],
        )
        assert dup.status_code == 400
        traversal = http.post(
            "/api/ingest",
            data={"collection": "manuals"},
            files={"files": ("../../evil.md", "# 悪意\n本文".encode(), "text/markdown")},
        )
        assert traversal.status_code == 202  # saved as evil.md inside the job's folder
        assert traversal.json()["files"] == ["evil.md"]
        live.state.jobs.wait(traversal.json()["id"], 300)
        big = http.post(
            "/api/ingest",
            data={"collection": "manuals"},
            files={"files": ("big.txt", b"a" * (65 * 1024 * 1024), "text/plain")},
        )
        assert big.status_code == 413
        bad_name = http.post(
            "/api/ingest",
            data={"collection": "../x"},
            files={"files": ("a.md", b"x", "text/markdown")},
        )
        assert bad_name.status_code == 400
        nothing = http.post("/api/ingest", data={"collection": "manuals"})
        assert nothing.status_code == 422


def test_ask_json_and_sse(live):
    live.state.flush_events()
    searches_before = live.state.appdb.events.count("alpha")[0]
    with live.client(KEY_ALPHA) as http:
        r = http.post(
            "/api/ask",
            json={
                "question": "冷蔵庫の温度は何度までですか",
                "collections": {"manuals": "manuals"},
            },
        )
        assert r.status_code == 200, r.text
        answer = r.json()
        assert answer["conversation_id"]
        assert answer["events"] and answer["events"][-1]["type"] == "answer"
        rated = http.post(
            "/api/feedback",
            json={"query_id": answer["query_id"], "rating": -1, "reason": "数字がほしい"},
        )
        assert rated.status_code == 201, rated.text
        assert rated.json()["meta"]["query"] == "冷蔵庫の温度は何度までですか"
        assert rated.json()["meta"]["query_type"] == "ask"
        cid = answer["conversation_id"]
        assert cid in {c["id"] for c in http.get("/api/conversations").json()["conversations"]}
        turns = http.get(f"/api/conversations/{cid}").json()["turns"]
        assert [t["role"] for t in turns] == ["user", "assistant"]
        assert turns[0]["text"] == "冷蔵庫の温度は何度までですか"
    with live.client(KEY_BETA) as beta:
        assert beta.get(f"/api/conversations/{cid}").status_code == 404
        assert cid not in str(beta.get("/api/conversations").json())
    with live.client(KEY_ALPHA) as http:
        with http.stream(
            "POST",
            "/api/ask",
            json={
                "question": "アレルギーの対応を教えて",
                "collections": {"reports": "manuals", "manuals": "manuals"},
            },
            headers={"Accept": "text/event-stream"},
        ) as stream:
            assert stream.headers["content-type"].startswith("text/event-stream")
            frames = [f for f in stream.read().decode().split("\n\n") if f.strip()]
        names = [f.split("\n")[0].removeprefix("event: ") for f in frames]
        assert names[-1] == "final" and "tool_call" in names
        final = json.loads(frames[-1].split("\n", 1)[1].removeprefix("data: "))
        assert final["citations"] and final["citations"][0]["collection"] == "manuals"
        assert final["query_id"]
        # the agent's tool searches are recorded like the API's (appdb rows and metrics)
        live.state.flush_events()
        kinds = [e.query_type for e in live.state.appdb.events.find("alpha")]
        assert kinds.count("ask") == 2 and len(kinds) > searches_before + 2
        follow = http.post(
            "/api/ask",
            json={"question": "ほかには?", "conversation_id": "no-such-conversation"},
        )
        assert follow.status_code == 404
        before = http.get("/api/unanswered").json()
        for bad in ("", "  ", "質問\x1b", "あ" * 1_500, "あ" * 10_000):
            refused = http.post("/api/ask", json={"question": bad})
            assert refused.status_code == 422 and refused.json()["error"]["message"]
        assert http.get("/api/unanswered").json() == before
        metrics = http.get("/metrics").text
        assert "tansaku_ask_total" in metrics

"""``/openapi.json`` tells the truth: every JSON success body is a model (never ``string``),
every error the shared ``{"error": {code, message}}`` (never FastAPI's ``detail``), and what
each route really answers — success and error, over real HTTP — matches what it declares.

Documenting changes no byte: routes still return their own ``JsonResponse`` (``", "``
separators, keys a body leaves out stay out), which FastAPI neither validates nor filters."""

from __future__ import annotations

import json
import time
from typing import Any

import httpx
import pytest

from tansaku.testing.fake_dataset_server import FakeDatasetServer

from .support import KEY_ALPHA, KEY_BETA

jsonschema = pytest.importorskip("jsonschema")
pytestmark = pytest.mark.integration

WRITES = ("post", "delete")
LLM_ENV = ("TANSAKU_LLM_PROVIDER", "TANSAKU_LLM_BASE_URL", "TANSAKU_LLM_MODEL")


def _operations(doc: dict[str, Any]) -> list[tuple[str, str, dict[str, Any]]]:
    return [(m, p, op) for p, ms in doc["paths"].items() for m, op in ms.items()]


def test_every_body_and_error_is_declared(live):
    doc = httpx.get(f"{live.base_url}/openapi.json").json()
    assert "HTTPValidationError" not in doc["components"]["schemas"]
    ops = _operations(doc)
    assert len(ops) >= 24
    for method, path, op in ops:
        where = f"{method.upper()} {path}"
        responses = op["responses"]
        success = [s for s in responses if s.startswith("2")]
        assert len(success) == 1, where
        content = responses[success[0]]["content"]
        if path == "/metrics":
            assert content == {"text/plain": {"schema": {"type": "string"}}}, where
        else:
            assert content["application/json"]["schema"]["$ref"].startswith(
                "#/components/schemas/"
            ), where
        for status in ("401", "421"):
            assert status in responses, where
        if method in WRITES:
            for status in ("400", "403", "413", "422"):
                assert status in responses, where
        if op.get("parameters") or op.get("requestBody"):
            assert "422" in responses, where
        for status, spec in responses.items():
            if status.startswith("2") or (path, status) == ("/healthz", "503"):
                continue
            schema = spec["content"]["application/json"]["schema"]
            assert schema == {"$ref": "#/components/schemas/ErrorBody"}, f"{where} {status}"


class Checker:
    """Validates a response against the schema its route declares for its status."""

    def __init__(self, doc: dict[str, Any]) -> None:
        self.doc = doc
        self.seen: set[tuple[str, str, int]] = set()

    def __call__(self, r: httpx.Response, template: str, *statuses: int) -> Any:
        method = r.request.method.lower()
        where = f"{method.upper()} {template} → {r.status_code}: {r.text[:300]}"
        if statuses:
            assert r.status_code in statuses, where
        declared = self.doc["paths"][template][method]["responses"]
        assert str(r.status_code) in declared, where
        media = r.headers["content-type"].split(";")[0].strip()
        schema = declared[str(r.status_code)]["content"][media]["schema"]
        body = r.json() if media == "application/json" else r.text
        validator = jsonschema.Draft202012Validator(
            {**schema, "components": self.doc["components"]}
        )
        problems = [f"{list(e.absolute_path)}: {e.message}" for e in validator.iter_errors(body)]
        assert not problems, f"{where}\n" + "\n".join(problems[:5])
        self.seen.add((method, template, r.status_code))
        return body


def _wait(http: httpx.Client, check: Checker, job_id: str) -> dict[str, Any]:
    deadline = time.monotonic() + 120
    while True:
        job = check(http.get(f"/api/jobs/{job_id}"), "/api/jobs/{job_id}", 200)
        if job["status"] in ("done", "failed", "cancelled") or time.monotonic() > deadline:
            return job
        time.sleep(0.3)


def test_what_every_route_answers_matches_its_schema(fresh, monkeypatch):
    for name in LLM_ENV:
        monkeypatch.delenv(name, raising=False)
    check = Checker(httpx.get(f"{fresh.base_url}/openapi.json").json())
    with fresh.client(KEY_ALPHA) as http, fresh.client(KEY_BETA) as beta:
        check(httpx.get(f"{fresh.base_url}/healthz"), "/healthz", 200)
        check(http.get("/healthz"), "/healthz", 200)
        check(fresh.client("wrong").get("/healthz"), "/healthz", 401)
        check(http.get("/metrics"), "/metrics", 200)
        check(beta.get("/metrics"), "/metrics", 403)

        # search: the body exactly as the library's dict, rendered by our JsonResponse
        found = http.post(
            "/api/search",
            json={"query": "冷蔵庫の温度", "collection": "manuals", "now": "2025-12-11T09:00"},
        )
        result = check(found, "/api/search", 200)
        assert result["hits"]
        assert found.content == json.dumps(result, ensure_ascii=False).encode()
        assert all("rerank_score" not in h for h in result["hits"])  # absent, not null
        check(
            http.post("/api/search", json={"query": "x", "collection": "secret"}),
            "/api/search",
            404,
        )
        check(
            http.post("/api/search", json={"query": "x", "collection": "manuals", "top_k": 10**6}),
            "/api/search",
            400,
        )
        check(http.post("/api/search", json={"query": 1}), "/api/search", 422)
        check(
            http.post("/api/search", content=b"{" + b" " * (2 * 1024 * 1024) + b"}"),
            "/api/search",
            413,
        )
        check(
            fresh.client().post("/api/search", json={"query": "x", "collection": "manuals"}),
            "/api/search",
            401,
        )

        # collections
        check(http.get("/api/collections"), "/api/collections", 200)
        check(http.post("/api/collections", json={"name": "docs_faq"}), "/api/collections", 201)
        check(http.post("/api/collections", json={"name": "docs_faq"}), "/api/collections", 409)
        check(http.post("/api/collections", json={"name": "../x"}), "/api/collections", 400)
        check(http.post("/api/collections", json={"nam": "x"}), "/api/collections", 422)
        config = "/api/collections/{name}/config"
        check(http.get("/api/collections/manuals/config"), config, 200)
        check(http.get("/api/collections/secret/config"), config, 404)
        records = "/api/collections/{name}/records"
        check(http.get("/api/collections/manuals/records?limit=2"), records, 200)
        page = check(http.get("/api/collections/manuals/records", params={"q": "冷蔵庫"}), records)
        assert page["query_id"] and page["records"][0]["score"] is not None
        check(http.get("/api/collections/manuals/records?q=x&offset=999"), records, 400)
        check(http.get("/api/collections/manuals/records?limit=0"), records, 422)
        deleted = "/api/collections/{name}"
        check(http.delete("/api/collections/docs_faq"), deleted, 200)
        check(http.delete("/api/collections/docs_faq"), deleted, 404)
        merge = "/api/collections/{name}/merge"
        merged = http.post("/api/collections/docs_merged/merge", json={"sources": ["manuals"]})
        assert check(merged, merge, 200)["teams"] == {"alpha": 3}
        check(http.post("/api/collections/x/merge", json={"sources": ["secret"]}), merge, 404)
        check(
            http.post("/api/collections/manuals/merge", json={"sources": ["manuals"]}), merge, 400
        )
        check(http.post("/api/collections/x/merge", json={"sources": []}), merge, 422)
        check(http.delete("/api/collections/docs_merged"), deleted, 200)

        # tables
        check(http.get("/api/tables"), "/api/tables", 200)
        check(http.post("/api/sql", json={"sql": "SELECT 1 AS one"}), "/api/sql", 200)
        check(http.post("/api/sql", json={"sql": "DELETE FROM stores"}), "/api/sql", 400)
        check(http.post("/api/tables/reload"), "/api/tables/reload", 200)
        check(http.post("/api/tables/reload", json={"table": "nope"}), "/api/tables/reload", 404)
        stats = "/api/stats/{kind}"
        for kind in ("claims", "sales", "cash"):
            check(http.get(f"/api/stats/{kind}?from=2025-11-01&to=2025-11-30"), stats, 200)
        check(http.get("/api/stats/claims?from=2031-01-01&to=2031-01-02"), stats, 200)
        compare = (
            "/api/stats/compare?metric=sales&current_start=2025-11-01&current_end=2025-11-30"
            "&previous_start=2025-10-01&previous_end=2025-10-31"
        )
        check(http.get(compare), stats, 200)
        check(http.get("/api/stats/compare"), stats, 400)
        check(http.get("/api/stats/claims?to=9999-12-31"), stats, 422)
        check(http.get("/api/stats/nope"), stats, 422)

        # the agent, its conversations, feedback on its answer, the unanswered log
        asked = check(
            http.post("/api/ask", json={"question": "冷蔵庫の温度は?", "now": "2025-12-11T09:00"}),
            "/api/ask",
            200,
        )
        check(http.post("/api/ask", json={"question": " "}), "/api/ask", 422)
        check(
            http.post("/api/ask", json={"question": "x", "collections": ["secret"]}),
            "/api/ask",
            404,
        )
        check(
            http.post("/api/ask", json={"question": "x", "conversation_id": "0" * 32}),
            "/api/ask",
            404,
        )
        check(http.get("/api/conversations"), "/api/conversations", 200)
        history = "/api/conversations/{conversation_id}"
        turns = check(http.get(f"/api/conversations/{asked['conversation_id']}"), history, 200)
        assert turns["turns"]
        check(http.get(f"/api/conversations/{'0' * 32}"), history, 404)
        check(http.get(f"/api/conversations/{asked['conversation_id']}?limit=0"), history, 422)
        rated = {"query_id": asked["query_id"], "rating": -1, "reason": "出典が違う"}
        check(http.post("/api/feedback", json=rated), "/api/feedback", 201)
        check(http.post("/api/feedback", json=rated | {"query_id": "nope"}), "/api/feedback", 404)
        check(http.post("/api/feedback", json=rated | {"rating": 5}), "/api/feedback", 422)
        feedback_stats = "/api/feedback/stats"
        check(http.get(feedback_stats), feedback_stats, 200)
        check(http.get(f"{feedback_stats}?from=2025-12-31&to=2025-12-01"), feedback_stats, 400)
        check(http.get(f"{feedback_stats}?to=9999-12-31"), feedback_stats, 422)
        question = fresh.state.appdb.unanswered.add(
            "alpha", collection="manuals", question="霜取りの頻度は?", reason="no_hits"
        )
        listed = check(http.get("/api/unanswered"), "/api/unanswered", 200)
        assert listed["unanswered"]
        check(http.get("/api/unanswered?from=2025-13-45"), "/api/unanswered", 400, 422)
        check(http.get("/api/unanswered?limit=0"), "/api/unanswered", 422)
        resolve = "/api/unanswered/{question_id}/resolve"
        done = http.post(f"/api/unanswered/{question.id}/resolve", json={"resolution": "追記"})
        check(done, resolve, 200)
        check(http.post("/api/unanswered/999999/resolve"), resolve, 404)
        check(http.post("/api/unanswered/0/resolve"), resolve, 422)

        # a CSV as a table: inferred, then registered
        menu = {"file": ("menu.csv", "品名,価格\n麻婆豆腐,980\n".encode())}
        infer = "/api/ingest/table/infer"
        entry = check(http.post(infer, files=menu), infer, 200)
        check(http.post(infer, files={"file": ("a.md", b"# x")}), infer, 400)
        register = "/api/ingest/table"
        check(http.post(register, files=menu, data={"entry": json.dumps(entry)}), register, 201)
        check(http.post(register, files=menu, data={"entry": json.dumps(entry)}), register, 409)
        check(beta.post(register, files=menu, data={"entry": "{}"}), register, 403)

        # uploads and jobs
        table = "番号,件名,本文\n1,霜取り,冷凍庫の霜取りは毎週月曜日に行います。\n".encode()
        preview = "/api/ingest/preview"
        check(http.post(preview, files={"file": ("一覧.csv", table)}), preview, 200)
        check(http.post(preview, files={"file": (".hidden.csv", table)}), preview, 400)
        check(
            http.post(preview, files={"file": ("壊れた.csv", b"\x00\xff" * 10)}), preview, 200, 422
        )
        upload = {"files": ("手順.md", "# 霜取り\n\n毎週月曜日に霜取りをします。".encode())}
        started = check(
            http.post("/api/ingest", data={"collection": "manuals"}, files=upload),
            "/api/ingest",
            202,
        )
        check(
            http.post("/api/ingest", data={"collection": "secret"}, files=upload),
            "/api/ingest",
            409,
        )
        check(http.post("/api/ingest", data={"collection": "manuals"}), "/api/ingest", 422)
        queued = check(  # behind the first job of the collection: still waiting
            http.post("/api/ingest", data={"collection": "manuals"}, files=upload),
            "/api/ingest",
            202,
        )
        cancel = "/api/jobs/{job_id}/cancel"
        check(http.post(f"/api/jobs/{queued['id']}/cancel"), cancel, 200)
        job = _wait(http, check, started["id"])
        assert job["status"] == "done", job
        check(http.post(f"/api/jobs/{started['id']}/cancel"), cancel, 409)
        check(http.post("/api/jobs/nope/cancel"), cancel, 404)
        check(http.get("/api/jobs/nope"), "/api/jobs/{job_id}", 404)

        # a dataset from a URL (a local fake dataset host, allowed by [fetch] allow_hosts)
        home = fresh.state.client.workspace.home
        with (home / "tansaku.toml").open("a", encoding="utf-8") as fh:
            fh.write('\n[fetch]\nallow_hosts = ["127.0.0.1"]\nmax_mb = 0.01\n')
        faq = '{"id": "1", "text": "冷凍庫の霜取りは毎週月曜日です。"}\n'.encode()
        files = {"/faq.jsonl": faq, "/big.jsonl": faq * 1000, "/a.html": b"<p>x</p>"}
        fetch = "/api/collections/{name}/fetch"
        with FakeDatasetServer(files) as site:
            url = "/api/collections/faq-web/fetch"
            got = check(http.post(url, json={"url": f"{site.url}/faq.jsonl"}), fetch, 202)
            assert _wait(http, check, got["id"])["status"] == "done"
            check(http.post(url, json={"url": "ftp://x/a.jsonl"}), fetch, 400)
            check(http.post(url, json={"url": "http://10.0.0.1/a.jsonl"}), fetch, 403)
            check(http.post(url, json={"url": f"{site.url}/big.jsonl"}), fetch, 413)
            check(http.post(url, json={"url": f"{site.url}/a.html"}), fetch, 415)
            check(http.post(url, json={"url": f"{site.url}/none.jsonl"}), fetch, 422)
            check(http.post(url, json={}), fetch, 422)
            secret = "/api/collections/secret/fetch"
            check(http.post(secret, json={"url": f"{site.url}/faq.jsonl"}), fetch, 409)
        qa = {"source": "manuals", "target": "manuals_qa"}
        check(http.post("/api/qa/generate", json=qa), "/api/qa/generate", 409)
        check(
            http.post("/api/qa/generate", json=qa | {"source": "secret"}), "/api/qa/generate", 404
        )
        check(http.post("/api/qa/generate", json=qa | {"per_chunk": 0}), "/api/qa/generate", 422)

        # last: the rate limit of feedback (10 a minute per key)
        for _ in range(10):
            check(http.post("/api/feedback", json=rated), "/api/feedback", 201, 429)
        check(http.post("/api/feedback", json=rated), "/api/feedback", 429)

        # very last: the team's reset (every record of alpha gone)
        reset = "/api/collections/reset"
        check(http.post(reset, json={"confirm": "beta"}), reset, 400)
        check(http.post(reset, json={}), reset, 422)
        assert check(http.post(reset, json={"confirm": "alpha"}), reset, 200)["records"] > 0

    operations = {(m, p) for m, p, _ in _operations(check.doc)}
    answered = {(m, p) for m, p, s in check.seen if 200 <= s < 300}
    # Q/A generation needs a model (its 202 is the job body ingest's 202 checked above)
    assert operations - answered == {("post", "/api/qa/generate")}

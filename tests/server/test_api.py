"""The JSON API over a real uvicorn server: search, collections, records, config, health,
metrics, docs, security headers."""

from __future__ import annotations

import json

import pytest

from .support import KEY_ALPHA, KEY_BETA

pytestmark = pytest.mark.integration


def test_search_returns_the_cli_json(live):
    with live.client(KEY_ALPHA) as http:
        r = http.post(
            "/api/search", json={"query": "冷蔵庫の温度", "collection": "manuals", "top_k": 3}
        )
    assert r.status_code == 200, r.text
    data = r.json()
    assert set(data) == {"query_id", "query", "hits", "plan", "timings_ms"}
    assert data["hits"][0]["doc_id"] == "fridge"
    assert {"rank", "score"} <= set(next(iter(data["hits"][0]["axes"].values())))
    assert data["plan"]["tenant"] == "alpha"
    assert all(h["doc_id"] in {"fridge", "opening", "allergy"} for h in data["hits"])
    live.state.flush_events()  # rows are written in batches; feedback flushes the same way
    stored = live.state.appdb.events.get("alpha", data["query_id"])
    assert stored.query == "冷蔵庫の温度"


def test_search_carries_the_whole_request(live):
    body = {
        "query": "アレルギー",
        "collection": "manuals",
        "top_k": 2,
        "axes": [{"name": "kw", "mode": "bm25", "weight": 1.0}],
        "fusion": {"method": "rrf", "k": 10},
        "filter": {"fields": ["body"]},
        "min_score": 0.0,
        "expand": False,
        "synonyms": False,
        "retry": False,
        "now": "2025-12-11T09:00",
    }
    with live.client(KEY_ALPHA) as http:
        r = http.post("/api/search", json=body)
    assert r.status_code == 200, r.text
    data = r.json()
    assert [a["name"] for a in data["plan"]["axes"]] == ["kw"]
    assert data["hits"][0]["doc_id"] == "allergy"
    assert list(data["hits"][0]["axes"]) == ["kw"]


def test_search_takes_each_normalisation_and_names_them_on_a_bad_one(live):
    body = {"query": "冷蔵庫の温度", "collection": "manuals", "top_k": 3, "expand": False}
    with live.client(KEY_ALPHA) as http:
        found = {
            n: http.post("/api/search", json={**body, "fusion": {"normalization": n}})
            for n in ("zscore", "max", "minmax")
        }
        bad = http.post("/api/search", json={**body, "fusion": {"normalization": "softmax"}})
        spec = http.get("/openapi.json").json()
    for n, r in found.items():
        assert r.status_code == 200, (n, r.text)
        assert r.json()["hits"][0]["doc_id"] == "fridge"
        assert r.json()["plan"]["fusion"]["normalization"] == n
    assert bad.status_code == 422 and "zscore" in bad.text
    fusion = spec["components"]["schemas"]["FusionBody"]["properties"]["normalization"]
    assert set(fusion["enum"]) == {"zscore", "max", "minmax"}


def test_search_takes_a_dense_gate_and_reports_the_coverage(live):
    body = {"query": "冷蔵庫の温度は何度ですか", "collection": "manuals", "expand": False}
    with live.client(KEY_ALPHA) as http:
        gated = http.post("/api/search", json={**body, "fusion": {"dense_gate": 3}})
        plain = http.post("/api/search", json={**body, "fusion": {"normalization": "zscore"}})
        default = http.post("/api/search", json=body)
        bad = http.post("/api/search", json={**body, "fusion": {"dense_gate": 11}})
    assert gated.status_code == 200, gated.text
    fusion = gated.json()["plan"]["fusion"]
    assert fusion["dense_gate"] == 3 and 0 <= fusion["lexical_coverage"] <= 1
    assert "dense_gate" not in plain.json()["plan"]["fusion"]  # a normalisation named: no gate
    assert default.json()["plan"]["fusion"]["dense_gate"] == 3  # the collection's default
    assert bad.status_code == 422 and "dense_gate" in bad.text


def test_an_axis_searches_for_its_own_text(live):
    """``axis_queries``: the keyword axis looks for アレルギー while the query says 冷蔵庫; an
    axis the search does not have is a 400 naming the axes there are."""
    body = {
        "query": "冷蔵庫",
        "collection": "manuals",
        "top_k": 1,
        "axes": [{"name": "kw", "mode": "bm25", "weight": 1.0}],
        "axis_queries": {"kw": "アレルギー"},
        "expand": False,
        "retry": False,
    }
    with live.client(KEY_ALPHA) as http:
        r = http.post("/api/search", json=body)
        bad = http.post("/api/search", json={**body, "axis_queries": {"nope": "アレルギー"}})
    assert r.status_code == 200, r.text
    assert r.json()["hits"][0]["doc_id"] == "allergy"
    assert r.json()["plan"]["axes"][0]["query"] == "アレルギー"
    assert bad.status_code == 400 and "kw" in bad.text and "nope" in bad.text


def test_a_blank_query_is_a_400_as_on_the_command_line(live):
    with live.client(KEY_ALPHA) as http:
        r = http.post("/api/search", json={"query": "  ", "collection": "manuals"})
    assert r.status_code == 400 and "検索クエリが空です" in r.text


def test_collections_list_create_config_records_delete(fresh):
    live = fresh
    with live.client(KEY_ALPHA) as http:
        listed = http.get("/api/collections").json()["collections"]
        assert [(c["name"], c["records"]) for c in listed] == [("manuals", 3)]
        created = http.post(
            "/api/collections",
            json={"name": "faq", "config": {"description": "よくある質問", "search": {"top_k": 5}}},
        )
        assert created.status_code == 201, created.text
        assert created.json()["description"] == "よくある質問"
        again = http.post("/api/collections", json={"name": "faq"})
        assert again.status_code == 409
        assert again.json()["error"]["code"] == "collection_exists"
        config = http.get("/api/collections/faq/config").json()
        assert config["config"]["search"]["top_k"] == 5
        page = http.get("/api/collections/manuals/records", params={"limit": 2}).json()
        assert page["total"] == 3 and len(page["records"]) == 2
        assert [r["id"] for r in page["records"]] == ["allergy:body", "fridge:body"]
        rest = http.get("/api/collections/manuals/records", params={"offset": 2}).json()
        assert [r["doc_id"] for r in rest["records"]] == ["opening"]
        found = http.get("/api/collections/manuals/records", params={"q": "釣り銭"}).json()
        assert found["records"][0]["doc_id"] == "opening"
        gone = http.delete("/api/collections/faq")
        assert gone.status_code == 200 and gone.json()["collection_removed"] is True
        assert http.get("/api/collections/faq/config").status_code == 404
    assert not live.state.client.has_collection("faq")


def test_deleting_a_shared_collection_keeps_the_other_teams_records(fresh):
    live = fresh
    with live.client(KEY_ALPHA) as http:
        r = http.delete("/api/collections/manuals")
        assert r.json() == {"deleted": "manuals", "collection_removed": False}
        assert http.get("/api/collections").json()["collections"] == []
    with live.client(KEY_BETA) as http:
        names = [c["name"] for c in http.get("/api/collections").json()["collections"]]
        assert names == ["manuals", "secret"]
        page = http.get("/api/collections/manuals/records").json()
        assert [r["doc_id"] for r in page["records"]] == ["beta-fridge"]


def test_health_metrics_docs_openapi(live):
    with live.client(KEY_ALPHA) as http:
        http.post("/api/search", json={"query": "冷蔵庫", "collection": "manuals"})
        http.post(
            "/api/search", json={"query": "宇宙船の燃料", "collection": "manuals", "min_score": 5.0}
        )
        health = http.get("/healthz")
        assert health.json()["checks"]["engine"]["ok"] is True
        assert health.json()["checks"]["appdb"]["ok"] is True
        metrics = http.get("/metrics").text
        assert _value(metrics, "tansaku_search_total") >= 2
        assert _value(metrics, "tansaku_zero_hit_total") >= 1
        assert (
            _value(metrics, 'tansaku_search_latency_seconds_count{mode="bigram+bm25+dense"}') >= 2
        )
        assert _value(metrics, 'tansaku_http_requests_total{route="/api/search",status="200"}') >= 2
        http.get("/api/jobs/abc")
        again = http.get("/metrics").text
        assert 'route="/api/jobs/{job_id}",status="404"' in again
        assert "/api/jobs/abc" not in again
        schema = http.get("/openapi.json").json()
        assert "/api/search" in schema["paths"]
        docs = http.get("/docs")
        assert docs.status_code == 200 and "POST /api/search" in docs.text
        assert "<script" not in docs.text


def test_security_headers_on_every_response(live):
    with live.client(KEY_ALPHA) as http:
        for r in (http.get("/healthz"), http.get("/nope"), http.get("/docs")):
            csp = r.headers["content-security-policy"]
            assert "script-src 'self'" in csp and "unsafe-inline" not in csp
            assert r.headers["x-content-type-options"] == "nosniff"
            assert r.headers["x-frame-options"] == "DENY"
            assert r.headers["referrer-policy"] == "no-referrer"
        cors = http.options(
            "/api/search",
            headers={"Origin": "https://evil.example", "Access-Control-Request-Method": "POST"},
        )
        assert "access-control-allow-origin" not in cors.headers


def test_search_json_is_identical_to_the_cli(live):
    workspace = live.state.client
    with live.client(KEY_ALPHA) as http:
        data = http.post(
            "/api/search",
            json={"query": "開店前", "collection": "manuals", "now": "2025-12-11"},
        ).json()
    again = workspace.search(
        "開店前", collection="manuals", team="alpha", now=_tokyo("2025-12-11")
    ).to_dict()
    strip = {"query_id", "timings_ms"}
    assert json.loads(
        json.dumps({k: v for k, v in again.items() if k not in strip}, default=str)
    ) == {k: v for k, v in data.items() if k not in strip}


def _tokyo(day: str):
    from tansaku.text.dates import parse_now

    return parse_now(day)


def _value(metrics: str, name: str) -> float:
    for line in metrics.splitlines():
        if line.startswith(name + " "):
            return float(line.rsplit(" ", 1)[1])
    return 0.0

"""Bad input never gets a 500: huge queries, bad JSON, wrong types, unknown fields and
collections, control characters, oversized bodies — each a 4xx with a Japanese message."""

from __future__ import annotations

import pytest

from .support import KEY_ALPHA

pytestmark = pytest.mark.integration


def _error(r, status: int, code: str | None = None) -> str:
    assert r.status_code == status, r.text
    err = r.json()["error"]
    if code is not None:
        assert err["code"] == code
    assert any("\u3040" <= ch <= "\u9fff" for ch in err["message"]), err["message"]
    return err["message"]


@pytest.mark.parametrize(
    ("body", "status", "code"),
    [
        ({"query": "あ" * 5_000, "collection": "manuals"}, 400, "invalid_request"),
        ({"query": "冷蔵庫\x1b[31m", "collection": "manuals"}, 400, "invalid_request"),
        ({"query": "冷蔵庫\x00", "collection": "manuals"}, 400, "invalid_request"),
        ({"query": "冷蔵庫", "collection": "nothing-here"}, 404, "collection_not_found"),
        ({"query": "冷蔵庫", "collection": "../etc"}, 404, "collection_not_found"),
        ({"query": "冷蔵庫", "collection": "manuals", "top_k": 0}, 400, "invalid_request"),
        ({"query": "冷蔵庫", "collection": "manuals", "top_k": 10**9}, 400, "invalid_request"),
        ({"query": "冷蔵庫", "collection": "manuals", "top_k": "多い"}, 422, "validation_error"),
        ({"query": ["冷蔵庫"], "collection": "manuals"}, 422, "validation_error"),
        ({"query": "冷蔵庫"}, 422, "validation_error"),
        ({"query": "冷蔵庫", "collection": "manuals", "team": "beta"}, 422, "validation_error"),
        ({"query": "冷蔵庫", "collection": "manuals", "tenant": "beta"}, 422, "validation_error"),
        ({"query": "冷蔵庫", "collection": "manuals", "where": ["cost<<3"]}, 400, None),
        ({"query": "冷蔵庫", "collection": "manuals", "where": ["色=赤"]}, 400, None),
        ({"query": "冷蔵庫", "collection": "manuals", "min_score": "nan"}, 400, None),
        ({"query": "冷蔵庫", "collection": "manuals", "now": "昨日"}, 422, None),
        (
            {"query": "冷蔵庫", "collection": "manuals", "axes": [{"name": "x", "mode": "magic"}]},
            422,
            None,
        ),
        (
            {
                "query": "冷蔵庫",
                "collection": "manuals",
                "filter": {"date_from": "2025-12-31", "date_to": "2025-01-01"},
            },
            400,
            None,
        ),
        ([1, 2, 3], 422, "validation_error"),
        ("文字列", 422, "validation_error"),
    ],
)
def test_bad_search_bodies_are_4xx(live, body, status, code):
    with live.client(KEY_ALPHA) as http:
        _error(http.post("/api/search", json=body), status, code)


def test_bad_json_and_wrong_content(live):
    with live.client(KEY_ALPHA) as http:
        headers = {"Content-Type": "application/json"}
        _error(http.post("/api/search", content=b'{"query": ', headers=headers), 422)
        bad = _error(http.post("/api/search", content=b"\xff\xfe\x00", headers=headers), 400)
        assert "UTF-8" in bad
        _error(http.post("/api/search", content=b"", headers=headers), 422)
        _error(http.post("/api/search", content="query=冷蔵庫"), 422)


def test_oversized_bodies_are_413(live):
    big = {"query": "冷蔵庫", "collection": "manuals", "where": ["a=" + "b" * 400] * 40}
    huge = '{"query": "' + "あ" * 600_000 + '", "collection": "manuals"}'
    with live.client(KEY_ALPHA) as http:
        _error(http.post("/api/search", json=big), 422)
        _error(
            http.post(
                "/api/search",
                content=huge.encode(),
                headers={"Content-Type": "application/json"},
            ),
            413,
            "payload_too_large",
        )

        def chunks():
            for _ in range(40):
                yield b"x" * 65_536

        streamed = http.post(
            "/api/search", content=chunks(), headers={"Content-Type": "application/json"}
        )
        _error(streamed, 413, "payload_too_large")


def test_unknown_routes_and_methods(live):
    with live.client(KEY_ALPHA) as http:
        _error(http.get("/api/nothing"), 404, "not_found")
        _error(http.put("/api/search", json={}), 405, "method_not_allowed")
        _error(http.get("/api/collections/無い/records"), 404, "collection_not_found")
        _error(http.get("/api/collections/manuals/records", params={"limit": 10_000}), 422)
        _error(http.get("/api/collections/manuals/records", params={"offset": -1}), 422)
        _error(http.get("/api/stats/weather"), 422)
        _error(http.get("/api/jobs/" + "x" * 500), 404)
        _error(http.post("/api/collections", json={"name": "日本語の名前"}), 400)
        _error(http.post("/api/collections", json={"name": "ok", "config": {"axes": "x"}}), 400)
        _error(http.post("/api/collections", json={"name": "ok2", "config": {"typo": 1}}), 400)


def test_the_server_keeps_serving_after_all_that(live):
    with live.client(KEY_ALPHA) as http:
        r = http.post("/api/search", json={"query": "冷蔵庫", "collection": "manuals"})
    assert r.status_code == 200

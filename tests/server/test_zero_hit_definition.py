"""One definition of the zero-hit rate: a search that found nothing. The dashboard's figures
(``/api/feedback/stats``) and ``/metrics`` count the same searches and the same zero hits;
questions the agent could not answer are the unanswered rate, apart — over a real server."""

from __future__ import annotations

import re

import pytest

from .support import KEY_ALPHA

pytestmark = pytest.mark.integration


def _metric(text: str, name: str, labels: str = "") -> float:
    pattern = rf"^{re.escape(name + labels)} ([0-9.e+]+)$"
    return sum(float(m) for m in re.findall(pattern, text, flags=re.M))


def test_dashboard_and_metrics_count_the_same_zero_hits(fresh):
    with fresh.client(KEY_ALPHA) as http:
        found = {"query": "冷蔵庫の温度", "collection": "manuals"}
        nothing = found | {"min_score": 1000.0, "retry": False}
        for body in (found, nothing, nothing):
            r = http.post("/api/search", json=body)
            assert r.status_code == 200, r.text
        assert r.json()["hits"] == []
        for question in ("冷蔵庫の温度は何度までですか", "宇宙旅行の料金はいくらですか"):
            answer = http.post("/api/ask", json={"question": question, "collections": ["manuals"]})
            assert answer.status_code == 200, answer.text
        stats = http.get("/api/feedback/stats").json()
        metrics = http.get("/metrics").text

    searches = _metric(metrics, "tansaku_search_total")
    zero = _metric(metrics, "tansaku_zero_hit_total")
    # the agent's own searches count in both; the answers themselves in neither
    assert stats["searches"] == searches > 3
    assert stats["zero_hit"] == zero >= 2
    assert stats["zero_hit_rate"] == round(zero / searches, 4)
    asked = _metric(metrics, "tansaku_ask_total", '{outcome="answered"}')
    unanswered = _metric(metrics, "tansaku_ask_total", '{outcome="unanswered"}')
    assert (stats["questions"], stats["unanswered"]) == (asked + unanswered, unanswered) == (2, 1)
    assert stats["unanswered_rate"] == 0.5
    assert "宇宙旅行の料金はいくらですか" not in {q["query"] for q in stats["top_zero_hit_queries"]}
    assert "冷蔵庫の温度" in {q["query"] for q in stats["top_zero_hit_queries"]}
    days = stats["daily"]
    assert sum(d["searches"] for d in days) == searches and sum(d["zero_hit"] for d in days) == zero
    assert (sum(d["questions"] for d in days), sum(d["unanswered"] for d in days)) == (2, 1)

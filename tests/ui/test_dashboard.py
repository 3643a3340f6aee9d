"""The dashboard shows one zero-hit rate — searches that found nothing, as ``/metrics`` counts
them — and the questions the agent could not answer apart, as the unanswered rate; in a real
browser against a real server."""

from __future__ import annotations

import httpx


def test_zero_hit_and_unanswered_rates_are_apart(live, watched):
    with httpx.Client(base_url=live.base_url, timeout=60) as http:
        nothing = {"query": "冷蔵庫", "collection": "manuals", "min_score": 1000.0, "retry": False}
        assert http.post("/api/search", json=nothing).json()["hits"] == []
        for question in ("身だしなみとして爪はどうする?", "宇宙旅行の料金はいくらですか"):
            assert http.post("/api/ask", json={"question": question}).status_code == 200
        stats = http.get("/api/feedback/stats").json()
    assert stats["questions"] >= 2 and stats["unanswered"] >= 1 and stats["zero_hit"] >= 1
    page = watched.page
    page.goto(live.base_url + "/dashboard")
    page.wait_for_selector("#cards .card")
    cards = [c.inner_text() for c in page.locator("#cards .card").all()]
    by_label = {c.split("\n", 1)[1]: c.split("\n", 1)[0] for c in cards}
    zero = by_label[f"0 件率(検索 {stats['zero_hit']} 件がヒットなし)"]
    assert zero == f"{stats['zero_hit_rate'] * 100:.1f}%"
    assert by_label["検索数"] == f"{stats['searches']:,}"
    assert by_label["質問数(エージェント対話)"] == f"{stats['questions']:,}"
    unanswered = by_label[f"未回答率({stats['unanswered']} 問に答えられず)"]
    assert unanswered == f"{stats['unanswered_rate'] * 100:.1f}%"
    assert "質問数と未回答" in page.locator("#chart-unanswered svg").get_attribute("aria-label")
    zero_queries = page.locator("#zero").inner_text()
    assert "冷蔵庫" in zero_queries and "宇宙旅行" not in zero_queries
    watched.assert_clean(live.base_url)

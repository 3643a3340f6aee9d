"""``POST /api/search`` that finds nothing answers with a Japanese ``suggestion`` (what was
tried, what to change, rewordings to run); a search with hits has none."""

from __future__ import annotations

import pytest

from .support import KEY_ALPHA

pytestmark = pytest.mark.integration
KEYWORDS_ONLY = [{"name": "kw", "mode": "bm25"}]


def test_zero_hits_carry_a_suggestion(live):
    with live.client(KEY_ALPHA) as alpha:
        body = {"query": "宇宙船の燃料補給について知りたい", "collection": "manuals"}
        found = alpha.post("/api/search", json=body | {"axes": KEYWORDS_ONLY})
        assert found.status_code == 200, found.text
        data = found.json()
        assert data["hits"] == []
        s = data["suggestion"]
        assert s["message"].startswith("「宇宙船の燃料補給について知りたい」に一致する結果は")
        assert s["queries"] == ["宇宙船 燃料補給"]
        assert "さらに同義語を加えて再検索しました" in s["tried"]
        assert s["tips"][-1] == "別のコレクションでも検索してください"

        hit = alpha.post("/api/search", json={"query": "冷蔵庫の温度", "collection": "manuals"})
        assert hit.json()["hits"] and "suggestion" not in hit.json()


def test_a_filter_nothing_passes_is_said_and_not_retried(live):
    with live.client(KEY_ALPHA) as alpha:
        body = {
            "query": "冷蔵庫の温度",
            "collection": "manuals",
            "filter": {"date_from": "2001-01-01", "date_to": "2001-12-31"},
        }
        r = alpha.post("/api/search", json=body)
        assert r.status_code == 200, r.text
        data = r.json()
        assert data["hits"] == []
        assert data["plan"]["filter_empty"] is True and data["plan"]["retry_stage"] == 0
        assert data["suggestion"]["message"] == (
            "コレクション「manuals」には期間(2001-01-01〜2001-12-31)に当てはまる記録がありません。"
            "期間の指定を外すか広げてください"
        )
        found = alpha.post("/api/search", json=body | {"filter": {}})
        assert found.json()["hits"] and found.json()["plan"]["filter_empty"] is False

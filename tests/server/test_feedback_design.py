"""``POST /api/feedback`` takes design 004's body (rating 0/1 as well as -1/1, ``query_text``,
``answer_text``, ``user_reason``, ``meta``) and stores what the design lists — the answer text,
the session, the index and embedding versions — with the query meta rebuilt from the server's
own event, over a real uvicorn server."""

from __future__ import annotations

import pytest

from .support import KEY_ALPHA

pytestmark = pytest.mark.integration


def _generation(live, name: str) -> str:
    gen = live.state.client.collection(name).gen
    assert gen is not None
    return gen.name


def test_design_body_on_a_search(fresh):
    with fresh.client(KEY_ALPHA) as http:
        qid = http.post(
            "/api/search", json={"query": "冷蔵庫の温度", "collection": "manuals"}
        ).json()["query_id"]
        r = http.post(
            "/api/feedback",
            json={
                "query_id": qid,
                "query_text": "金庫の鍵",  # never read: the query is the server's
                "answer_text": "冷蔵庫は\x00毎朝確認します",
                "rating": 0,
                "user_reason": "温度の数字がない",
                "session_id": "tab-42",
                "meta": {"top_titles": ["偽物"], "namespaces": ["effect_9"], "min_score": 0.99},
            },
        )
        assert r.status_code == 201, r.text
        row = r.json()
        assert row["rating"] == -1 and row["reason"] == "温度の数字がない"
        meta = row["meta"]
        assert meta["query"] == "冷蔵庫の温度"
        assert meta["top_titles"][0] == "冷蔵庫の温度管理" and "偽物" not in meta["top_titles"]
        assert "effect_9" not in meta["namespaces"] and meta["min_score"] != 0.99
        assert meta["answer_text"] == "冷蔵庫は毎朝確認します"
        assert meta["answer_text_source"] == "client"
        assert meta["session_id"] == "tab-42"
        assert meta["index_version"] == _generation(fresh, "manuals")
        assert meta["embedding_version"] == fresh.state.client.collection("manuals").state.embedder
        assert meta["versions_at"] == "search"
        assert (
            'tansaku_feedback_total{query_type="clear",rating="-1"} 1.0'
            in http.get("/metrics").text
        )
        liked = http.post("/api/feedback", json={"query_id": qid, "rating": 1, "reason": "良い"})
        assert liked.status_code == 201 and liked.json()["rating"] == 1
        (stored_neg,) = fresh.state.appdb.feedback.find("alpha", rating=-1)
        assert stored_neg.meta == meta
        refused = [
            {"query_id": qid, "rating": 2},
            {"query_id": qid, "rating": -1, "reason": "甲", "user_reason": "乙"},
            {"query_id": qid, "rating": 1, "user_reason": "あ" * 301},
            {"query_id": qid, "rating": 1, "answer_text": "あ" * 20_001},
            {"query_id": qid, "rating": 1, "team": "beta"},
        ]
        for body in refused:
            assert http.post("/api/feedback", json=body).status_code == 422, body
        same = http.post(
            "/api/feedback",
            json={"query_id": qid, "rating": 0, "reason": "同じ", "user_reason": "同じ"},
        )
        assert same.status_code == 201 and same.json()["reason"] == "同じ"


def test_answers_keep_the_servers_text_session_and_a_not_found_answers_titles(fresh):
    with fresh.client(KEY_ALPHA) as http:
        answered = http.post(
            "/api/ask",
            json={"question": "冷蔵庫の温度は何度までですか", "collections": ["manuals"]},
        ).json()
        assert not answered["unanswered"]
        r = http.post(
            "/api/feedback",
            json={
                "query_id": answered["query_id"],
                "rating": 1,
                "answer_text": "書き換えた回答",
                "session_id": "forged-session",
            },
        )
        assert r.status_code == 201, r.text
        meta = r.json()["meta"]
        assert meta["answer_text"] == answered["answer"]
        assert meta["answer_text_source"] == "server"
        assert meta["session_id"] == answered["conversation_id"]
        assert meta["top_titles"] == ["冷蔵庫の温度管理"]
        assert meta["index_version"] == _generation(fresh, "manuals")
        assert meta["versions_at"] == "feedback"  # answer events carry no versions of their own

        declined = http.post(
            "/api/ask",
            json={"question": "宇宙旅行の料金はいくらですか", "collections": ["manuals"]},
        ).json()
        assert declined["unanswered"] and not declined["citations"]
        r = http.post(
            "/api/feedback",
            json={"query_id": declined["query_id"], "rating": 0, "user_reason": "載せてほしい"},
        )
        assert r.status_code == 201, r.text
        meta = r.json()["meta"]
        assert meta["zero_hit"] is True and meta["query"] == "宇宙旅行の料金はいくらですか"
        assert meta["answer_text"] == declined["answer"]
        fresh.state.flush_events()
        searched = [
            e
            for e in fresh.state.appdb.events.find("alpha")
            if e.query == "宇宙旅行の料金はいくらですか" and e.query_type != "ask"
        ]
        assert searched and searched[0].top_titles
        assert meta["top_titles_source"] == "searches"
        assert set(meta["top_titles"]) == {t for e in searched for t in e.top_titles}
        assert set(meta["searched_query_ids"]) == {e.query_id for e in searched}

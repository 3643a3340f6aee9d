"""``POST /api/collections/reset`` over a real server: one call removes every record of the
caller's team (and only its team's) from every collection it sees; collections nobody has
records in or created are removed; the team's name must be typed again."""

from __future__ import annotations

import pytest

from .support import KEY_ALPHA, KEY_BETA

pytestmark = pytest.mark.integration


def names(client) -> list[str]:
    return sorted(c["name"] for c in client.get("/api/collections").json()["collections"])


def test_a_team_resets_its_records_everywhere_and_only_its_own(fresh):
    state = fresh.state
    with fresh.client(KEY_ALPHA) as alpha, fresh.client(KEY_BETA) as beta:
        assert names(beta) == ["manuals", "secret"]
        created = beta.post("/api/collections", json={"name": "beta-faq"})
        assert created.status_code == 201

        done = beta.post("/api/collections/reset", json={"confirm": "beta"})
        assert done.status_code == 200, done.text
        body = done.json()
        assert body["team"] == "beta"
        assert body["collections"] == {"manuals": 1, "secret": 1}
        assert body["records"] == 2
        assert sorted(body["removed"]) == ["beta-faq", "secret"]
        assert names(beta) == []
        assert not state.client.has_collection("secret")
        assert not state.client.has_collection("beta-faq")
        # alpha's records of the shared collection stay, searchable as before
        assert state.client.collection("manuals").store.count("alpha") == 3
        assert state.client.collection("manuals").store.count("beta") == 0
        hits = alpha.post(
            "/api/search", json={"query": "冷蔵庫の温度", "collection": "manuals"}
        ).json()["hits"]
        assert hits[0]["doc_id"] == "fridge"

        again = beta.post("/api/collections/reset", json={"confirm": "beta"})
        assert again.status_code == 200
        assert again.json()["collections"] == {} and again.json()["records"] == 0


def test_the_team_name_must_be_typed_again(fresh):
    state = fresh.state
    with fresh.client(KEY_ALPHA) as alpha:
        wrong = alpha.post("/api/collections/reset", json={"confirm": "beta"})
        assert wrong.status_code == 400
        error = wrong.json()["error"]
        assert error["code"] == "confirmation_required"
        assert "チーム名「alpha」" in error["message"]
        assert alpha.post("/api/collections/reset", json={}).status_code == 422
        assert alpha.post("/api/collections/reset").status_code == 422
    assert state.client.collection("manuals").store.count("alpha") == 3

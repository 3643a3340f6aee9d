"""``POST /api/collections/{name}/merge`` over a real server: the caller's team merges its own
records only, keeping their ids; another team's collection is 404 as a source and as the
destination; a bad body is a 4xx JSON error in Japanese."""

from __future__ import annotations

import pytest

from .support import KEY_ALPHA, KEY_BETA

pytestmark = pytest.mark.integration


def ids(client, name: str) -> list[str]:
    page = client.get(f"/api/collections/{name}/records", params={"limit": 200})
    assert page.status_code == 200, page.text
    return sorted(r["id"] for r in page.json()["records"])


def test_a_team_merges_its_own_records_into_a_new_collection(fresh):
    with fresh.client(KEY_ALPHA) as alpha, fresh.client(KEY_BETA) as beta:
        done = alpha.post("/api/collections/alpha-all/merge", json={"sources": ["manuals"]})
        assert done.status_code == 200, done.text
        body = done.json()
        assert body["created"] and body["into"] == "alpha-all"
        assert body["teams"] == {"alpha": 3}
        assert body["records"]["inserted"] == 3 and body["conflict"] == "skip"
        assert ids(alpha, "alpha-all") == ["allergy:body", "fridge:body", "opening:body"]
        assert "alpha-all" in [
            c["name"] for c in alpha.get("/api/collections").json()["collections"]
        ]
        # beta's records of 「manuals」 stayed out, and beta does not see the new collection
        assert beta.get("/api/collections/alpha-all/records").status_code == 404
        hits = alpha.post(
            "/api/search", json={"query": "アレルギーのお客様", "collection": "alpha-all"}
        ).json()["hits"]
        assert hits[0]["doc_id"] == "allergy"

        again = alpha.post("/api/collections/alpha-all/merge", json={"sources": ["manuals"]})
        assert again.json()["skipped"] == 3 and again.json()["documents"] == 0

        shared = beta.post("/api/collections/secret/merge", json={"sources": ["manuals"]})
        assert shared.status_code == 200, shared.text
        assert shared.json()["teams"] == {"beta": 1} and not shared.json()["created"]
        assert ids(beta, "secret") == ["beta-fridge:body", "vault:body"]


def test_another_teams_collection_is_not_found_and_nothing_is_written(fresh):
    state = fresh.state
    with fresh.client(KEY_ALPHA) as alpha:
        as_source = alpha.post("/api/collections/mine/merge", json={"sources": ["secret"]})
        assert as_source.status_code == 404
        assert as_source.json()["error"]["code"] == "collection_not_found"
        assert "「secret」が見つかりません" in as_source.json()["error"]["message"]
        assert not state.client.has_collection("mine")

        as_dest = alpha.post("/api/collections/secret/merge", json={"sources": ["manuals"]})
        assert as_dest.status_code == 404
        assert state.client.collection("secret").store.count("alpha") == 0

        itself = alpha.post("/api/collections/manuals/merge", json={"sources": ["manuals"]})
        assert itself.status_code == 400
        assert "自分自身" in itself.json()["error"]["message"]

        policy = alpha.post(
            "/api/collections/x/merge", json={"sources": ["manuals"], "conflict": "replace"}
        )
        assert policy.status_code == 422
        empty = alpha.post("/api/collections/x/merge", json={"sources": []})
        assert empty.status_code == 422
        bad_name = alpha.post("/api/collections/x/merge", json={"sources": ["../etc"]})
        assert bad_name.status_code == 400
        assert not state.client.has_collection("x")

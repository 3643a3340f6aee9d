"""Naming another team's collection does not confirm that it exists: creating it, uploading
into it or generating Q/A pairs into it is a 409 ``name_unavailable`` that says the name cannot
be used — not 「既にあります」 / 「使用中です」 — and the other team's collection is untouched."""

from __future__ import annotations

import pytest

from .support import KEY_ALPHA, KEY_BETA

pytestmark = pytest.mark.integration


def _unavailable(r) -> None:
    assert r.status_code == 409, r.text
    error = r.json()["error"]
    assert error["code"] == "name_unavailable"
    assert error["message"] == "コレクション名「secret」は使えません。別の名前にしてください"
    assert "既に" not in r.text and "使用中" not in r.text and "exists" not in r.text


def test_another_teams_collection_name_is_refused_without_saying_it_exists(fresh):
    with fresh.client(KEY_ALPHA) as alpha:
        _unavailable(alpha.post("/api/collections", json={"name": "secret"}))
        _unavailable(
            alpha.post(
                "/api/ingest",
                data={"collection": "secret"},
                files={"files": ("x.md", "# 金庫\n\n金庫を開ける手順。".encode(), "text/md")},
            )
        )
        _unavailable(alpha.post("/api/qa/generate", json={"source": "manuals", "target": "secret"}))
        # a name the team sees is still plainly a duplicate
        mine = alpha.post("/api/collections", json={"name": "manuals"})
        assert mine.status_code == 409 and mine.json()["error"]["code"] == "collection_exists"
        assert alpha.get("/api/collections/secret/config").status_code == 404
    with fresh.client(KEY_BETA) as beta:
        names = [c["name"] for c in beta.get("/api/collections").json()["collections"]]
        assert "secret" in names
        hits = beta.post("/api/search", json={"query": "金庫", "collection": "secret"}).json()
        assert [h["doc_id"] for h in hits["hits"]] == ["vault"]

"""A CSV uploaded as a table: ``POST /api/ingest/table/infer`` suggests each column's type,
description and example (nothing registered); ``POST /api/ingest/table`` registers the file with
the corrections (admin keys only) and its SQL tool, and SQL reads it at once."""

from __future__ import annotations

import json

import pytest

from .support import KEY_ALPHA, KEY_BETA

pytestmark = pytest.mark.integration
MENU = (
    "品名,価格,販売開始日,辛さ\n"
    "麻婆豆腐,980,2025-04-01,3\n"
    "担々麺,1100,2025-05-10,2\n"
    "杏仁豆腐,450,2025-04-01,0\n"
).encode()


def test_infer_then_register_a_csv_as_a_table(fresh):
    files = {"file": ("メニュー.csv", MENU, "text/csv")}
    with fresh.client(KEY_ALPHA) as alpha, fresh.client(KEY_BETA) as beta:
        inferred = alpha.post("/api/ingest/table/infer", files=files, data={"name": "menu"})
        assert inferred.status_code == 200, inferred.text
        body = inferred.json()
        assert body["name"] == "menu" and body["rows"] == 3
        cols = {c["header"]: c for c in body["columns"]}
        assert [cols[h]["type"] for h in ("品名", "価格", "販売開始日", "辛さ")] == [
            "TEXT",
            "INTEGER",
            "DATE",
            "INTEGER",
        ]
        assert cols["価格"]["example"].startswith("980")
        assert not fresh.state.client.workspace.tables_dir.joinpath("menu.csv").exists()

        spicy = cols["辛さ"]["name"]
        entry = body | {"description": "中華料理店のメニュー"}
        entry["columns"] = [
            c | {"description": "辛さ(0〜5)", "type": "DOUBLE"} if c["name"] == spicy else c
            for c in body["columns"]
        ]
        refused = beta.post("/api/ingest/table", files=files, data={"entry": json.dumps(entry)})
        assert refused.status_code == 403
        assert refused.json()["error"]["code"] == "admin_only"

        done = alpha.post("/api/ingest/table", files=files, data={"entry": json.dumps(entry)})
        assert done.status_code == 201, done.text
        assert done.json()["tool"] == "search_menu" and done.json()["rows"] == 3
        types = {c["name"]: c["type"] for c in done.json()["columns"]}
        assert types[spicy] == "DOUBLE"
        sql = f"SELECT count(*) AS n FROM menu WHERE {spicy} >= 2"
        counted = alpha.post("/api/sql", json={"sql": sql})
        assert counted.status_code == 200, counted.text
        assert counted.json()["results"][0]["n"] == 2
        listed = {t["name"]: t for t in alpha.get("/api/tables").json()["tables"]}
        assert listed["menu"]["description"] == "中華料理店のメニュー"
        assert listed["menu"]["tools"] == ["search_menu"]

        again = alpha.post("/api/ingest/table", files=files, data={"entry": json.dumps(entry)})
        assert again.status_code == 409
        text = {"file": ("メモ.md", "# メモ".encode(), "text/markdown")}
        assert alpha.post("/api/ingest/table/infer", files=text).status_code == 400
        bad = alpha.post("/api/ingest/table", files=files, data={"entry": "{"})
        assert bad.status_code == 400
        unknown = entry | {"name": "menu2", "columns": [{"name": "nope", "type": "TEXT"}]}
        missing = alpha.post("/api/ingest/table", files=files, data={"entry": json.dumps(unknown)})
        assert missing.status_code == 400 and "nope" in missing.json()["error"]["message"]
        assert not fresh.state.client.workspace.tables_dir.joinpath("menu2.csv").exists()

"""A running server sees rows appended to a table's CSV: on the next ``POST /api/sql`` (the
file changed) and on ``POST /api/tables/reload``; a file that cannot be read is a 422 with the
reason in Japanese and the old rows still served. Every query is a line of the SQL audit log
naming the key's team."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from .support import KEY_ALPHA, KEY_BETA

pytestmark = pytest.mark.integration

COUNT = {"sql": "SELECT count(*) AS n FROM stores"}


def _append(csv: Path, old_id: str, new_id: str) -> None:
    text = csv.read_text(encoding="utf-8")
    line = next(x for x in text.splitlines() if x.startswith(old_id + ","))
    with csv.open("a", encoding="utf-8", newline="") as fh:
        fh.write(line.replace(old_id, new_id, 1) + "\r\n")


def test_rows_appended_reach_the_running_server(fresh) -> None:
    home = fresh.state.client.workspace.home
    stores = home / "tables" / "stores.csv"
    with fresh.client(KEY_ALPHA) as http:
        assert http.post("/api/sql", json=COUNT).json()["results"] == [{"n": 28}]
        _append(stores, "STR-0003", "STR-9001")
        after = http.post("/api/sql", json=COUNT | {"tool": "search_stores"})
        assert after.status_code == 200 and after.json()["results"] == [{"n": 29}]
        listed = {t["name"]: t["rows"] for t in http.get("/api/tables").json()["tables"]}
        assert listed["stores"] == 29

        _append(stores, "STR-0004", "STR-9002")
        one = http.post("/api/tables/reload", json={"table": "stores"})
        assert one.status_code == 200, one.text
        assert one.json() == {
            "ok": True,
            "tables": [{"name": "stores", "reloaded": True, "rows": 30, "error": None}],
        }
        every = http.post("/api/tables/reload")
        assert every.status_code == 200
        assert [t["name"] for t in every.json()["tables"]] == ["stores", "events", "daily_reports"]
        assert http.post("/api/sql", json=COUNT).json()["results"] == [{"n": 30}]


def test_a_broken_csv_keeps_the_old_table(fresh) -> None:
    home = fresh.state.client.workspace.home
    events = home / "tables" / "events.csv"
    with fresh.client(KEY_BETA) as http:
        count = {"sql": "SELECT count(*) AS n FROM events"}
        assert http.post("/api/sql", json=count).json()["results"] == [{"n": 21}]
        events.write_bytes(events.read_bytes() + b'EVT-999,"never closed\n')
        failed = http.post("/api/tables/reload", json={"table": "events"})
        assert failed.status_code == 422, failed.text
        error = failed.json()["error"]
        assert error["code"] == "reload_failed"
        assert "テーブル「events」を読み込めません" in error["message"]
        assert "前に読み込んだ内容のまま使います" in error["message"]
        assert str(home) not in failed.text and "tansaku-tables-" not in failed.text
        assert error["tables"][0] == {
            "name": "events",
            "reloaded": False,
            "rows": None,
            "error": error["message"],
        }
        assert http.post("/api/sql", json=count).json()["results"] == [{"n": 21}]


def test_reload_refuses_what_it_cannot_do(fresh) -> None:
    with fresh.client(KEY_ALPHA) as http:
        unknown = http.post("/api/tables/reload", json={"table": "nope"})
        assert unknown.status_code == 404
        assert unknown.json()["error"]["code"] == "table_not_found"
        assert "テーブル「nope」は登録されていません" in unknown.json()["error"]["message"]
        for body in ({"table": 3}, {"tables": ["stores"]}, [1]):
            bad = http.post("/api/tables/reload", json=body)
            assert bad.status_code == 422 and "error" in bad.json(), body
    with fresh.client() as anonymous:
        assert anonymous.post("/api/tables/reload").status_code == 401
    with fresh.client("tsk_wrong_key") as wrong:
        assert wrong.post("/api/tables/reload").status_code == 401


def test_the_audit_log_names_the_team(fresh) -> None:
    home = fresh.state.client.workspace.home
    with fresh.client(KEY_BETA) as http:
        assert http.post("/api/sql", json=COUNT).status_code == 200
        assert http.post("/api/sql", json={"sql": "DELETE FROM stores"}).status_code == 400
    lines = (home / "logs" / "sql-audit.jsonl").read_text(encoding="utf-8").splitlines()
    entries = [json.loads(line) for line in lines]
    assert [(e["team"], e["tool"], e["rows"]) for e in entries[-2:]] == [
        ("beta", "sql", 1),
        ("beta", "sql", None),
    ]
    assert entries[-1]["refused"] == "SELECT文以外(DELETE)は実行できません"

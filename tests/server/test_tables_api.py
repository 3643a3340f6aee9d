"""Tables over the API: the registry, sandboxed SQL (accepted, rejected, failed) and the daily
report statistics, the same JSON as ``tansaku sql/stats --json``."""

from __future__ import annotations

import pytest

from .support import KEY_ALPHA

pytestmark = pytest.mark.integration


def test_tables_sql_and_stats(live):
    with live.client(KEY_ALPHA) as http:
        tables = {t["name"]: t for t in http.get("/api/tables").json()["tables"]}
        assert {"stores", "events", "daily_reports"} <= set(tables)
        assert tables["stores"]["rows"] > 0
        ok = http.post(
            "/api/sql",
            json={"sql": "SELECT store_name FROM stores WHERE pets_allowed = 'TRUE'"},
        )
        assert ok.status_code == 200, ok.text
        assert ok.json()["count"] == len(ok.json()["results"]) > 0
        for sql in (
            "DROP TABLE stores",
            "SELECT * FROM read_csv('/etc/passwd')",
            "SELECT 1; SELECT 2",
        ):
            r = http.post("/api/sql", json={"sql": sql})
            assert r.status_code == 400 and r.json()["error"]["code"] == "sql_rejected", sql
        failed = http.post("/api/sql", json={"sql": "SELECT no_such_column FROM stores"})
        assert failed.status_code == 400
        assert http.post("/api/sql", json={"sql": "SELECT 1", "tool": "無い"}).status_code == 400
        claims = http.get(
            "/api/stats/claims", params={"period": "先月", "now": "2025-12-11", "store": "新宿店"}
        )
        assert claims.status_code == 200, claims.text
        data = claims.json()
        assert data["period"]["start_date"] == "2025-11-01"
        assert data["period_expression"] == "先月"
        assert data["store"] == "新宿店"
        sales = http.get("/api/stats/sales", params={"from": "2025-11-01", "to": "2025-11-30"})
        assert sales.status_code == 200 and sales.json()["summary"]["report_count"] > 0
        compare = http.get(
            "/api/stats/compare",
            params={
                "metric": "sales",
                "current_start": "2025-11-01",
                "current_end": "2025-11-30",
                "previous_start": "2025-10-01",
                "previous_end": "2025-10-31",
            },
        )
        assert compare.status_code == 200 and "comparison" in compare.json()
        for params in (
            {"period": "来世紀"},
            {"period": "先月", "from": "2025-11-01"},
            {"from": "去年"},
            {"now": "きのう"},
        ):
            r = http.get("/api/stats/cash", params=params)
            assert r.status_code == 400, (params, r.text)
        assert http.get("/api/stats/compare", params={"metric": "sales"}).status_code == 400


def test_no_tables_registered_is_404(fresh):
    fresh.state.client.workspace.tables_file.unlink()
    with fresh.client(KEY_ALPHA) as http:
        r = http.post("/api/sql", json={"sql": "SELECT 1"})
        assert r.status_code == 404 and r.json()["error"]["code"] == "no_tables"
        assert http.get("/api/stats/claims").status_code == 404

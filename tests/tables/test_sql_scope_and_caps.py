"""Issue 11's SQL regressions: scope decided on what DuckDB binds, results capped as a whole,
degraded workers recycled. Real DuckDB, real worker processes, the demo tables."""

from __future__ import annotations

import dataclasses
import json

import pytest

from tansaku.tables import TableDatabase, sql_tool
from tansaku.tables.bound import OutOfScope, check_plan
from tansaku.tables.results import SqlRejected, SqlResults


@pytest.fixture(scope="module")
def stores(db):
    return sql_tool(db, "search_stores")


def _refused(outcome) -> str:
    assert isinstance(outcome, SqlRejected), outcome
    return outcome.error


def test_recursive_cte_named_after_hidden_table_is_refused(stores) -> None:
    sql = (
        "WITH RECURSIVE daily_reports AS (SELECT * FROM daily_reports) SELECT * FROM daily_reports"
    )
    assert "daily_reports" in _refused(stores.run(sql))


def test_recursive_cte_counting_a_hidden_table_is_refused(stores) -> None:
    # the optimized plan answers count(*) from statistics without a scan: the check reads the
    # unoptimized one
    sql = "WITH RECURSIVE events AS (SELECT count(*) AS n FROM events) SELECT n FROM events"
    _refused(stores.run(sql))


@pytest.mark.parametrize(
    "catalog", ["pg_settings", "duckdb_tables", "duckdb_settings", "information_schema.tables"]
)
def test_catalog_pg_settings_is_refused(stores, catalog) -> None:
    alias = catalog.split(".")[-1]
    sql = f"WITH RECURSIVE {alias} AS (SELECT * FROM {catalog}) SELECT * FROM {alias}"
    outcome = stores.run(sql)  # refused by the plan check, or by DuckDB's binder itself
    assert "results" not in outcome.to_dict(), outcome
    assert "/" not in json.dumps(outcome.to_dict(), ensure_ascii=False)  # no path leaks


def test_legitimate_ctes_and_recursion_still_run(stores) -> None:
    ok = stores.run(
        "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 3), "
        "s AS (SELECT store_name FROM stores) SELECT count(*) AS c FROM s, n"
    )
    assert isinstance(ok, SqlResults) and ok.results[0]["c"] > 0


def test_plan_check_refuses_unknown_operators() -> None:
    plan = [{"name": "PROJECTION", "children": [{"name": "READ_CSV", "extra_info": {}}]}]
    with pytest.raises(OutOfScope, match="read_csv"):
        check_plan(plan, ["stores"])
    scan = [{"name": "SEQ_SCAN", "extra_info": {"Table": "memory.main.stores"}}]
    assert check_plan(scan, ["stores"]) == {"stores"}
    other = [{"name": "SEQ_SCAN", "extra_info": {"Table": "other.main.stores"}}]
    with pytest.raises(OutOfScope):
        check_plan(other, ["stores"])


def test_range_3m_result_is_capped(stores) -> None:
    outcome = stores.run("SELECT range(0, 3000000) AS r")
    assert isinstance(outcome, SqlResults) and outcome.truncated
    data = outcome.to_dict()
    size = len(json.dumps(data, ensure_ascii=False))
    assert size < 60_000 and data["truncated"] is True and "省略" in data["notice"]
    assert data["results"][0]["r"][-1].startswith("…(")


def test_long_string_list_is_capped_as_a_whole(stores) -> None:
    sql = "SELECT list_transform(range(0, 1000), x -> repeat('あ', 3000)) AS l FROM stores"
    data = stores(sql)
    assert data["truncated"] is True
    assert len(json.dumps(data, ensure_ascii=False)) < 60_000


def test_small_results_are_not_marked(stores) -> None:
    data = stores("SELECT store_name FROM stores ORDER BY store_id LIMIT 2")
    assert "truncated" not in data and data["count"] == 2


@pytest.fixture
def small_db(demo_config):
    sandbox = dataclasses.replace(demo_config.sandbox, memory_limit="64MB", timeout_seconds=5.0)
    with TableDatabase(dataclasses.replace(demo_config, sandbox=sandbox)) as database:
        yield database


def test_worker_recycled_after_oom(small_db) -> None:
    worker = small_db._backend
    first = worker._proc.pid
    tool = sql_tool(small_db, "search_stores")
    failed = tool.run(
        "SELECT count(*) FROM (SELECT repeat('x', 1000) || i::VARCHAR AS s "
        "FROM (SELECT unnest(range(0, 2000000)) AS i) ORDER BY s)"
    )
    assert "Out of Memory" in failed.to_dict()["error"]
    assert worker.recycled == 1
    after = tool.run("SELECT store_name FROM stores ORDER BY store_id LIMIT 1")
    assert isinstance(after, SqlResults) and after.count == 1
    assert worker._proc.pid != first


def test_worker_kept_after_an_ordinary_error(small_db) -> None:
    worker = small_db._backend
    first = worker._proc.pid
    tool = sql_tool(small_db, "search_stores")
    assert "error" in tool("SELECT no_such_column FROM stores")
    assert worker.recycled == 0 and worker._proc.pid == first

"""A tool's scope is decided on what DuckDB binds, not on the names in the text.

Three walls, each tested on its own: the sqlglot check resolves CTE names the way DuckDB does;
a tool's query runs in a database that holds only the tool's tables; DuckDB's plan of it may
scan nothing else and use no catalog. Real DuckDB, the demo tables, both isolation modes.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from tansaku.tables import (
    QueryFailed,
    QueryRejected,
    SqlResults,
    TableDatabase,
    all_tables_tool,
    check_sql,
    sql_tool,
)
from tansaku.tables.bound import OutOfScope, check_plan
from tansaku.tables.results import SqlRejected

HIDDEN_RECURSIVE = (
    "WITH RECURSIVE daily_reports AS (SELECT * FROM daily_reports) SELECT * FROM daily_reports"
)


@pytest.fixture(scope="module")
def stores(db):
    return sql_tool(db, "search_stores")


@pytest.fixture(scope="module", params=["process", "inline"])
def any_db(request, demo_config):
    sandbox = dataclasses.replace(demo_config.sandbox, isolation=request.param)
    with TableDatabase(dataclasses.replace(demo_config, sandbox=sandbox)) as database:
        yield database


def _refused(outcome) -> str:
    assert isinstance(outcome, SqlRejected), outcome
    return outcome.error


def _never_runs(db: TableDatabase, sql: str, allowed: list[str]) -> Exception:
    """``sql`` sent past the sqlglot check: it must fail or be refused, never answer."""
    with pytest.raises((QueryRejected, QueryFailed)) as caught:
        db.execute(sql, max_rows=5, allowed=allowed)
    return caught.value


# --- the reported attacks, through the tool --------------------------------------------------


def test_recursive_cte_named_after_hidden_table_is_refused(stores) -> None:
    assert "daily_reports" in _refused(stores.run(HIDDEN_RECURSIVE))


def test_recursive_cte_counting_a_hidden_table_is_refused(stores) -> None:
    # the optimized plan answers count(*) from statistics without a scan
    sql = "WITH RECURSIVE events AS (SELECT count(*) AS n FROM events) SELECT n FROM events"
    _refused(stores.run(sql))


@pytest.mark.parametrize(
    "catalog",
    ["pg_settings", "duckdb_tables", "duckdb_settings", "information_schema.tables", "pg_tables"],
)
def test_catalog_pg_settings_is_refused(stores, catalog) -> None:
    alias = catalog.split(".")[-1]
    sql = f"WITH RECURSIVE {alias} AS (SELECT * FROM {catalog}) SELECT * FROM {alias}"
    outcome = stores.run(sql)
    assert "results" not in outcome.to_dict(), outcome
    assert "/" not in json.dumps(outcome.to_dict(), ensure_ascii=False)  # no path leaks


def test_legitimate_ctes_and_recursion_still_run(stores) -> None:
    ok = stores.run(
        "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 3), "
        "s AS (SELECT store_name FROM stores) SELECT count(*) AS c FROM s, n"
    )
    assert isinstance(ok, SqlResults) and ok.results == ({"c": 84},)


# --- wall 1: the sqlglot check resolves names as DuckDB does ------------------------------------


@pytest.mark.parametrize(
    ("sql", "hidden"),
    [
        (HIDDEN_RECURSIVE, "daily_reports"),
        # the anchor (left) of a recursive UNION is the real table, not the CTE
        ("WITH RECURSIVE h AS (SELECT v FROM h UNION ALL SELECT 1) SELECT * FROM h", "h"),
        # (A ∪ B) ∪ C: only C is the recursive term
        (
            "WITH RECURSIVE h AS (SELECT 1 AS v UNION ALL SELECT v FROM h "
            "UNION ALL SELECT 2) SELECT * FROM h",
            "h",
        ),
        # a later sibling is not visible, RECURSIVE or not
        (
            "WITH RECURSIVE a AS (SELECT * FROM pg_settings), pg_settings AS (SELECT 1) "
            "SELECT * FROM a",
            "pg_settings",
        ),
        # INTERSECT is not recursion: the name is the real table
        (
            "WITH RECURSIVE h AS (SELECT 1 AS v INTERSECT SELECT v FROM h) SELECT * FROM h",
            "h",
        ),
    ],
)
def test_recursive_cte_visibility_mirrors_duckdb(sql, hidden) -> None:
    with pytest.raises(QueryRejected, match=f"「{hidden}」"):
        check_sql(sql, allowed_tables=["stores"], max_rows=10)


@pytest.mark.parametrize(
    "sql",
    [
        "WITH RECURSIVE h AS (SELECT 1 AS v UNION ALL SELECT v + 1 FROM h WHERE v < 3) "
        "SELECT * FROM h",
        "WITH RECURSIVE h AS ((SELECT 1 AS v) UNION ALL (SELECT v + 1 FROM h WHERE v < 3)) "
        "SELECT * FROM h",
        "WITH RECURSIVE h AS (SELECT 1 AS v UNION ALL SELECT 2 UNION ALL "
        "SELECT v + 1 FROM h WHERE v < 3) SELECT * FROM h",
        "WITH RECURSIVE x AS (SELECT 1 AS v), h AS (SELECT v FROM x UNION ALL "
        "SELECT v + 1 FROM h WHERE v < 3) SELECT * FROM h",
    ],
)
def test_recursive_ctes_still_pass_the_check(sql, stores) -> None:
    check_sql(sql, allowed_tables=["stores"], max_rows=10)
    assert isinstance(stores.run(sql), SqlResults)


# --- wall 2: the scope's database holds only the scope's tables ---------------------------------


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT * FROM daily_reports",
        HIDDEN_RECURSIVE,
        "SELECT * FROM (DESCRIBE daily_reports)",  # bound at bind time into a CHUNK_GET
        "SELECT count(*) FROM memory.main.events",
    ],
)
def test_scope_database_holds_only_the_tools_tables(any_db, sql) -> None:
    error = _never_runs(any_db, sql, ["stores"])
    assert "新宿店" not in str(error) and "report_id" not in str(error)


def test_each_tool_sees_its_own_tables(any_db) -> None:
    stores = any_db.execute("SELECT count(*) FROM stores", allowed=["stores"])
    events = any_db.execute("SELECT count(*) FROM events", allowed=["events"])
    assert (stores.rows, events.rows) == (((28,),), ((21,),))
    both = any_db.execute(
        "SELECT count(*) FROM stores, events", allowed=["stores", "events"]
    )  # a scope not in [[tools]] gets its own database on first use
    assert both.rows == ((28 * 21,),)
    _never_runs(any_db, "SELECT count(*) FROM stores", ["events"])


# --- wall 3: DuckDB's plan may scan only the scope and use no catalog ---------------------------


@pytest.mark.parametrize(
    ("sql", "refused"),
    [
        ("SELECT * FROM pg_settings", "duckdb_settings"),
        ("SELECT * FROM duckdb_settings()", "duckdb_settings"),
        ("SELECT table_name, sql FROM duckdb_tables()", "duckdb_tables"),
        ("SELECT * FROM information_schema.tables", "duckdb_"),
        ("SELECT (SELECT max(setting) FROM pg_settings) AS s FROM stores", "duckdb_settings"),
        ("SELECT * FROM range(3)", "range"),
    ],
)
def test_plan_check_refuses_catalogs_past_the_sqlglot_check(any_db, sql, refused) -> None:
    error = _never_runs(any_db, sql, ["stores"])
    assert isinstance(error, QueryRejected) and refused in error.reason


def test_plan_check_refuses_other_tables_on_the_shared_database(any_db) -> None:
    # the whole-registry scope runs on the shared database: the plan check is its wall
    error = _never_runs(any_db, "SELECT * FROM (DESCRIBE daily_reports)", ["stores", "events"])
    assert isinstance(error, QueryFailed)  # a scope of two: its own database, no such table
    everything = list(any_db.config.table_names)
    described = _never_runs(any_db, "SELECT * FROM (DESCRIBE daily_reports)", everything)
    assert isinstance(described, QueryRejected) and "chunk_get" in described.reason


def test_plan_check_refuses_unknown_operators() -> None:
    plan = [{"name": "PROJECTION", "children": [{"name": "READ_CSV", "extra_info": {}}]}]
    with pytest.raises(OutOfScope, match="read_csv"):
        check_plan(plan, ["stores"])
    with pytest.raises(OutOfScope, match="chunk_get"):
        check_plan([{"name": "CHUNK_GET"}], ["stores"])
    scan = [{"name": "SEQ_SCAN", "extra_info": {"Table": "memory.main.stores"}}]
    assert check_plan(scan, ["stores"]) == {"stores"}
    other = [{"name": "SEQ_SCAN", "extra_info": {"Table": "other.main.stores"}}]
    with pytest.raises(OutOfScope):
        check_plan(other, ["stores"])


def test_settings_show_no_home_paths(any_db) -> None:
    # pg_settings is refused to tools; even to trusted SQL the settings name no home path
    rows = any_db.execute("SELECT name, value FROM duckdb_settings()").rows
    home = str(Path.home())
    assert not [(n, v) for n, v in rows if home in str(v)]


def test_owner_sql_tool_still_reads_every_table(db) -> None:
    tool = all_tables_tool(db)
    ok = tool.run("SELECT count(*) AS n FROM daily_reports")
    assert isinstance(ok, SqlResults) and ok.results[0]["n"] > 0

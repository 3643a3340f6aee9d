"""The store-search design's SQL runs as written: its eight examples (and the JSON-column and
agent examples beside them) say ``FROM 'stores.csv'``, the file of the registered table
``stores``. The validator rewrites that name on the AST to the table; nothing else that looks
like a file or a path gets through. Through the SQL tool (``search_stores``, ``sql``), the
agent's toolset, and ``tansaku sql`` — in-process and as fresh processes, as a user runs it —
over the demo tables."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest
from tables_support import tansaku
from typer.testing import CliRunner

import tansaku as tansaku_lib
from tansaku.demo.tables import install_demo_tables
from tansaku.tables import (
    QueryRejected,
    TableDatabase,
    check_sql,
    load_tables_config,
    sql_tool,
    write_tables_config,
)
from tansaku.tables.validate import file_aliases
from tansaku.testing import HashEmbedder
from tansaku.tools import toolset

# Verbatim from the design (5.2 【検索例】 1–8), whitespace and line breaks included.
DESIGN_EXAMPLES = [
    "SELECT * FROM 'stores.csv' WHERE store_name LIKE '%ヒルズ%'",
    "SELECT * FROM 'stores.csv' WHERE category = 'retail'",
    "SELECT store_name, address, parking FROM 'stores.csv'\n"
    "   WHERE parking LIKE '%\"available\": true%'",
    "SELECT store_name, description, target_audience FROM 'stores.csv'\n"
    "   WHERE target_audience LIKE '%ファミリー%'",
    "SELECT store_name, phone, private_room FROM 'stores.csv'\n"
    "   WHERE private_room LIKE '%\"available\": true%'",
    "SELECT * FROM 'stores.csv' WHERE address LIKE '%麻布台%'",
    "SELECT * FROM 'stores.csv' WHERE Biz_Entertainment_Available = 'TRUE'",
    "SELECT * FROM 'stores.csv' WHERE pets_allowed = 'TRUE'",
]
# The design's other SQL: the JSON columns (補足) and what an agent is expected to write.
MORE_EXAMPLES = [
    "SELECT * FROM 'stores.csv' WHERE private_room LIKE '%\"available\": true%' AND "
    "private_room LIKE '%\"capacity\": 2%'",
    "SELECT * FROM 'stores.csv' WHERE target_audience LIKE '%ファミリー%' LIMIT 10",
    "SELECT store_name, address, parking FROM 'stores.csv' WHERE parking LIKE "
    "'%\"available\": true%' LIMIT 10",
    "SELECT * FROM 'stores.csv' WHERE category = 'cafe' LIMIT 10",
    "SELECT store_name, store_exclusive_events FROM 'stores.csv' WHERE "
    "store_exclusive_events != '' LIMIT 10",
    "SELECT store_name, category FROM 'stores.csv' LIMIT 3",
    "SELECT * FROM 'stores.csv' LIMIT 100",
]
ALL = DESIGN_EXAMPLES + MORE_EXAMPLES


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    home = tmp_path_factory.mktemp("design-sql")
    install_demo_tables(home)
    config = load_tables_config(home / "tables.toml")
    inline = replace(config.sandbox, isolation="inline")
    write_tables_config(replace(config, sandbox=inline), home / "tables.toml")
    return home


def _by_name(sql: str) -> str:
    return sql.replace("'stores.csv'", "stores")


@pytest.mark.parametrize("sql", ALL)
def test_the_design_sql_runs_through_the_tools(db, sql: str) -> None:
    for tool in ("search_stores", "sql"):
        outcome = sql_tool(db, tool)(sql)
        assert "error" not in outcome, (tool, outcome)
        assert outcome == sql_tool(db, tool)(_by_name(sql))  # the same rows as by its name
        assert outcome["count"] <= 10
        assert "stores.csv" not in outcome.get("sql", "")


def test_the_eight_examples_find_stores(db) -> None:
    counts = [sql_tool(db, "search_stores")(sql)["count"] for sql in DESIGN_EXAMPLES]
    assert sum(1 for n in counts if n > 0) >= 6, counts  # the demo data has most kinds
    capped = sql_tool(db, "search_stores")("SELECT * FROM 'stores.csv' LIMIT 100")
    assert capped["count"] == 10


def test_tansaku_sql_runs_them_as_written(home: Path, monkeypatch) -> None:
    from tansaku.cli.main import app

    monkeypatch.setenv("TANSAKU_HOME", str(home))
    runner = CliRunner()
    for sql in ALL:
        result = runner.invoke(app, ["sql", sql, "--json"])
        assert result.exit_code == 0, (sql, result.output)
        assert json.loads(result.stdout)["count"] >= 0
        named = runner.invoke(app, ["sql", sql, "--tool", "search_stores", "--json"])
        assert named.exit_code == 0 and named.stdout == result.stdout
    human = runner.invoke(app, ["sql", DESIGN_EXAMPLES[7]])
    assert human.exit_code == 0 and "件" in human.stdout


def test_only_a_registered_tables_own_file_name_is_an_alias(db, demo_config) -> None:
    files = {t.name: str(t.path) for t in demo_config.tables}
    checked = check_sql(
        "SELECT s.store_name FROM 'stores.csv' AS s JOIN \"events.csv\" e ON s.store_id = e.venue",
        allowed_tables=("stores", "events"),
        max_rows=10,
        table_files=files,
    )
    assert checked.tables == {"stores", "events"}
    assert "FROM stores AS s JOIN events AS e" in checked.sql
    refused = [
        "SELECT * FROM 'tables/stores.csv'",  # a path, not the file name
        "SELECT * FROM '/etc/passwd'",
        "SELECT * FROM 'daily_reports.csv'",  # registered, but not this tool's
        "SELECT * FROM read_csv('stores.csv')",  # a table function stays one
        "SELECT * FROM 'stores.parquet'",
        "SELECT * FROM main.'stores.csv'",
    ]
    for sql in refused:
        with pytest.raises(QueryRejected):
            check_sql(sql, allowed_tables=("stores",), max_rows=10, table_files=files)
    with pytest.raises(QueryRejected):  # no files given: no aliases
        check_sql("SELECT * FROM 'stores.csv'", allowed_tables=("stores",), max_rows=10)
    cte = check_sql(  # a CTE of that name is the CTE, not the table
        'WITH "stores.csv" AS (SELECT 1 AS x) SELECT x FROM "stores.csv"',
        allowed_tables=("stores",),
        max_rows=10,
        table_files=files,
    )
    assert cte.tables == frozenset()
    tool = sql_tool(db, "search_events")("SELECT * FROM 'stores.csv'")
    assert "error" in tool


def test_a_file_name_two_tables_share_names_neither() -> None:
    aliases = file_aliases({"a": "/x/data.csv", "b": "/y/DATA.csv", "stores": "t/stores.csv"})
    assert aliases == {"stores.csv": "stores"}


def test_tansaku_sql_runs_the_eight_in_fresh_processes(home: Path) -> None:
    """Each of the eight as its own ``tansaku sql`` process, as the owner (``sql``) types it
    and as the agent's tool (``search_stores``) would run it."""
    for number, sql in enumerate(DESIGN_EXAMPLES, start=1):
        tool = "search_stores" if number % 2 else "sql"
        done = tansaku(home, "sql", sql, "--tool", tool, "--json")
        assert done.returncode == 0, (number, done.stderr)
        out = json.loads(done.stdout)
        assert "error" not in out and out["count"] == len(out["results"]) <= 10, (number, out)
    human = tansaku(home, "sql", DESIGN_EXAMPLES[7])
    assert human.returncode == 0 and human.stdout.rstrip().endswith("件"), human.stderr


@pytest.fixture(scope="module")
def agent_tools(home: Path):
    """The agent's toolset over the demo tables, as ``tansaku ask`` builds it."""
    client = tansaku_lib.connect(home, embedder=HashEmbedder(32))
    with TableDatabase(load_tables_config(home / "tables.toml")) as db:
        yield toolset(client, team="default", tables=db.for_team("default"))
    client.close()


def test_the_agents_tool_runs_the_eight(agent_tools, db) -> None:
    for sql in DESIGN_EXAMPLES:
        out = json.loads(agent_tools.call("search_stores", {"sql_query": sql}))
        assert "error" not in out, (sql, out)
        assert out["count"] == sql_tool(db, "search_stores")(sql)["count"]


def test_the_designs_own_checks_through_the_agents_tool(agent_tools) -> None:
    """Steps 2–4 of the design: what is refused, the LIMIT, the zero-row message."""

    def call(sql: str) -> dict:
        out: dict = json.loads(agent_tools.call("search_stores", {"sql_query": sql}))
        return out

    assert "error" not in call("SELECT * FROM 'stores.csv' LIMIT 5")
    for refused in (
        "DROP TABLE stores",
        "UPDATE 'stores.csv' SET store_name='test'",
        "SELECT * FROM 'stores.csv'; DROP TABLE stores;",
    ):
        assert call(refused)["error"].startswith("SQLを実行できません"), refused
    assert call("SELECT store_name FROM 'stores.csv'")["count"] == 10
    assert call("SELECT store_name FROM 'stores.csv' LIMIT 3")["count"] == 3
    assert call("SELECT store_name FROM 'stores.csv' LIMIT 100")["count"] == 10
    assert call("SELECT * FROM 'stores.csv' WHERE store_name = '存在しない店舗'") == {
        "results": [],
        "count": 0,
        "message": "検索条件に一致する店舗が見つかりませんでした",
    }

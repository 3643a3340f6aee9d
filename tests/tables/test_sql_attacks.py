"""The attack corpus: every query is rejected or stopped — none reads a file, writes, or hangs.

A real secret file sits next to the tables; its content must never appear in any outcome. After
the corpus ran, the workspace folder and the tables are exactly as before.
"""

from __future__ import annotations

import dataclasses
import json
import time
import uuid
from pathlib import Path

import pytest

from tansaku.demo.tables import install_demo_tables
from tansaku.tables import (
    QueryFailed,
    SqlFailed,
    SqlRejected,
    TableDatabase,
    all_tables_tool,
    load_tables_config,
    sql_tool,
)

TIMEOUT = 1.0
# A hang detector, not a speed figure: the timer, the worker's grace period (1 s) and a new
# worker take a few seconds on a busy 2-core machine (4.3 s seen under load), a query the
# sandbox failed to stop runs on (one scalar bomb ran 83 s past a 1 s timer before the worker
# existed). What stopped a bomb is asserted by its outcome, not by the clock.
HANG = TIMEOUT + 20.0
SECRET = f"TOP-SECRET-{uuid.uuid4().hex}"

ATTACKS: list[tuple[str, str]] = [
    # --- state that outlives the query: setseed() fixes every later random() of the connection
    ("setseed", "SELECT setseed(0.42)"),
    ("setseed_upper_in_where", "SELECT store_name FROM stores WHERE SETSEED(0.1) IS NULL"),
    ("setseed_in_cte", "WITH s AS (SELECT setseed(0.5) AS x) SELECT random() FROM s"),
    # --- file reads in every spelling
    ("read_text", "SELECT * FROM read_text('{secret}')"),
    ("read_text_upper", "SELECT * FROM READ_TEXT('{secret}')"),
    ("read_text_quoted_name", "SELECT * FROM \"read_text\"('{secret}')"),
    ("read_csv", "SELECT * FROM read_csv('{secret}')"),
    ("read_csv_auto", "SELECT * FROM read_csv_auto('{secret}', header = false)"),
    ("read_blob", "SELECT * FROM read_blob('{secret}')"),
    ("read_json", "SELECT * FROM read_json_auto('{secret}')"),
    ("read_parquet", "SELECT * FROM read_parquet('{secret}')"),
    ("string_table", "SELECT * FROM '{secret}'"),
    ("quoted_path_table", 'SELECT * FROM "{secret}"'),
    # a registered table's own file name ('stores.csv') is that table (test_design_sql.py);
    # any other file name is a file read
    ("csv_name_table", "SELECT * FROM 'secret.csv'"),
    ("txt_name_table", "SELECT * FROM 'secret.txt'"),
    ("relative_path_table", "SELECT * FROM 'tables/stores.csv'"),
    ("glob", "SELECT * FROM glob('{home}/*')"),
    ("sniff_csv", "SELECT * FROM sniff_csv('{secret}')"),
    ("parquet_metadata", "SELECT * FROM parquet_metadata('{secret}')"),
    ("read_in_join", "SELECT * FROM stores, read_text('{secret}')"),
    ("read_in_positional_join", "SELECT * FROM stores POSITIONAL JOIN read_text('{secret}')"),
    ("read_in_lateral", "SELECT * FROM stores, LATERAL (SELECT * FROM read_blob('{secret}'))"),
    (
        "read_in_where_subquery",
        "SELECT * FROM stores WHERE store_id IN (SELECT content FROM read_text('{secret}'))",
    ),
    ("read_in_scalar_subquery", "SELECT (SELECT content FROM read_text('{secret}')) AS x"),
    ("read_in_cte", "WITH s AS (SELECT * FROM read_text('{secret}')) SELECT * FROM s"),
    (
        "read_in_union",
        "SELECT store_id FROM stores UNION ALL SELECT content FROM read_text('{secret}')",
    ),
    ("read_as_scalar", "SELECT read_text('{secret}')"),
    ("read_dot_call", "SELECT '{secret}'.read_text()"),
    ("query_function", "SELECT * FROM query('SELECT * FROM read_text(''{secret}'')')"),
    ("query_table_function", "SELECT * FROM query_table('stores')"),
    ("json_execute_sql", "SELECT * FROM json_execute_serialized_sql('{{}}')"),
    # --- system information
    ("duckdb_settings", "SELECT * FROM duckdb_settings()"),
    ("duckdb_tables_view", "SELECT * FROM duckdb_tables"),
    ("information_schema", "SELECT * FROM information_schema.tables"),
    ("qualified_system_table", "SELECT * FROM system.main.duckdb_settings"),
    ("current_setting", "SELECT current_setting('home_directory')"),
    (
        "current_setting_in_where",
        "SELECT * FROM stores WHERE store_id = current_setting('temp_directory')",
    ),
    ("getenv", "SELECT getenv('HOME')"),
    ("getvariable", "SELECT getvariable('x')"),
    ("write_log", "SELECT write_log('x')"),
    ("nextval", "SELECT nextval('seq')"),
    # --- COPY / ATTACH / EXPORT / INSTALL / LOAD
    ("copy_to", "COPY stores TO '{home}/out.csv'"),
    ("copy_query_to", "COPY (SELECT * FROM stores) TO '{home}/out.parquet' (FORMAT parquet)"),
    ("copy_from", "COPY stores FROM '{secret}'"),
    ("attach", "ATTACH '{home}/x.db' AS x"),
    ("attach_memory", "ATTACH ':memory:' AS m"),
    ("detach", "DETACH memory"),
    ("export_database", "EXPORT DATABASE '{home}/export'"),
    ("import_database", "IMPORT DATABASE '{home}'"),
    ("install", "INSTALL httpfs"),
    ("force_install", "FORCE INSTALL httpfs FROM community"),
    ("load", "LOAD httpfs"),
    # --- PRAGMA / SET / CALL
    ("pragma", "PRAGMA table_info('stores')"),
    ("pragma_function", "SELECT * FROM pragma_table_info('stores')"),
    ("set_external_access", "SET enable_external_access = true"),
    ("set_global_lock", "SET GLOBAL lock_configuration = false"),
    ("reset", "RESET memory_limit"),
    ("set_variable", "SET VARIABLE x = 1"),
    ("call", "CALL pragma_version()"),
    ("use", "USE memory"),
    ("checkpoint", "CHECKPOINT"),
    ("begin", "BEGIN TRANSACTION"),
    # --- stacked statements and statements hidden after comments
    ("stacked_drop", "SELECT 1; DROP TABLE stores"),
    ("stacked_copy", "SELECT * FROM stores; COPY stores TO '{home}/o.csv'"),
    ("stacked_selects", "SELECT 1;SELECT 2"),
    ("hidden_after_line_comment", "SELECT * FROM stores -- comment\n; DROP TABLE stores"),
    ("hidden_after_block_comment", "SELECT * FROM stores /* ; */ ; DELETE FROM stores"),
    ("comment_then_drop", "/* just a comment */ DROP TABLE stores"),
    ("comment_then_attach", "SELECT 1 -- ;\n; ATTACH '{home}/y.db'"),
    # --- writes, also nested in CTEs and subqueries
    ("cte_delete", "WITH d AS (DELETE FROM stores RETURNING *) SELECT * FROM d"),
    (
        "cte_insert",
        "WITH i AS (INSERT INTO stores (store_id) VALUES ('X') RETURNING *) SELECT * FROM i",
    ),
    ("cte_update", "WITH u AS (UPDATE stores SET store_name = 'x' RETURNING *) SELECT * FROM u"),
    (
        "subquery_delete",
        "SELECT * FROM stores WHERE store_id IN "
        "(WITH d AS (DELETE FROM events RETURNING event_id) SELECT * FROM d)",
    ),
    ("create_table_as", "CREATE TABLE t AS SELECT * FROM stores"),
    ("create_or_replace", "CREATE OR REPLACE TABLE stores AS SELECT 1 AS x"),
    ("select_into", "SELECT * INTO t2 FROM stores"),
    ("insert", "INSERT INTO stores SELECT * FROM stores"),
    ("update", "UPDATE stores SET store_name = 'hacked'"),
    ("delete", "DELETE FROM stores"),
    ("drop", "DROP TABLE stores"),
    ("alter", "ALTER TABLE stores RENAME TO s2"),
    ("truncate", "TRUNCATE stores"),
    ("create_macro", "CREATE MACRO m(x) AS x"),
    ("create_view", "CREATE VIEW v AS SELECT * FROM stores"),
    ("create_secret", "CREATE SECRET s (TYPE s3, KEY_ID 'a', SECRET 'b')"),
    ("summarize", "SUMMARIZE stores"),
    ("describe", "DESCRIBE stores"),
    ("show", "SHOW TABLES"),
    ("explain_analyze", "EXPLAIN ANALYZE SELECT * FROM stores"),
    # --- unicode look-alikes and invisible characters
    ("fullwidth_select", "ＳＥＬＥＣＴ * FROM stores"),
    ("fullwidth_function", "SELECT * FROM ｒｅａｄ＿ｔｅｘｔ('{secret}')"),
    ("fullwidth_table", "SELECT * FROM ｓｔｏｒｅｓ"),
    ("fullwidth_quoted_table", 'SELECT * FROM "ｓｔｏｒｅｓ"'),
    ("fullwidth_semicolon", "SELECT * FROM stores；DROP TABLE stores"),
    ("zero_width_space", "SELECT * FROM read\u200b_text('{secret}')"),
    ("cyrillic_e", "SELECT * FROM r\u0435ad_text('{secret}')"),
    ("null_byte", "SELECT * FROM stores\u0000; DROP TABLE stores"),
    ("rtl_override", "SELECT * FROM stores WHERE 1 = 1 \u202e; DROP TABLE stores"),
    # --- CTE scoping tricks to smuggle in catalog names
    (
        "cte_scope_leak",
        "SELECT * FROM (WITH duckdb_settings AS (SELECT 1 AS x) "
        "SELECT * FROM duckdb_settings) t, duckdb_settings",
    ),
    (
        "cte_forward_reference",
        "WITH a AS (SELECT * FROM duckdb_secrets), duckdb_secrets AS (SELECT 1 AS x) "
        "SELECT * FROM a",
    ),
    # --- resource bombs: stopped by the timer, the memory limit or the worker kill
    (
        "cross_join_bomb",
        "SELECT count(*) FROM stores a, stores b, stores c, stores d, stores e, stores f, stores g",
    ),
    (
        "recursive_cte_bomb",
        "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) SELECT count(*) FROM r",
    ),
    (
        "recursive_fanout_bomb",
        "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n FROM r, stores) SELECT max(n) FROM r",
    ),
    ("range_table_bomb", "SELECT count(*) FROM range(1000000000000)"),
    ("series_scalar_bomb", "SELECT list_sum(generate_series(1, 1000000000))"),
    ("unnest_bomb", "SELECT sum(x) FROM (SELECT unnest(generate_series(1, 3000000000)) AS x)"),
    ("repeat_bomb", "SELECT length(repeat('x', 1000000000))"),
    (
        "repeat_cross_bomb",
        "SELECT max(length(repeat(a.description, 100000))) FROM stores a, stores b",
    ),
    (
        "string_agg_bomb",
        "SELECT length(string_agg(a.description || b.description || "
        "c.description, ',')) FROM stores a, stores b, stores c, stores d",
    ),
    ("levenshtein_bomb", "SELECT levenshtein(repeat('a', 60000), repeat('b', 60000))"),
    ("regex_bomb", "SELECT regexp_replace(repeat('a', 300000000), '(a*)*b', 'x')"),
    ("sleep", "SELECT sleep_ms(100000)"),
    ("pg_sleep", "SELECT pg_sleep(100)"),
    # --- oversized and malformed input
    ("too_long", "SELECT 1 AS x" + " " * 20_001),
    ("deep_nesting", "SELECT " + "(" * 3000 + "1" + ")" * 3000),
    ("not_sql", "ファミリー向けの店舗を教えて"),
    ("empty", "   "),
]


@pytest.fixture(scope="module")
def attack_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    home = tmp_path_factory.mktemp("attack-home")
    install_demo_tables(home)
    (home / "secret.txt").write_text(f"{SECRET}\n{SECRET},x\n", encoding="utf-8")
    return home


def _snapshot(home: Path) -> dict[str, tuple[int, int]]:
    return {
        str(p.relative_to(home)): (p.stat().st_size, p.stat().st_mtime_ns)
        for p in sorted(home.rglob("*"))
    }


@pytest.fixture(scope="module")
def attack_db(attack_home: Path):
    config = load_tables_config(attack_home / "tables.toml")
    config = dataclasses.replace(
        config, sandbox=dataclasses.replace(config.sandbox, timeout_seconds=TIMEOUT)
    )
    before = _snapshot(attack_home)
    with TableDatabase(config) as database:
        counts = {t: database.row_count(t) for t in config.table_names}
        names = database.execute("SELECT store_name FROM stores ORDER BY store_id").rows
        yield database
        # nothing was written, dropped or changed by the whole corpus
        assert {t: database.row_count(t) for t in config.table_names} == counts
        assert database.execute("SELECT store_name FROM stores ORDER BY store_id").rows == names
    assert _snapshot(attack_home) == before


def test_corpus_is_large_enough():
    assert len(ATTACKS) >= 40
    assert len({name for name, _ in ATTACKS}) == len(ATTACKS)


@pytest.mark.parametrize(("name", "template"), ATTACKS, ids=[n for n, _ in ATTACKS])
def test_attack_is_rejected_or_stopped(attack_db, attack_home, name, template):
    sql = template.format(secret=attack_home / "secret.txt", home=attack_home)
    tool = all_tables_tool(attack_db)  # the broadest tool: every registered table
    started = time.perf_counter()
    outcome = tool.run(sql)
    elapsed = time.perf_counter() - started
    assert isinstance(outcome, SqlRejected | SqlFailed), (name, outcome)
    dumped = json.dumps(outcome.to_dict(), ensure_ascii=False)
    assert SECRET not in dumped
    assert set(outcome.to_dict()) == {"error"}
    assert elapsed < HANG, f"{name} ran {elapsed:.2f}s: not stopped"


def test_bombs_are_stopped_not_rejected(attack_db):
    """The resource bombs are valid SELECTs: the sandbox, not the validator, has to stop them."""
    tool = all_tables_tool(attack_db)
    for name in ("cross_join_bomb", "recursive_cte_bomb", "series_scalar_bomb", "repeat_bomb"):
        sql = dict(ATTACKS)[name]
        outcome = tool.run(sql)
        assert isinstance(outcome, SqlFailed), name  # its time or memory limit
    # and the database still answers afterwards
    assert tool("SELECT count(*) AS n FROM stores")["results"] == [{"n": 28}]


def test_worker_is_killed_when_a_scalar_call_ignores_the_interrupt(attack_home):
    """One levenshtein() over long strings is a single scalar call: DuckDB's interrupt cannot
    stop it, so the parent kills the worker after the grace period and starts a new one."""
    config = load_tables_config(attack_home / "tables.toml")
    config = dataclasses.replace(
        config, sandbox=dataclasses.replace(config.sandbox, timeout_seconds=0.3)
    )
    with TableDatabase(config) as database:
        tool = all_tables_tool(database)
        started = time.perf_counter()
        outcome = tool.run("SELECT levenshtein(repeat('a', 60000), repeat('b', 60000)) AS d")
        elapsed = time.perf_counter() - started
        assert isinstance(outcome, SqlFailed) and outcome.timed_out
        assert "制限時間(0.3秒)" in outcome.error
        assert elapsed < HANG  # killed after its grace period: the restart below says so
        assert tool("SELECT count(*) AS n FROM events")["results"] == [{"n": 21}]
        assert database._backend.restarts == 1


def test_inline_mode_still_interrupts_joins(attack_home):
    config = load_tables_config(attack_home / "tables.toml")
    config = dataclasses.replace(
        config,
        sandbox=dataclasses.replace(config.sandbox, timeout_seconds=0.5, isolation="inline"),
    )
    with TableDatabase(config) as database:
        tool = all_tables_tool(database)
        started = time.perf_counter()
        outcome = tool.run(dict(ATTACKS)["cross_join_bomb"])
        assert isinstance(outcome, SqlFailed) and outcome.timed_out
        assert time.perf_counter() - started < HANG  # the bomb alone runs for minutes
        assert tool("SELECT count(*) AS n FROM stores")["results"] == [{"n": 28}]
        assert isinstance(tool.run("SELECT * FROM read_text('/etc/passwd')"), SqlRejected)


def test_rejections_explain_what_is_allowed(attack_db):
    out = all_tables_tool(attack_db)("SELECT * FROM read_text('/etc/passwd')")
    assert out["error"].startswith("SQLを実行できません: ")
    assert "SELECT文" in out["error"] and "stores" in out["error"]


@pytest.mark.parametrize(
    ("tool_name", "sql"),
    [
        ("search_stores", "SELECT * FROM events"),
        ("search_stores", "SELECT * FROM daily_reports"),
        ("search_stores", "SELECT s.store_name FROM stores s JOIN daily_reports d ON true"),
        ("search_events", "SELECT * FROM stores"),
        ("search_events", "WITH x AS (SELECT * FROM daily_reports) SELECT * FROM x"),
    ],
)
def test_tools_only_see_their_own_tables(attack_db, tool_name, sql):
    outcome = sql_tool(attack_db, tool_name).run(sql)
    assert isinstance(outcome, SqlRejected)
    assert "使えません" in outcome.error


@pytest.mark.parametrize(
    "raw",
    [
        "SELECT * FROM read_text('{secret}')",
        "SELECT * FROM read_csv('{secret}', header = false)",
        "SELECT * FROM '{secret}'",
        "SELECT * FROM glob('{home}/*')",
        "COPY stores TO '{home}/leak.csv'",
        "ATTACH '{home}/leak.db' AS leak",
        "INSTALL httpfs",
        "LOAD httpfs",
        "SET enable_external_access = true",
        "SET lock_configuration = false",
        "SET memory_limit = '100GB'",
    ],
)
def test_duckdb_lock_blocks_what_the_validator_would_catch(attack_db, attack_home, raw):
    """Defence in depth: SQL sent straight to the sandbox, skipping validation, still fails."""
    sql = raw.format(secret=attack_home / "secret.txt", home=attack_home)
    with pytest.raises(QueryFailed) as info:
        attack_db.execute(sql)
    assert SECRET not in str(info.value)


def test_writes_that_slip_through_are_rolled_back(attack_db):
    """DuckDB's lock does not stop CREATE/DELETE; the per-query rollback undoes them."""
    before = attack_db.row_count("stores")
    attack_db.execute("DELETE FROM stores")
    attack_db.execute("CREATE TABLE pwned AS SELECT 1 AS x")
    assert attack_db.row_count("stores") == before
    with pytest.raises(QueryFailed):
        attack_db.execute("SELECT * FROM pwned")


def test_setseed_is_refused_and_random_stays_unseeded(attack_db):
    """``setseed`` ran and seeded the shared connection: a later ``random()`` — any caller's —
    repeated the same value. Refused on the AST now, like the other functions with effects."""
    tool = all_tables_tool(attack_db)
    refused = tool.run("SELECT setseed(0.42) AS s")
    assert isinstance(refused, SqlRejected)
    assert "関数 setseed は使えません" in refused.error
    draws = {tool("SELECT random() AS r")["results"][0]["r"] for _ in range(3)}
    assert len(draws) == 3

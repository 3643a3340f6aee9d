"""Legitimate agent queries succeed; LIMIT, outcomes, JSON values and the tool description."""

from __future__ import annotations

import csv
import dataclasses
import json
from pathlib import Path

import pytest

from tansaku.tables import (
    SqlFailed,
    SqlRejected,
    SqlResults,
    TableDatabase,
    all_tables_tool,
    check_sql,
    search_table,
    sql_tool,
    sql_tools,
)

# The design's 8 examples (FROM 'stores.csv' becomes FROM stores), then the agent's everyday SQL.
DESIGN_EXAMPLES: list[tuple[str, str, str]] = [
    (
        "family",
        "search_stores",
        "SELECT * FROM stores WHERE target_audience LIKE '%ファミリー%' LIMIT 10",
    ),
    (
        "parking",
        "search_stores",
        "SELECT store_name, address, parking FROM stores "
        "WHERE parking LIKE '%\"available\": true%' LIMIT 10",
    ),
    (
        "private_room",
        "search_stores",
        "SELECT store_name, phone, private_room FROM stores "
        "WHERE private_room LIKE '%\"available\": true%' LIMIT 10",
    ),
    ("area", "search_stores", "SELECT * FROM stores WHERE address LIKE '%港南%' LIMIT 10"),
    (
        "business",
        "search_stores",
        "SELECT * FROM stores WHERE Biz_Entertainment_Available = 'TRUE' LIMIT 10",
    ),
    ("pets", "search_stores", "SELECT * FROM stores WHERE pets_allowed = 'TRUE' LIMIT 10"),
    ("cafes", "search_stores", "SELECT * FROM stores WHERE category = 'cafe' LIMIT 10"),
    (
        "events",
        "search_stores",
        "SELECT store_name, store_exclusive_events FROM stores "
        "WHERE store_exclusive_events != '' LIMIT 10",
    ),
]

AGENT_QUERIES: list[tuple[str, str, str]] = [
    ("name_like", "search_stores", "SELECT store_name FROM stores WHERE store_name LIKE '%芝浦%'"),
    (
        "ilike_keyword",
        "search_stores",
        "SELECT store_name FROM stores "
        "WHERE description ILIKE '%coffee%' OR description LIKE '%コーヒー%'",
    ),
    (
        "json_arrow_bool",
        "search_stores",
        "SELECT store_name, private_room->>'$.capacity' AS seats FROM stores "
        "WHERE private_room->>'$.available' = 'true'",
    ),
    (
        "json_capacity_cast",
        "search_stores",
        "SELECT store_name FROM stores WHERE CAST(private_room->>'$.capacity' AS INTEGER) >= 20 "
        "ORDER BY store_name",
    ),
    (
        "json_extract_in_function",
        "search_stores",
        "SELECT store_name FROM stores WHERE json_array_length(opening_hours, '$.sunday') = 0",
    ),
    (
        "json_contains",
        "search_stores",
        "SELECT store_name FROM stores WHERE json_contains(target_audience, '\"ペット連れ\"')",
    ),
    (
        "kids_highchair",
        "search_stores",
        "SELECT store_name, kids_info FROM stores WHERE kids_info->>'$.highchair' = 'true'",
    ),
    (
        "group_by_category",
        "search_stores",
        "SELECT category, count(*) AS n FROM stores GROUP BY category ORDER BY n DESC",
    ),
    (
        "cte_window",
        "search_stores",
        "WITH ranked AS (SELECT store_name, category, row_number() OVER "
        "(PARTITION BY category ORDER BY store_id) AS rn FROM stores) "
        "SELECT * FROM ranked WHERE rn = 1",
    ),
    (
        "qualify",
        "search_stores",
        "SELECT store_name, category FROM stores "
        "QUALIFY row_number() OVER (PARTITION BY category ORDER BY length(description) DESC) = 1",
    ),
    (
        "case_when",
        "search_stores",
        "SELECT store_name, "
        "CASE WHEN pets_allowed = 'TRUE' THEN 'ペット可' ELSE '不可' END AS pets "
        "FROM stores ORDER BY store_id LIMIT 5",
    ),
    (
        "japanese_quoted_alias",
        "search_stores",
        'SELECT store_name AS "店舗名", address AS "住所" FROM stores WHERE halal_info != \'\'',
    ),
    (
        "japanese_comment",
        "search_stores",
        "-- 駐車場が広い店舗\nSELECT store_name FROM stores "
        "WHERE CAST(parking->>'$.capacity' AS INTEGER) > 100",
    ),
    (
        "offset_paging",
        "search_stores",
        "SELECT store_id FROM stores ORDER BY store_id LIMIT 5 OFFSET 5",
    ),
    ("distinct", "search_stores", "SELECT DISTINCT category FROM stores ORDER BY category"),
    (
        "exists_subquery",
        "search_stores",
        "SELECT store_name FROM stores s WHERE EXISTS "
        "(SELECT 1 FROM stores t WHERE t.address = s.address AND t.store_id <> s.store_id)",
    ),
    ("from_first", "search_stores", "FROM stores SELECT store_name WHERE vegan_info != ''"),
    (
        "union",
        "search_stores",
        "SELECT store_name AS name FROM stores WHERE pets_allowed = 'TRUE' "
        "UNION SELECT store_name FROM stores WHERE category = 'cafe' ORDER BY name",
    ),
    (
        "events_on_day",
        "search_events",
        "SELECT event_name, venue FROM events "
        "WHERE start_date <= DATE '2025-12-20' AND end_date >= DATE '2025-12-20'",
    ),
    (
        "events_free",
        "search_events",
        "SELECT event_name, start_date FROM events WHERE price LIKE '%無料%' ORDER BY start_date",
    ),
    (
        "events_long",
        "search_events",
        "SELECT event_name, end_date - start_date AS days FROM events "
        "WHERE end_date - start_date >= 7 ORDER BY days DESC",
    ),
    (
        "events_kids",
        "search_events",
        "SELECT event_name FROM events "
        "WHERE category = 'kids' OR target_audience LIKE '%ファミリー%'",
    ),
    (
        "events_month_strftime",
        "search_events",
        "SELECT strftime(start_date, '%Y-%m') AS month, count(*) AS n FROM events GROUP BY month "
        "ORDER BY month",
    ),
    (
        "join_events_stores",
        "sql",
        "SELECT e.event_name, s.store_name FROM events e JOIN stores s ON e.store_id = s.store_id "
        "ORDER BY e.start_date",
    ),
    (
        "reports_monthly_sales",
        "sql",
        "SELECT store, date_trunc('month', date) AS month, sum(sales) AS sales FROM daily_reports "
        "GROUP BY ALL ORDER BY month, store",
    ),
    (
        "reports_claim_filter",
        "sql",
        "SELECT date, store, claim_content FROM daily_reports WHERE claim ORDER BY date DESC",
    ),
    (
        "reports_aggregate_filter",
        "sql",
        "SELECT store, count(*) FILTER (WHERE claim) AS claims, count(*) AS reports "
        "FROM daily_reports GROUP BY store ORDER BY store",
    ),
    (
        "reports_regexp",
        "sql",
        "SELECT date, store FROM daily_reports WHERE regexp_matches(content, '故障|不具合')",
    ),
    (
        "reports_weekday",
        "sql",
        "SELECT dayname(date) AS weekday, avg(sales)::INTEGER AS avg_sales FROM daily_reports "
        "GROUP BY weekday ORDER BY avg_sales DESC",
    ),
    (
        "bounded_recursive_cte",
        "sql",
        "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < 5) "
        "SELECT sum(n) AS total FROM r",
    ),
    ("scalar_series", "sql", "SELECT unnest(generate_series(1, 3)) AS n"),
    ("trailing_semicolon", "search_stores", "SELECT store_name FROM stores LIMIT 1;"),
]


def _run(db, tool: str, sql: str):
    return sql_tool(db, tool).run(sql)


def test_corpus_size():
    assert len(DESIGN_EXAMPLES) == 8
    assert len(DESIGN_EXAMPLES) + len(AGENT_QUERIES) >= 25


@pytest.mark.parametrize(
    ("name", "tool", "sql"), DESIGN_EXAMPLES, ids=[n for n, _, _ in DESIGN_EXAMPLES]
)
def test_design_examples_find_stores(db, name, tool, sql):
    outcome = _run(db, tool, sql)
    assert isinstance(outcome, SqlResults), outcome
    assert 1 <= outcome.count <= 10


@pytest.mark.parametrize(
    ("name", "tool", "sql"), AGENT_QUERIES, ids=[n for n, _, _ in AGENT_QUERIES]
)
def test_agent_queries_succeed(db, name, tool, sql):
    outcome = _run(db, tool, sql)
    assert isinstance(outcome, SqlResults), outcome
    assert outcome.count >= 1
    json.dumps(outcome.to_dict(), ensure_ascii=False)  # JSON-safe


def test_results_match_the_csv(db, demo_home):
    with (demo_home / "tables" / "stores.csv").open(encoding="utf-8", newline="") as fh:
        rows = list(csv.DictReader(fh))
    expected = sorted(r["store_name"] for r in rows if r["pets_allowed"] == "TRUE")
    out = search_table(
        db,
        "search_stores",
        "SELECT store_name FROM stores WHERE pets_allowed = 'TRUE' ORDER BY store_name",
    )
    assert [r["store_name"] for r in out["results"]] == expected
    assert out["count"] == len(expected)


def test_limit_added_clamped_and_kept(db):
    stores = sql_tool(db, "search_stores")
    assert stores("SELECT store_id FROM stores")["count"] == 10
    assert stores("SELECT store_id FROM stores LIMIT 100")["count"] == 10
    assert stores("SELECT store_id FROM stores LIMIT 3")["count"] == 3
    assert stores("SELECT store_id FROM stores LIMIT 0")["count"] == 0
    assert stores("SELECT store_id FROM stores LIMIT 10 PERCENT")["count"] == 10
    assert stores("SELECT store_id FROM stores LIMIT (SELECT 50)")["count"] == 10
    assert stores("SELECT store_id FROM stores FETCH FIRST 50 ROWS ONLY")["count"] == 10
    assert (
        stores("SELECT store_id FROM stores UNION ALL SELECT store_id FROM stores LIMIT 40")[
            "count"
        ]
        == 10
    )
    # an inner LIMIT is the agent's business; the outer one is enforced
    assert stores("SELECT * FROM (SELECT store_id FROM stores LIMIT 20) t")["count"] == 10


def test_check_sql_rewrites_only_the_outer_limit():
    checked = check_sql(
        "SELECT a FROM (SELECT a FROM t LIMIT 20) s LIMIT 500", allowed_tables=["t"], max_rows=10
    )
    assert checked.sql == "SELECT a FROM (SELECT a FROM t LIMIT 20) AS s LIMIT 10"
    assert checked.limit == 10 and checked.tables == frozenset({"t"})
    assert check_sql("SELECT 1 -- note\n", allowed_tables=[], max_rows=5).sql == "SELECT 1 LIMIT 5"


def test_configurable_max_rows(demo_config):
    config = dataclasses.replace(
        demo_config,
        sandbox=dataclasses.replace(demo_config.sandbox, max_rows=3, isolation="inline"),
    )
    with TableDatabase(config) as small:
        tool = sql_tool(small, "search_stores")
        assert tool("SELECT store_id FROM stores LIMIT 25")["count"] == 3
        assert "最大3件" in tool.description


def test_zero_rows_message_per_table(db):
    assert search_table(db, "search_stores", "SELECT * FROM stores WHERE store_name = 'なし'") == {
        "results": [],
        "count": 0,
        "message": "検索条件に一致する店舗が見つかりませんでした",
    }
    out = search_table(db, "search_events", "SELECT * FROM events WHERE event_name = 'なし'")
    assert out["message"] == "検索条件に一致するイベントが見つかりませんでした"
    assert "message" not in search_table(db, "search_stores", "SELECT 1 AS x FROM stores LIMIT 1")


def test_execution_error_carries_duckdb_message(db):
    outcome = _run(db, "search_stores", "SELECT no_such_column FROM stores")
    assert isinstance(outcome, SqlFailed) and not outcome.timed_out
    assert outcome.to_dict()["error"].startswith("SQLの実行中にエラーが発生しました: ")
    assert "no_such_column" in outcome.error
    cast = _run(db, "search_stores", "SELECT CAST(store_name AS INTEGER) FROM stores")
    assert isinstance(cast, SqlFailed) and "Conversion" in cast.error


def test_rejection_shape(db):
    outcome = _run(db, "search_stores", "DELETE FROM stores")
    assert isinstance(outcome, SqlRejected)
    assert list(outcome.to_dict()) == ["error"]
    assert "SELECT文" in outcome.error and "stores" in outcome.error


def test_json_columns_come_back_as_json(db):
    out = search_table(
        db,
        "search_stores",
        "SELECT store_id, parking, target_audience, opening_hours, phone "
        "FROM stores WHERE store_id = 'STR-0002'",
    )
    row = out["results"][0]
    assert row["parking"] == {
        "available": True,
        "capacity": 180,
        "charge": "30分300円。2,000円以上のお買い上げで2時間無料",
    }
    assert "ファミリー" in row["target_audience"]
    assert row["opening_hours"]["monday"] == [
        {"open": "11:30", "close": "15:00"},
        {"open": "17:30", "close": "22:30"},
    ]
    assert isinstance(row["phone"], str)


def test_values_are_json_safe(db):
    out = all_tables_tool(db)(
        "SELECT date, avg(sales) AS avg_sales, sum(sales)::DECIMAL(18, 2) AS total, "
        "claim, date::TIMESTAMP AS ts, INTERVAL 1 DAY AS one_day, 'NaN'::DOUBLE AS nan "
        "FROM daily_reports WHERE date = DATE '2025-12-10' GROUP BY date, claim ORDER BY claim"
    )
    row = out["results"][0]
    assert row["date"] == "2025-12-10" and row["ts"] == "2025-12-10T00:00:00"
    assert isinstance(row["total"], int | float) and isinstance(row["claim"], bool)
    assert row["nan"] is None and isinstance(row["one_day"], str)
    json.dumps(out, ensure_ascii=False, allow_nan=False)


def test_empty_strings_not_nulls(db):
    out = all_tables_tool(db)(
        "SELECT count(*) FILTER (WHERE email IS NULL) AS nulls, "
        "count(*) FILTER (WHERE email = '') AS empties FROM stores"
    )
    assert out["results"][0]["nulls"] == 0 and out["results"][0]["empties"] > 0


def test_duplicate_column_names_are_kept(db):
    row = all_tables_tool(db)(
        "SELECT s.store_id, e.store_id FROM stores s JOIN events e "
        "ON s.store_id = e.store_id LIMIT 1"
    )["results"][0]
    assert set(row) == {"store_id", "store_id_2"}


def test_long_text_is_cut(demo_config):
    config = dataclasses.replace(
        demo_config,
        sandbox=dataclasses.replace(demo_config.sandbox, max_cell_chars=100, isolation="inline"),
    )
    with TableDatabase(config) as small:
        value = all_tables_tool(small)("SELECT repeat('あ', 500) AS x")["results"][0]["x"]
        assert value.startswith("あ" * 100) and value.endswith("…(省略)") and len(value) < 120


# --- the tool description ------------------------------------------------------------------------


def test_tools_from_registry(db):
    tools = {t.name: t for t in sql_tools(db)}
    assert set(tools) == {"search_stores", "search_events"}
    assert tools["search_stores"].parameters == {
        "type": "object",
        "properties": {
            "sql_query": {"type": "string", "description": "実行するSQLクエリ(SELECT文1つ)"}
        },
        "required": ["sql_query"],
    }


def test_description_lists_rules_columns_and_examples(db, demo_config):
    stores = sql_tool(db, "search_stores")
    text = stores.description
    assert text.startswith("search_stores: ")
    for phrase in ("SELECT文のみ", "最大10件", "LIMIT 10", "1文だけ", "FROM stores"):
        assert phrase in text
    for column in demo_config.table("stores").columns:
        assert f"- {column.name} ({column.type.value}): " in text
    examples = text.split("【検索例】")[1]
    assert sum(1 for line in examples.splitlines() if line[:1].isdigit()) >= 5
    events = sql_tool(db, "search_events").description
    assert "start_date (DATE)" in events and "【検索例】" in events
    assert "テーブル名: stores" not in events


def test_description_examples_all_run(db):
    for tool in sql_tools(db):
        for table in tool.tables:
            for example in table.examples:
                assert isinstance(tool.run(example.sql), SqlResults), example


def test_description_does_not_change_with_data_size(demo_config, tmp_path: Path):
    """Twice the rows, same description: nothing data-dependent (like a row count) in it."""
    stores = demo_config.table("stores")
    lines = stores.path.read_text(encoding="utf-8").splitlines(keepends=True)
    doubled = tmp_path / "stores.csv"
    doubled.write_text("".join(lines + lines[1:]), encoding="utf-8")
    bigger = dataclasses.replace(
        demo_config,
        tables=tuple(
            dataclasses.replace(t, path=doubled) if t.name == "stores" else t
            for t in demo_config.tables
        ),
        sandbox=dataclasses.replace(demo_config.sandbox, isolation="inline"),
    )
    with TableDatabase(demo_config) as a, TableDatabase(bigger) as b:
        assert b.row_count("stores") == 2 * a.row_count("stores")
        assert sql_tool(a, "search_stores").description == sql_tool(b, "search_stores").description

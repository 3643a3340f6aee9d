"""A tool's result is capped as serialized JSON — rows × cells × nested values — and
says when it was cut. Sizes are UTF-8 bytes of ``json.dumps(outcome.to_dict(),
ensure_ascii=False)``, exactly what an agent receives."""

from __future__ import annotations

import dataclasses
import json

import pytest

from tansaku.tables import (
    SqlResults,
    StoreScope,
    TableDatabase,
    get_claim_statistics,
    get_sales_trend,
    sql_tool,
)
from tansaku.tables.caps import Budget, json_safe, json_size
from tansaku.tables.registry import SandboxSettings, parse_tables_config
from tansaku.tables.results import TRUNCATED_NOTICE

DEFAULT_BYTES = SandboxSettings().max_result_bytes


def _size(data: dict) -> int:
    return len(json.dumps(data, ensure_ascii=False).encode("utf-8"))


@pytest.fixture(scope="module")
def stores(db):
    return sql_tool(db, "search_stores")


def test_range_3m_result_is_capped(stores) -> None:
    outcome = stores.run("SELECT range(0, 3000000) AS r")
    assert isinstance(outcome, SqlResults) and outcome.truncated
    data = outcome.to_dict()
    assert _size(data) <= DEFAULT_BYTES  # 26 MB of JSON before
    assert data["truncated"] is True and data["notice"] == TRUNCATED_NOTICE
    values = data["results"][0]["r"]
    assert values[:3] == [0, 1, 2] and len(values) == 101  # max_items, then the marker
    assert values[-1] == "…(2999900件省略)"


def test_range_3m_unaliased_is_capped(demo_config) -> None:
    # written without an alias: DuckDB folds the call into a 3-million-element constant
    # and prints it in the optimized plan — the plan check reads the unoptimized one instead
    # (EXPLAIN went from seconds to milliseconds); a generous timeout keeps this about size
    sandbox = dataclasses.replace(demo_config.sandbox, isolation="inline", timeout_seconds=60.0)
    with TableDatabase(dataclasses.replace(demo_config, sandbox=sandbox)) as db:
        outcome = sql_tool(db, "search_stores").run("SELECT range(0,3000000)")
    assert isinstance(outcome, SqlResults) and outcome.truncated, outcome
    assert _size(outcome.to_dict()) <= DEFAULT_BYTES
    (values,) = outcome.results[0].values()
    assert values[-1] == "…(2999900件省略)"


def test_long_string_list_is_capped_as_a_whole(stores) -> None:
    data = stores("SELECT list_transform(range(0, 1000), x -> repeat('あ', 3000)) AS l FROM stores")
    assert data["truncated"] is True and _size(data) <= DEFAULT_BYTES  # 12 MB before
    assert data["count"] >= 1 and data["results"][0]["l"][0].startswith("あ" * 100)


@pytest.mark.parametrize(
    ("name", "sql"),
    [
        ("control_characters", "SELECT repeat(chr(1), 4000) AS x FROM stores"),  # \u0001 ×6
        ("quotes", "SELECT [repeat('\"', 4000) for x in range(0, 100)] AS q"),  # \" ×2
        ("map_key", "SELECT map_from_entries([(repeat('鍵', 1000000), 1)]) AS m"),
        ("struct_of_list", "SELECT {'a': range(0, 1000000), 'b': repeat('b', 100000)} AS s"),
        ("nested_lists", "SELECT [range(0, 1000) for x in range(0, 1000)] AS n"),
        ("wide_rows", "SELECT * FROM stores a, stores b, stores c, stores d LIMIT 10"),
        ("japanese_rows", "SELECT repeat(store_name, 300) AS n, * FROM stores LIMIT 10"),
    ],
)
def test_adversarial_results_stay_within_max_result_bytes(stores, name, sql) -> None:
    outcome = stores.run(sql)
    assert isinstance(outcome, SqlResults), outcome
    data = outcome.to_dict()
    assert _size(data) <= DEFAULT_BYTES, name
    assert data.get("truncated") is True and data["count"] >= 1, name


def test_wide_rows_keep_max_columns(stores) -> None:
    data = stores("SELECT * FROM stores a, stores b, stores c, stores d LIMIT 1")
    assert len(data["results"][0]) == SandboxSettings().max_columns  # 116 → 100
    assert data["truncated"] is True


def test_small_results_are_not_marked(stores) -> None:
    data = stores("SELECT store_name FROM stores ORDER BY store_id LIMIT 2")
    assert "truncated" not in data and "notice" not in data and data["count"] == 2
    everything = stores("SELECT * FROM stores LIMIT 10")  # the design's widest example
    assert "truncated" not in everything and everything["count"] == 10


@pytest.fixture(scope="module")
def tight_db(demo_config):
    sandbox = dataclasses.replace(
        demo_config.sandbox, isolation="inline", max_result_bytes=3000, max_items=5, max_columns=3
    )
    with TableDatabase(dataclasses.replace(demo_config, sandbox=sandbox)) as database:
        yield database


def test_result_caps_are_configurable(tight_db) -> None:
    tool = sql_tool(tight_db, "search_stores")
    assert tool("SELECT range(0, 50) AS r")["results"][0]["r"] == [0, 1, 2, 3, 4, "…(45件省略)"]
    rows = tool("SELECT repeat(description, 3) AS d, * FROM stores ORDER BY store_id")
    assert rows["truncated"] is True and _size(rows) <= 3000
    assert 1 <= rows["count"] < 10  # rows after the budget are left out
    assert list(rows["results"][0]) == ["d", "store_id", "store_name"]


def test_analytics_are_not_capped_by_the_tool_budget(tight_db, db) -> None:
    scope = StoreScope.all_stores()
    assert get_sales_trend(tight_db, "2025-10-01", "2025-12-31", scope=scope) == get_sales_trend(
        db, "2025-10-01", "2025-12-31", scope=scope
    )
    tight = get_claim_statistics(tight_db, "2025-10-01", "2025-12-31", scope=scope)
    assert tight == get_claim_statistics(db, "2025-10-01", "2025-12-31", scope=scope)


def test_json_safe_budget_counts_serialized_bytes() -> None:
    budget = Budget(max_bytes=100, items=10)
    value = json_safe('"' * 500, budget=budget)  # 500 quotes are 1002 bytes of JSON
    assert budget.cut and json_size(value) <= 100 and value.endswith("…(省略)")
    assert json_safe(["a", "b"], budget=budget) == ["…(2件省略)"]  # no room for elements
    budget.take(budget.left)
    assert json_safe("x", budget=budget) is None  # spent: later values are null
    free = json_safe({"k": [1, 2.5, float("nan")]})
    assert free == {"k": [1, 2.5, None]}


def test_capping_a_capped_value_keeps_its_marker() -> None:
    once = json_safe(list(range(1000)), budget=Budget(items=10))
    assert once[-1] == "…(990件省略)"
    assert json_safe(once, budget=Budget(items=10)) == once  # the tool re-caps worker output
    twice = json_safe(once, budget=Budget(items=5))
    assert twice == [0, 1, 2, 3, 4, "…(995件省略)"]


def test_legacy_max_result_chars_key_is_read(tmp_path) -> None:
    config = parse_tables_config({"sandbox": {"max_result_chars": 20000}}, tmp_path)
    assert config.sandbox.max_result_bytes == 20000


def test_tool_description_tells_the_agent_about_the_caps(stores) -> None:
    description = stores.description
    assert "truncated と notice が付きます" in description
    assert "システムカタログ・設定・ファイルは読めません" in description

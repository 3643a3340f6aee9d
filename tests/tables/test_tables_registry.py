"""The registry (tables.toml), the demo install, loading errors and the missing extra."""

from __future__ import annotations

import builtins
import csv
import json
from dataclasses import replace
from pathlib import Path

import pytest

from tansaku.demo.tables import demo_tables_config, install_demo_tables
from tansaku.errors import ConfigError, LoadError, MissingExtra
from tansaku.tables import (
    ColumnType,
    TableDatabase,
    TablesConfig,
    check_sql,
    load_tables_config,
    write_tables_config,
)
from tansaku.tables.registry import SandboxSettings, parse_tables_config

STORE_COLUMNS = [
    "store_id",
    "store_name",
    "description",
    "category",
    "opening_hours",
    "irregular_closures",
    "phone",
    "email",
    "address",
    "Biz_Entertainment_Available",
    "private_room",
    "pets_allowed",
    "target_audience",
    "store_exclusive_events",
    "menu",
    "seasonal_items",
    "allergy_info",
    "gluten_free_info",
    "vegan_info",
    "kids_info",
    "halal_info",
    "reservations",
    "restroom_info",
    "accessibility",
    "parking",
    "nursing_room",
    "access_route",
    "extraction_status",
    "error_message",
]


def test_example_stores_have_the_29_design_columns():
    config = demo_tables_config()
    stores = config.table("stores")
    assert [c.name for c in stores.columns] == STORE_COLUMNS
    with stores.path.open(encoding="utf-8", newline="") as fh:
        reader = csv.DictReader(fh)
        rows = list(reader)
    assert reader.fieldnames == STORE_COLUMNS
    assert 20 <= len(rows) <= 30
    assert {r["category"] for r in rows} >= {"retail", "restaurant", "cafe"}
    assert {r["extraction_status"] for r in rows} == {"success", "error"}
    json_columns = {c.name for c in stores.columns if c.type is ColumnType.JSON}
    assert json_columns == {
        "opening_hours",
        "irregular_closures",
        "private_room",
        "target_audience",
        "kids_info",
        "parking",
    }
    for row in rows:
        for column in json_columns:
            json.loads(row[column])
    events = config.table("events")
    with events.path.open(encoding="utf-8", newline="") as fh:
        assert 15 <= len(list(csv.DictReader(fh))) <= 30
    assert {t.name for t in config.tools} == {"search_stores", "search_events"}
    assert len(stores.examples) >= 8 and len(events.examples) >= 5


def test_install_demo_tables_is_idempotent_and_keeps_user_tables(tmp_path: Path):
    home = tmp_path / "ws"
    assert install_demo_tables(home) == ["stores", "events", "daily_reports"]
    first = (home / "tables.toml").read_text(encoding="utf-8")
    assert (home / "tables" / "daily_reports.csv").is_file()
    assert install_demo_tables(home) == ["stores", "events", "daily_reports"]
    assert (home / "tables.toml").read_text(encoding="utf-8") == first
    config = load_tables_config(home / "tables.toml")
    assert all(t.path.parent == (home / "tables").resolve() for t in config.tables)
    assert "path = 'tables/stores.csv'" in first  # relative to the TOML file

    (home / "mine.csv").write_text("a,b\n1,x\n", encoding="utf-8")
    extra = parse_tables_config(
        {"tables": [{"name": "mine", "path": "mine.csv"}], "sandbox": {"max_rows": 5}}, home
    )
    write_tables_config(replace(config.merged(extra), sandbox=extra.sandbox), home / "tables.toml")
    install_demo_tables(home)
    again = load_tables_config(home / "tables.toml")
    assert again.table_names == ("mine", "stores", "events", "daily_reports")
    assert again.table("mine").path == (home / "mine.csv").resolve()
    assert again.sandbox.max_rows == 5  # the user's [sandbox] is kept


def test_round_trip(tmp_path: Path):
    config = demo_tables_config()
    path = write_tables_config(config, tmp_path / "copy.toml")
    assert load_tables_config(path) == config


def test_relative_paths_resolve_against_the_toml(tmp_path: Path):
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "t.csv").write_text(
        "id,n,day,ok\nA,1,2025-01-02,true\nB,,,\n", encoding="utf-8"
    )
    (tmp_path / "conf").mkdir()
    (tmp_path / "conf" / "tables.toml").write_text(
        """
[sandbox]
isolation = "inline"

[[tools]]
name = "search_t"
purpose = "テスト"
tables = ["t"]

[[tables]]
name = "t"
path = "../data/t.csv"

[[tables.columns]]
name = "id"

[[tables.columns]]
name = "n"
type = "integer"

[[tables.columns]]
name = "day"
type = "DATE"

[[tables.columns]]
name = "ok"
type = "BOOLEAN"
""",
        encoding="utf-8",
    )
    config = load_tables_config(tmp_path / "conf" / "tables.toml")
    assert config.table("t").path == (tmp_path / "data" / "t.csv").resolve()
    with TableDatabase(config) as db:
        assert db.columns("t") == (
            ("id", "VARCHAR"),
            ("n", "BIGINT"),
            ("day", "DATE"),
            ("ok", "BOOLEAN"),
        )
        assert db.execute("SELECT * FROM t ORDER BY id").rows == (
            ("A", 1, "2025-01-02", True),
            ("B", None, None, None),
        )


def test_undeclared_columns_are_detected(tmp_path: Path):
    (tmp_path / "t.csv").write_text("a,b\n1,x\n2,y\n", encoding="utf-8")
    config = parse_tables_config(
        {"tables": [{"name": "t", "path": "t.csv"}], "sandbox": {"isolation": "inline"}}, tmp_path
    )
    with TableDatabase(config) as db:
        assert db.row_count("t") == 2
        assert [n for n, _ in db.columns("t")] == ["a", "b"]


def test_parquet_tables(tmp_path: Path):
    import duckdb

    duckdb.sql("COPY (SELECT 1 AS id, 'x' AS name) TO '" + str(tmp_path / "t.parquet") + "'")
    config = parse_tables_config(
        {
            "tables": [
                {
                    "name": "p",
                    "path": "t.parquet",
                    "columns": [{"name": "id", "type": "INTEGER"}, {"name": "name"}],
                }
            ],
            "sandbox": {"isolation": "inline"},
        },
        tmp_path,
    )
    with TableDatabase(config) as db:
        assert db.execute("SELECT * FROM p").rows == ((1, "x"),)


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ({"tables": [{"name": "Bad-Name", "path": "x.csv"}]}, "テーブル名「Bad-Name」"),
        ({"tables": [{"name": "t", "path": "x.csv"}, {"name": "t", "path": "y.csv"}]}, "重複"),
        ({"tables": [{"name": "t"}]}, "path がありません"),
        (
            {
                "tables": [
                    {"name": "t", "path": "x.csv", "columns": [{"name": "a", "type": "MONEY"}]}
                ]
            },
            "使える型: TEXT",
        ),
        ({"tables": [{"name": "t", "path": "x.csv", "columns": [{"name": "列"}]}]}, "列名「列」"),
        ({"tools": [{"name": "search_x", "tables": ["nope"]}]}, "登録されていません"),
        ({"sandbox": {"max_rows": 0}}, "max_rows は 1〜1000"),
        ({"sandbox": {"timeout_seconds": 0}}, "timeout_seconds"),
        ({"sandbox": {"memory_limit": "lots"}}, "memory_limit"),
        ({"sandbox": {"isolation": "docker"}}, "使える値: process, inline"),
        ({"sandbox": {"rows": 5}}, "不明なキー: rows"),
    ],
)
def test_config_errors_name_the_bad_value(tmp_path: Path, raw, message):
    with pytest.raises(ConfigError, match=message):
        parse_tables_config(raw, tmp_path)


def test_missing_registry_file_says_what_to_do(tmp_path: Path):
    with pytest.raises(ConfigError, match="tansaku demo"):
        load_tables_config(tmp_path / "tables.toml")


def test_unknown_tool_and_table(db):
    with pytest.raises(ConfigError, match="使えるツール: search_stores, search_events"):
        db.config.tool("search_nothing")
    with pytest.raises(ConfigError, match="登録済み: stores, events, daily_reports"):
        db.row_count("nothing")


@pytest.mark.parametrize("isolation", ["inline", "process"])
def test_load_errors(tmp_path: Path, isolation):
    (tmp_path / "t.csv").write_text("a\nnot-a-number\n", encoding="utf-8")
    bad_type = {
        "tables": [{"name": "t", "path": "t.csv", "columns": [{"name": "a", "type": "INTEGER"}]}],
        "sandbox": {"isolation": isolation},
    }
    with pytest.raises(LoadError, match="テーブル「t」を読み込めません"):
        TableDatabase(parse_tables_config(bad_type, tmp_path))
    missing = {"tables": [{"name": "t", "path": "nope.csv"}], "sandbox": {"isolation": isolation}}
    with pytest.raises(LoadError, match="ファイルがありません"):
        TableDatabase(parse_tables_config(missing, tmp_path))


def test_missing_extra(monkeypatch: pytest.MonkeyPatch):
    real_import = builtins.__import__

    def fake_import(name, *args, **kwargs):
        if name in ("duckdb", "sqlglot"):
            raise ImportError(f"No module named {name!r}")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", fake_import)
    with pytest.raises(MissingExtra) as info:
        TableDatabase(TablesConfig())
    assert info.value.package == "duckdb" and info.value.extra == "tables"
    assert "pip install 'tansaku[tables]'" in str(info.value)
    with pytest.raises(MissingExtra) as info:
        check_sql("SELECT 1", allowed_tables=[], max_rows=10)
    assert info.value.package == "sqlglot"


def test_sandbox_defaults():
    s = SandboxSettings()
    assert (s.max_rows, s.timeout_seconds, s.isolation) == (10, 5.0, "process")

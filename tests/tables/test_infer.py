"""``tansaku tables infer`` / ``add``: a registry entry inferred from the file — on the bundled
stores.csv (the hand-written 29 declarations) and on a hostile CSV (BOM, blank lines, mixed
types, Japanese and duplicate headers, a quoted line break, codes with leading zeros)."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest
from tables_support import demo_workspace
from typer.testing import CliRunner

from tansaku.cli.main import app
from tansaku.demo.tables import demo_tables_config
from tansaku.errors import ConfigError, LoadError
from tansaku.tables import (
    ColumnType,
    TableDatabase,
    load_tables_config,
    sql_tool,
)
from tansaku.tables.engine import probe_table
from tansaku.tables.infer import infer_table, inferred_toml, sql_names, table_name_of
from tansaku.tables.registry import parse_tables_config

pytestmark = pytest.mark.e2e

STORES = demo_tables_config().table("stores")

HOSTILE = (
    "\ufeff店舗名,売上 (円),開店日,営業中,メモ,score,amount,code,JSON列,日時,店舗名,flag,empty\r\n"
    "\r\n"
    '新宿店,"1,200",2025-01-05,true,"改行を\n含むメモ",1.5,3,007,"{""a"": 1}",'
    "2025-12-10 10:00,重複,TRUE,\r\n"
    "\r\n"
    "渋谷店,800,2025/02/10,FALSE,普通,2,,012,[1],2025-12-10T11:30:05,x,,\r\n"
    '池袋店,abc,2025-02-30,true,,x,-5,013,"{""b"": 2}",,y,TRUE,\r\n'
    "\r\n"
)


@pytest.fixture
def hostile(tmp_path: Path) -> Path:
    path = tmp_path / "data" / "Hostile Shops.csv"
    path.parent.mkdir()
    path.write_text(HOSTILE, encoding="utf-8", newline="")
    return path


def test_stores_csv_gives_the_29_declarations() -> None:
    inferred = infer_table(STORES.path)
    spec = inferred.spec
    assert spec.name == "stores" and inferred.rows == 28
    assert [c.name for c in spec.columns] == [c.name for c in STORES.columns]
    assert [c.type for c in spec.columns] == [c.type for c in STORES.columns]  # TEXT and JSON
    assert all(not c.header for c in spec.columns)
    by_name = {c.name: c for c in spec.columns}
    assert by_name["store_id"].example == '"STR-0001", "STR-0002", "STR-0003"'
    assert by_name["category"].description.endswith('("retail", "restaurant", "cafe")')
    assert by_name["pets_allowed"].type is ColumnType.TEXT  # "TRUE" or blank: not a BOOLEAN
    assert by_name["pets_allowed"].description.endswith('("TRUE" または空文字)')
    for column in spec.columns:
        assert "説明を日本語で書く" in column.description and column.example
    assert probe_table(spec) == 28


def test_the_inferred_stores_run_the_design_sql(tmp_path: Path) -> None:
    """The inferred entry, registered as is, answers the design's queries as the hand-written
    one does."""
    home = tmp_path / "ws"
    result = CliRunner().invoke(
        app,
        ["tables", "add", str(STORES.path), "--name", "stores", "--tool", "search_stores"],
        env={"TANSAKU_HOME": str(home)},
    )
    assert result.exit_code == 0, result.output
    with TableDatabase(load_tables_config(home / "tables.toml")) as db:
        tool = sql_tool(db, "search_stores")
        family = tool(
            "SELECT store_name FROM 'stores.csv' WHERE target_audience LIKE '%ファミリー%'"
        )
        assert family["count"] == 10
        pets = tool("SELECT * FROM 'stores.csv' WHERE pets_allowed = 'TRUE'")
        assert pets["count"] > 0 and isinstance(pets["results"][0]["parking"], dict)  # JSON
        assert "【検索例】" in tool.description


def test_a_hostile_csv(hostile: Path) -> None:
    inferred = infer_table(hostile)
    spec = inferred.spec
    assert spec.name == "hostile_shops" and inferred.rows == 3  # blank lines are not rows
    columns = {c.name: c for c in spec.columns}
    assert list(columns) == [
        "column_1",
        "column_2",
        "column_3",
        "column_4",
        "column_5",
        "score",
        "amount",
        "code",
        "JSON",
        "column_10",
        "column_11",
        "flag",
        "empty",
    ]
    assert columns["column_1"].header == "店舗名"  # the BOM is not part of it
    assert columns["column_1"].description == "店舗名"
    assert columns["column_11"].header == "店舗名_1"  # DuckDB's name for the second one
    kinds = {name: c.type for name, c in columns.items()}
    assert kinds == {
        "column_1": ColumnType.TEXT,
        "column_2": ColumnType.TEXT,  # "1,200", "abc": mixed
        "column_3": ColumnType.TEXT,  # 2025-02-30 is no date
        "column_4": ColumnType.BOOLEAN,
        "column_5": ColumnType.TEXT,
        "score": ColumnType.TEXT,  # 1.5, 2, x
        "amount": ColumnType.INTEGER,  # 3, blank, -5
        "code": ColumnType.TEXT,  # 007: a code, not a number
        "JSON": ColumnType.JSON,
        "column_10": ColumnType.TIMESTAMP,
        "column_11": ColumnType.TEXT,
        "flag": ColumnType.TEXT,  # TRUE or blank
        "empty": ColumnType.TEXT,
    }
    assert columns["code"].example == '"007", "012", "013"'
    assert columns["column_5"].example == '"改行を\\n含むメモ", "普通"'
    assert columns["amount"].example == "3, -5"
    assert columns["empty"].example == ""
    assert probe_table(spec) == 3
    text = inferred_toml(inferred, hostile.parent)
    assert text.startswith("# Hostile Shops.csv から推定したテーブル設定(3行を読みました)")
    parsed = parse_tables_config(tomllib.loads(text), hostile.parent)
    assert parsed.tables[0] == spec


def test_the_hostile_table_answers_sql(tmp_path: Path, hostile: Path) -> None:
    home = tmp_path / "ws"
    runner = CliRunner()
    env = {"TANSAKU_HOME": str(home)}
    added = runner.invoke(app, ["tables", "add", str(hostile), "--name", "shops"], env=env)
    assert added.exit_code == 0, added.output
    assert "テーブル「shops」を登録しました(3行、13列)" in added.stdout
    sql = (
        "SELECT column_1 AS name, column_4 AS open, amount, code, \"JSON\"->>'$.a' AS a "
        "FROM shops WHERE column_4 ORDER BY column_1"
    )
    done = runner.invoke(app, ["sql", sql, "--json"], env=env)
    assert done.exit_code == 0, done.output
    assert json.loads(done.stdout)["results"] == [
        {"name": "新宿店", "open": True, "amount": 3, "code": "007", "a": "1"},
        {"name": "池袋店", "open": True, "amount": -5, "code": "013", "a": None},
    ]


def test_infer_prints_an_entry_to_paste(tmp_path: Path) -> None:
    home = tmp_path / "ws"
    result = CliRunner().invoke(
        app,
        ["tables", "infer", str(STORES.path), "--name", "my_stores"],
        env={"TANSAKU_HOME": str(home)},
    )
    assert result.exit_code == 0, result.output
    raw = tomllib.loads(result.stdout)
    [table] = raw["tables"]
    assert table["name"] == "my_stores" and len(table["columns"]) == 29
    assert table["path"] == str(STORES.path)  # outside the workspace: absolute
    assert not (home / "tables.toml").exists()  # infer registers nothing


def test_add_keeps_the_file_and_refuses_a_taken_name(tmp_path: Path, hostile: Path) -> None:
    home = demo_workspace(tmp_path / "ws")
    toml = home / "tables.toml"
    toml.write_text("# 利用者のコメント\n" + toml.read_text(encoding="utf-8"), encoding="utf-8")
    before = toml.read_bytes()
    runner = CliRunner()
    env = {"TANSAKU_HOME": str(home)}
    taken = runner.invoke(app, ["tables", "add", str(hostile), "--name", "stores"], env=env)
    assert taken.exit_code == 2
    assert "テーブル「stores」はすでに登録されています" in taken.stderr
    tool_taken = runner.invoke(
        app, ["tables", "add", str(hostile), "--name", "shops", "--tool", "search_stores"], env=env
    )
    assert (
        tool_taken.exit_code == 2
        and "SQLツール「search_stores」はすでにあります" in tool_taken.stderr
    )
    assert toml.read_bytes() == before
    added = runner.invoke(
        app, ["tables", "add", str(hostile), "--name", "shops", "--tool", "search_shops"], env=env
    )
    assert added.exit_code == 0, added.output
    text = toml.read_text(encoding="utf-8")
    assert text.startswith(before.decode("utf-8"))  # appended: the user's text is kept
    config = load_tables_config(toml)
    assert config.table_names == ("stores", "events", "daily_reports", "shops")
    assert config.tool("search_shops").tables == ("shops",)
    again = runner.invoke(app, ["tables", "add", str(hostile), "--name", "shops"], env=env)
    assert again.exit_code == 2 and "すでに登録されています" in again.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--name", "Bad-Name"], "テーブル名「Bad-Name」は使えません"),
        (["--name", "ok", "--tool", "sql"], "ツール名「sql」は使えません"),
    ],
)
def test_add_refuses_bad_names(tmp_path: Path, hostile: Path, args, message) -> None:
    result = CliRunner().invoke(
        app, ["tables", "add", str(hostile), *args], env={"TANSAKU_HOME": str(tmp_path / "ws")}
    )
    assert result.exit_code != 0 and message in result.stderr
    assert "Traceback" not in result.output
    assert not (tmp_path / "ws" / "tables.toml").exists()


def test_files_that_are_not_tables(tmp_path: Path) -> None:
    sjis = tmp_path / "sjis.csv"
    sjis.write_bytes("店舗,売上\n新宿,100\n".encode("shift_jis"))
    with pytest.raises(LoadError, match="UTF-8 の CSV ではありません"):
        infer_table(sjis)
    runner = CliRunner()
    env = {"TANSAKU_HOME": str(tmp_path / "ws")}
    for path, message in (
        (sjis, "UTF-8 で保存し直して"),
        (tmp_path / "missing.csv", "ファイルがありません"),
        (tmp_path / "notes.md", "登録できるのは CSV と Parquet です"),
    ):
        if path.suffix == ".md":
            path.write_text("# メモ\n", encoding="utf-8")
        result = runner.invoke(app, ["tables", "infer", str(path)], env=env)
        assert result.exit_code == 2 and message in result.stderr, result.output
        assert "Traceback" not in result.output
    with pytest.raises(ConfigError, match="--name で英小文字のテーブル名を指定してください"):
        table_name_of(Path("売上.csv"))


def test_names_from_headers() -> None:
    assert sql_names(["store_id", "売上 (円)", "unit price", "2024年", "Store_ID", "メモ"]) == [
        "store_id",
        "column_2",
        "unit_price",
        "column_4",
        "Store_ID_2",
        "column_6",
    ]
    assert table_name_of(Path("Stores 2025.csv")) == "stores_2025"
    assert table_name_of(Path("2025-sales.csv")) == "t_2025_sales"

"""The tables CLI through typer's runner, on a tiny app that calls ``register(app)``."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from tansaku.cli.tables import register
from tansaku.demo.tables import install_demo_tables
from tansaku.tables import (
    StoreScope,
    all_tables_tool,
    compare_periods,
    get_claim_statistics,
    get_sales_trend,
    load_tables_config,
    sql_tool,
    write_tables_config,
)
from tansaku.tables.results import TRUNCATED_NOTICE

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def app() -> typer.Typer:
    application = typer.Typer()

    @application.callback()
    def main() -> None:
        """テスト用のアプリ。"""

    register(application)
    return application


@pytest.fixture(scope="module")
def cli_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The demo workspace with ``isolation = "inline"``: one worker start per command would
    make this file slow (the worker path is covered by ``test_sql_in_a_worker_process``)."""
    home = tmp_path_factory.mktemp("cli-home")
    install_demo_tables(home)
    config = load_tables_config(home / "tables.toml")
    write_tables_config(
        replace(config, sandbox=replace(config.sandbox, isolation="inline")), home / "tables.toml"
    )
    return home


@pytest.fixture
def run(app, cli_home: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("TANSAKU_HOME", str(cli_home))
    runner = CliRunner()

    def invoke(*args: str):
        return runner.invoke(app, list(args))

    return invoke


def test_sql_in_a_worker_process(app, demo_home: Path, db):
    sql = "SELECT store_id FROM stores ORDER BY store_id LIMIT 2"
    result = CliRunner().invoke(app, ["sql", sql, "--json", "--home", str(demo_home)])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout) == all_tables_tool(db)(sql)


def test_tables_lists_the_registry(run):
    result = run("tables", "--json")
    assert result.exit_code == 0, result.output
    items = {t["name"]: t for t in json.loads(result.stdout)["tables"]}
    assert set(items) == {"stores", "events", "daily_reports"}
    assert items["stores"]["rows"] == 28 and len(items["stores"]["columns"]) == 29
    assert items["stores"]["tools"] == ["search_stores"] and items["daily_reports"]["tools"] == []
    human = run("tables")
    assert human.exit_code == 0 and "search_events" in human.stdout


def test_sql_json_is_the_tool_outcome(run, db):
    sql = "SELECT store_name, parking FROM stores WHERE pets_allowed = 'TRUE' ORDER BY store_id"
    result = run("sql", sql, "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout) == all_tables_tool(db)(sql)
    assert "\\u" not in result.stdout  # ensure_ascii=False


def test_sql_through_a_named_tool(run, db):
    sql = "SELECT event_name FROM events ORDER BY event_id LIMIT 2"
    result = run("sql", sql, "--tool", "search_events", "--json")
    assert json.loads(result.stdout) == sql_tool(db, "search_events")(sql)
    refused = run("sql", "SELECT * FROM daily_reports", "--tool", "search_stores", "--json")
    assert refused.exit_code == 2


def test_sql_zero_rows_exit_0(run):
    result = run("sql", "SELECT * FROM stores WHERE store_name = 'なし'", "--json")
    assert result.exit_code == 0
    assert json.loads(result.stdout) == {
        "results": [],
        "count": 0,
        "message": "検索条件に一致する店舗が見つかりませんでした",
    }
    human = run("sql", "SELECT * FROM stores WHERE store_name = 'なし'")
    assert human.exit_code == 0 and "0件" in human.stdout


def test_sql_rejected_exit_2(run):
    result = run("sql", "SELECT * FROM read_text('/etc/passwd')", "--json")
    assert result.exit_code == 2
    assert json.loads(result.stdout)["error"].startswith("SQLを実行できません")
    human = run("sql", "DROP TABLE stores")
    assert human.exit_code == 2 and "SELECT文以外" in human.stderr


def test_sql_execution_error_exit_1(run):
    result = run("sql", "SELECT nope FROM stores", "--json")
    assert result.exit_code == 1
    assert json.loads(result.stdout)["error"].startswith("SQLの実行中にエラーが発生しました")


def test_sql_human_table(run):
    result = run("sql", "SELECT store_name FROM stores WHERE category = 'cafe' ORDER BY store_id")
    assert result.exit_code == 0
    assert "港南珈琲" in result.stdout and "件" in result.stdout


def test_stats_claims(run, db):
    result = run(
        "stats",
        "claims",
        "--from",
        "2025-12-01",
        "--to",
        "2025-12-10",
        "--store",
        "新宿店",
        "--json",
    )
    assert result.exit_code == 0, result.output
    expected = get_claim_statistics(
        db, "2025-12-01", "2025-12-10", scope=StoreScope.only("新宿店")
    ).to_dict()
    assert json.loads(result.stdout) == expected
    human = run("stats", "claims", "--from", "2025-12-01", "--to", "2025-12-10")
    assert human.exit_code == 0 and "クレーム率" in human.stdout


def test_stats_sales_and_cash(run, db):
    result = run(
        "stats", "sales", "--from", "2025-11-01", "--to", "2025-11-30", "--json", "--all-stores"
    )
    assert (
        json.loads(result.stdout)
        == get_sales_trend(db, "2025-11-01", "2025-11-30", scope=StoreScope.all_stores()).to_dict()
    )
    assert run("stats", "sales", "--from", "2025-11-01", "--to", "2025-11-30").exit_code == 0
    cash = run("stats", "cash", "--to", "2025-12-31", "--days", "92", "--json")
    assert json.loads(cash.stdout)["period"]["start_date"] == "2025-10-01"
    human = run("stats", "cash", "--to", "2025-12-31", "--days", "92")
    assert human.exit_code == 0 and "過剰" in human.stdout


def test_stats_compare(run, db):
    args = [
        "--current-start",
        "2025-12-01",
        "--current-end",
        "2025-12-10",
        "--previous-start",
        "2025-11-01",
        "--previous-end",
        "2025-11-10",
    ]
    result = run("stats", "compare", "sales", *args, "--json")
    assert (
        json.loads(result.stdout)
        == compare_periods(
            db,
            "sales",
            "2025-12-01",
            "2025-12-10",
            "2025-11-01",
            "2025-11-10",
            scope=StoreScope.all_stores(),
        ).to_dict()
    )
    human = run("stats", "compare", "claim_count", *args, "--store", "渋谷店")
    assert human.exit_code == 0 and "傾向" in human.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["stats", "claims", "--from", "2025-13-01"], "YYYY-MM-DD"),
        (["stats", "sales", "--store", "梅田店", "--to", "2025-12-31"], "梅田店"),
        (["stats", "cash", "--store", "新宿店", "--all-stores"], "同時に指定できません"),
        (
            [
                "stats",
                "compare",
                "profit",
                "--current-start",
                "2025-12-01",
                "--current-end",
                "2025-12-10",
                "--previous-start",
                "2025-11-01",
                "--previous-end",
                "2025-11-10",
            ],
            "使える指標",
        ),
    ],
)
def test_stats_bad_arguments_exit_2(run, args, message):
    result = run(*args)
    assert result.exit_code == 2
    assert message in result.stderr


def test_no_registry_exit_1(app, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("TANSAKU_HOME", str(tmp_path / "empty"))
    result = CliRunner().invoke(app, ["sql", "SELECT 1"])
    assert result.exit_code == 1 and "tansaku demo" in result.stderr
    with_home = CliRunner().invoke(app, ["tables", "--home", str(tmp_path / "other")])
    assert with_home.exit_code == 1


def test_stats_period_last_month(run, db):
    result = run("stats", "claims", "--period", "先月", "--now", "2025-12-11", "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert (
        data["period"]["start_date"] == "2025-11-01" and data["period"]["end_date"] == "2025-11-30"
    )
    assert data["period_expression"] == "先月"
    expected = get_claim_statistics(db, "2025-11-01", "2025-11-30", scope=StoreScope.all_stores())
    assert data["summary"] == expected.to_dict()["summary"]
    week = json.loads(
        run("stats", "sales", "--period", "先週", "--now", "2025-12-11", "--json").stdout
    )
    assert (week["period"]["start_date"], week["period"]["end_date"]) == (
        "2025-12-01",
        "2025-12-07",
    )
    days = json.loads(
        run("stats", "cash", "--period", "過去7日", "--now", "2025-12-11", "--json").stdout
    )
    assert days["period"]["days"] == 7


def test_stats_now_sets_the_default_end(run):
    data = json.loads(
        run("stats", "claims", "--now", "2025-12-11", "--days", "10", "--json").stdout
    )
    assert data["period"]["end_date"] == "2025-12-11" and data["period"]["days"] == 10


def test_stats_period_errors(run):
    both = run("stats", "claims", "--period", "先月", "--from", "2025-11-01")
    assert both.exit_code == 2 and "同時に指定できません" in both.output
    vague = run("stats", "claims", "--period", "そのうち")
    assert vague.exit_code == 2 and "解釈できません" in vague.output


def test_sql_cli_says_the_result_was_cut(run):
    result = run("sql", "SELECT range(0, 3000000) AS r")
    assert result.exit_code == 0 and "省略しました" in result.stdout
    as_json = json.loads(run("sql", "SELECT range(0, 3000000) AS r", "--json").stdout)
    assert as_json["truncated"] is True and as_json["notice"] == TRUNCATED_NOTICE


@pytest.mark.parametrize(
    ("period", "start", "end"),
    [
        ("先月", "2025-11-01", "2025-11-30"),
        ("先週", "2025-12-01", "2025-12-07"),
        ("今月", "2025-12-01", "2025-12-11"),
        ("今週", "2025-12-08", "2025-12-11"),  # 2025-12-11 is a Thursday
        ("昨日", "2025-12-10", "2025-12-10"),
        ("今日", "2025-12-11", "2025-12-11"),
        ("過去30日", "2025-11-12", "2025-12-11"),
        ("過去３日", "2025-12-09", "2025-12-11"),  # full-width digits, as typed
    ],
)
def test_stats_period_resolves_against_now(run, period, start, end):
    data = json.loads(
        run("stats", "sales", "--period", period, "--now", "2025-12-11T09:30", "--json").stdout
    )
    assert (data["period"]["start_date"], data["period"]["end_date"]) == (start, end)
    assert data["period_expression"] == period and data["now"] == "2025-12-11T09:30+09:00"


def test_stats_period_shows_the_resolved_range(run):
    result = run("stats", "claims", "--period", "先月", "--now", "2025-12-11", "--store", "新宿店")
    assert result.exit_code == 0, result.output
    assert "期間: 「先月」 = 2025-11-01〜2025-11-30(30日、基準 2025-12-11 00:00 東京)" in (
        result.stdout
    )


def test_stats_period_and_dates_are_exclusive(run):
    for extra in (["--from", "2025-11-01"], ["--to", "2025-11-30"]):
        result = run("stats", "cash", "--period", "先週", *extra)
        assert result.exit_code == 2
        assert "--period と --from/--to は同時に指定できません" in result.stderr


def test_stats_now_must_be_a_real_time(run):
    result = run("stats", "claims", "--period", "先月", "--now", "2025-13-11")
    assert result.exit_code == 2 and "存在しない日付" in result.stderr
    loose = run("stats", "claims", "--now", "来週")
    assert loose.exit_code == 2 and "解釈できません" in loose.stderr

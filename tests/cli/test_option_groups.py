"""``option_group`` / ``grouped_options`` (options that travel together, declared once) and
``failing`` (an error of given kinds as a message and an exit code), on a small Typer app."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

import typer
from typer.testing import CliRunner

from tansaku.cli.common import (
    EXIT_ERROR,
    EXIT_REJECTED,
    JsonOpt,
    fail,
    failing,
    grouped_options,
    option_group,
)
from tansaku.errors import ConfigError, TansakuError

runner = CliRunner()


@dataclass(frozen=True)
class Shop:
    store: str
    open_late: bool


def shop(
    store: Annotated[str, typer.Option("--store", help="店舗名")] = "新宿店",
    open_late: Annotated[bool, typer.Option("--late", help="深夜営業")] = False,
) -> Shop:
    if store == "架空店":
        raise fail("店舗「架空店」はありません", EXIT_REJECTED)
    return Shop(store, open_late)


SHOP = option_group(shop)


def _app() -> typer.Typer:
    app = typer.Typer(add_completion=False)

    @app.command()
    @grouped_options
    def report(
        title: Annotated[str, typer.Argument(help="見出し")],
        where: Shop = SHOP,
        as_json: JsonOpt = False,
    ) -> None:
        """日報を表示する。"""
        typer.echo(f"{title} {where.store} {where.open_late} {as_json}")

    @app.command()
    def other() -> None:
        pass

    return app


def test_the_group_options_stand_in_its_place_and_the_command_gets_what_they_build() -> None:
    app = _app()
    done = runner.invoke(app, ["report", "売上", "--store", "渋谷店", "--late", "--json"])
    assert done.exit_code == 0, done.output
    assert done.stdout.split() == ["売上", "渋谷店", "True", "True"]
    assert runner.invoke(app, ["report", "売上"]).stdout.split() == [
        "売上",
        "新宿店",
        "False",
        "False",
    ]
    shown = runner.invoke(app, ["report", "--help"], env={"COLUMNS": "120"}).stdout
    assert "日報を表示する。" in shown
    assert shown.index("--store") < shown.index("--late") < shown.index("--json")
    assert "--where" not in shown


def test_a_bad_option_of_the_group_ends_the_command_before_it_runs() -> None:
    done = runner.invoke(_app(), ["report", "売上", "--store", "架空店"])
    assert done.exit_code == EXIT_REJECTED
    assert "店舗「架空店」はありません" in done.output
    assert "売上" not in done.stdout


def _raise(exc: Exception) -> None:
    with failing(EXIT_ERROR, TansakuError), failing(EXIT_REJECTED, ConfigError, ValueError):
        raise exc


def test_failing_gives_each_kind_its_exit_code_and_lets_others_through() -> None:
    for exc, code in (
        (ConfigError("設定「fusion」が不正です"), EXIT_REJECTED),
        (ValueError("日付「2025-13-01」を読めません"), EXIT_REJECTED),
        (TansakuError("ワークスペースを開けません"), EXIT_ERROR),
    ):
        try:
            _raise(exc)
        except typer.Exit as ended:
            assert ended.exit_code == code
        else:
            raise AssertionError(f"{exc!r} did not end the command")
    try:
        _raise(KeyError("店舗"))
    except KeyError:
        pass
    else:
        raise AssertionError("an error of no listed kind must pass through")

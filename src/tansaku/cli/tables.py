"""CLI commands for tables: ``tables``, ``sql`` and ``stats`` (a thin adapter over tansaku.tables).

``register(app)`` adds them to the main ``tansaku`` app; ``tables reload | infer | add`` live in
``tables_manage.py``. Every ``sql`` query run or refused is a line of the workspace's SQL audit
log (``logs/sql-audit.jsonl``). Exit codes: 0 for results (zero rows
included), 2 for a rejected query or bad arguments, 1 for an execution or configuration error.
``--json`` prints one JSON object on stdout (``ensure_ascii=False``); for ``sql`` it is the
outcome exactly as the agent's tool returns it.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from tansaku.cli import tables_manage as manage
from tansaku.cli.common import (
    EXIT_ERROR,
    EXIT_OK,
    EXIT_REJECTED,
    HomeOpt,
    JsonOpt,
    emit_json,
    fail,
    failing,
    grouped_options,
    library_errors,
    option_group,
    parse_now,
)
from tansaku.cli.stats_render import (
    cell,
    render_cash,
    render_claims,
    render_compare,
    render_sales,
)
from tansaku.tables import (
    AnalyticsError,
    SqlFailed,
    SqlRejected,
    StoreScope,
    TableDatabase,
    compare_periods,
    get_cash_difference_analysis,
    get_claim_statistics,
    get_sales_trend,
    load_tables_config,
    sql_tool,
)
from tansaku.tables.results import TRUNCATED_NOTICE
from tansaku.workspace import Workspace

StoreOpt = Annotated[str | None, typer.Option("--store", help="この店舗の日報だけを集計する")]
AllStoresOpt = Annotated[bool, typer.Option("--all-stores", help="全店舗を集計する(既定)")]
FromOpt = Annotated[str | None, typer.Option("--from", help="開始日 YYYY-MM-DD")]
ToOpt = Annotated[str | None, typer.Option("--to", help="終了日 YYYY-MM-DD(既定: 今日)")]
DaysOpt = Annotated[int, typer.Option("--days", help="日数(開始日か終了日の一方だけのとき)")]
PeriodOpt = Annotated[
    str | None,
    typer.Option(
        "--period",
        help="期間: 先月・先週・今月・今週・昨日・今日・過去N日(--from/--to の代わり)",
    ),
]
NowOpt = Annotated[
    str | None,
    typer.Option(
        "--now", help="「先月」や既定の終了日の基準日時 YYYY-MM-DD[THH:MM](既定: 現在の東京時刻)"
    ),
]

stats_app = typer.Typer(
    help="日報の集計: クレーム・売上・現金過不足・期間比較", no_args_is_help=True
)


def _out() -> Console:
    return Console(soft_wrap=False)


def _open(home: Path | None) -> TableDatabase:
    ws = Workspace.from_env(home)
    with library_errors(EXIT_ERROR):
        return TableDatabase(load_tables_config(ws.tables_file), audit_log=ws.sql_audit_file)


def list_tables(json_out: JsonOpt = False, home: HomeOpt = None) -> None:
    """登録済みのテーブルを一覧表示する。"""
    db = _open(home)
    with db:
        tools: dict[str, list[str]] = {}
        for tool in db.config.tools:
            for name in tool.tables:
                tools.setdefault(name, []).append(tool.name)
        items: list[dict[str, Any]] = [
            {
                "name": t.name,
                "path": str(t.path),
                "rows": db.row_count(t.name),
                "columns": [c for c, _ in db.columns(t.name)],
                "tools": tools.get(t.name, []),
                "description": t.description,
            }
            for t in db.config.tables
        ]
    if json_out:
        emit_json({"tables": items})
        return
    if not items:
        _out().print("テーブルはまだありません。`tansaku demo` でサンプルを登録できます")
        return
    table = Table()
    for head in ("テーブル", "行数", "列数", "SQLツール", "説明", "ファイル"):
        table.add_column(
            head, overflow="fold", justify="right" if head in ("行数", "列数") else "left"
        )
    for item in items:
        table.add_row(
            item["name"],
            str(item["rows"]),
            str(len(item["columns"])),
            ", ".join(item["tools"]) or "-",
            item["description"],
            item["path"],
        )
    _out().print(table)


def run_sql(
    sql: Annotated[str, typer.Argument(help="実行する SELECT 文")],
    json_out: JsonOpt = False,
    tool: Annotated[
        str, typer.Option("--tool", help="このSQLツールとして実行する(既定 sql: 全テーブル)")
    ] = "sql",
    home: HomeOpt = None,
) -> None:
    """SELECT 文を安全なサンドボックスで実行する(エージェントのSQLツールと同じ検査と制限)。"""
    db = _open(home)
    with db:
        with library_errors(EXIT_REJECTED):
            runner = sql_tool(db, tool)
        outcome = runner.run(sql)
    code = (
        EXIT_REJECTED
        if isinstance(outcome, SqlRejected)
        else EXIT_ERROR
        if isinstance(outcome, SqlFailed)
        else EXIT_OK
    )
    if json_out:
        emit_json(outcome.to_dict())
        raise typer.Exit(code)
    if isinstance(outcome, SqlRejected | SqlFailed):
        raise fail(outcome.error, code)
    out = _out()
    if not outcome.results:
        out.print(f"0件: {outcome.message}")
        return
    table = Table()
    for column in outcome.results[0]:
        table.add_column(column, overflow="fold")
    for row in outcome.results:
        table.add_row(*(cell(v) for v in row.values()))
    out.print(table)
    out.print(f"{outcome.count}件")
    if outcome.truncated:
        out.print(f"[yellow]{TRUNCATED_NOTICE}[/]")


# --- stats ---------------------------------------------------------------------------------------


def _scope(store: StoreOpt = None, all_stores: AllStoresOpt = False) -> StoreScope:
    """The stores a statistic covers: ``--store`` or ``--all-stores`` (the default)."""
    if store and all_stores:
        raise fail("--store と --all-stores は同時に指定できません", EXIT_REJECTED)
    return StoreScope.only(store) if store else StoreScope.all_stores()


SCOPE_OPTIONS = option_group(_scope)


@dataclass(frozen=True)
class _Dates:
    """What the stats commands pass on: the dates, and how a --period was read (for output)."""

    start: str | None
    end: str | None
    period: str | None = None
    now: datetime | None = None


def _dates(
    date_from: str | None, date_to: str | None, period: str | None, now: str | None
) -> _Dates:
    """--from/--to as given, or the days --period names against --now (or now in Tokyo, read
    once); --now alone sets the default end date. Relative periods are resolved by
    ``tansaku.text.dates``, the same rules as the dates in search queries."""
    from tansaku.tables.period import period_of
    from tansaku.text.dates import now_tokyo

    clock = parse_now(now or None)
    if period is not None:
        if date_from or date_to:
            raise fail(
                "--period と --from/--to は同時に指定できません。どちらか一方にしてください",
                EXIT_REJECTED,
            )
        clock = clock or now_tokyo()
        with failing(EXIT_REJECTED, AnalyticsError):
            p = period_of(period, clock)
        return _Dates(p.start.isoformat(), p.end.isoformat(), period.strip(), clock)
    if clock is not None and not date_to:
        return _Dates(date_from, clock.date().isoformat(), None, clock)
    return _Dates(date_from, date_to, None, clock)


def _run_stats(
    home: Path | None,
    json_out: bool,
    compute: Any,
    render: Any,
    dates: _Dates | None = None,
) -> None:
    db = _open(home)
    with db, library_errors(EXIT_ERROR), failing(EXIT_REJECTED, AnalyticsError):
        result = compute(db)
    data = result.to_dict()
    if dates is not None and dates.period is not None:
        data["period_expression"] = dates.period
    if dates is not None and dates.now is not None:
        data["now"] = dates.now.isoformat(timespec="minutes")
    if json_out:
        emit_json(data)
        return
    if dates is not None and dates.period is not None and dates.now is not None:
        resolved = data["period"]
        _out().print(
            f"期間: 「{escape(dates.period)}」 = {resolved['start_date']}〜{resolved['end_date']}"
            f"({resolved['days']}日、基準 {dates.now:%Y-%m-%d %H:%M} 東京)",
            highlight=False,
        )
    render(_out(), data)


def _period_command(fetch: Any, render: Any, doc: str) -> Any:
    """A ``stats`` command over one period (the options every period statistic shares)."""

    def command(
        date_from: FromOpt = None,
        date_to: ToOpt = None,
        days: DaysOpt = 30,
        period: PeriodOpt = None,
        now: NowOpt = None,
        scope: StoreScope = SCOPE_OPTIONS,
        json_out: JsonOpt = False,
        home: HomeOpt = None,
    ) -> None:
        dates = _dates(date_from, date_to, period, now)
        _run_stats(
            home,
            json_out,
            lambda db: fetch(db, dates.start, dates.end, days, scope=scope),
            render,
            dates,
        )

    command.__doc__ = doc
    return grouped_options(command)


for _name, _fetch, _render, _doc in (
    (
        "claims",
        get_claim_statistics,
        render_claims,
        "クレーム統計(件数・発生率・日別・最近のクレーム)。",
    ),
    ("sales", get_sales_trend, render_sales, "売上トレンド(合計・平均・日別・週平均)。"),
    (
        "cash",
        get_cash_difference_analysis,
        render_cash,
        "現金過不足分析(発生件数・率・合計・過剰/不足の内訳・最近の発生)。",
    ),
):
    stats_app.command(_name)(_period_command(_fetch, _render, _doc))


@stats_app.command("compare")
@grouped_options
def stats_compare(
    metric: Annotated[str, typer.Argument(help="指標: sales / claim_count / cash_diff")],
    current_start: Annotated[str, typer.Option("--current-start", help="今期の開始日")],
    current_end: Annotated[str, typer.Option("--current-end", help="今期の終了日")],
    previous_start: Annotated[str, typer.Option("--previous-start", help="前期の開始日")],
    previous_end: Annotated[str, typer.Option("--previous-end", help="前期の終了日")],
    scope: StoreScope = SCOPE_OPTIONS,
    json_out: JsonOpt = False,
    home: HomeOpt = None,
) -> None:
    """2つの期間で指標を比較する(差・変化率・増加/減少/横ばい)。"""
    _run_stats(
        home,
        json_out,
        lambda db: compare_periods(
            db, metric, current_start, current_end, previous_start, previous_end, scope=scope
        ),
        render_compare,
    )


tables_app = typer.Typer(
    help="登録済みのテーブル: 一覧(サブコマンドなし)・読み込み直し・推定・登録",
    invoke_without_command=True,
)


@tables_app.callback()
def tables_group(ctx: typer.Context, json_out: JsonOpt = False, home: HomeOpt = None) -> None:
    """登録済みのテーブルを一覧表示する(reload: 読み込み直す / infer: 設定を推定 / add: 登録)。"""
    if ctx.invoked_subcommand is None:
        list_tables(json_out, home)


manage.register(tables_app)


def register(app: typer.Typer) -> None:
    """Add ``tables`` (and its subcommands), ``sql`` and the ``stats`` sub-app to the main app."""
    app.add_typer(tables_app, name="tables")
    app.command("sql")(run_sql)
    app.add_typer(stats_app, name="stats")

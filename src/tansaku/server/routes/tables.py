"""Tables: ``GET /api/tables``, ``POST /api/sql``, ``POST /api/tables/reload`` and
``GET /api/stats/{kind}`` over the workspace's registered tables (the same checks, sandbox and
results as ``tansaku sql`` / ``tansaku tables reload`` / ``tansaku stats --json`` and the
agent's tools). Tables belong to the workspace, not to a team; a key is still required wherever
keys are, and the SQL audit log names the key's team."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Query
from fastapi.responses import Response

from tansaku.errors import ConfigError, InvalidRequest, public_message
from tansaku.server.dates import DateFrom, DateText, DateTo, check_date_text
from tansaku.server.errors import ApiError
from tansaku.server.respond import json_response
from tansaku.server.responses import WRITE, documented
from tansaku.server.responses.tables import SqlResult, StatsResult, TableList, TablesReloaded
from tansaku.server.schemas import Body, Name, SqlBody
from tansaku.server.state import StateDep, TeamDep

router = APIRouter(tags=["テーブル"])


class TablesReloadBody(Body):
    table: Name | None = None
    """The table to reload (absent: every table)."""


@router.get(
    "/api/tables",
    summary="テーブル一覧",
    responses=documented(TableList, 404, 501),
)
def list_tables(state: StateDep, team: TeamDep) -> Response:
    return json_response({"tables": table_summaries(state.tables())})


def table_summaries(db: Any) -> list[dict[str, Any]]:
    """Each registered table of ``db`` (a ``TableDatabase``) with its rows, its columns and
    their types, and the SQL tools that read it (``GET /api/tables`` and the overview page)."""
    tools: dict[str, list[str]] = {}
    for tool in db.config.tools:
        for name in tool.tables:
            tools.setdefault(name, []).append(tool.name)
    return [
        {
            "name": t.name,
            "rows": db.row_count(t.name),
            "columns": [{"name": c, "type": kind} for c, kind in db.columns(t.name)],
            "tools": tools.get(t.name, []),
            "description": t.description,
        }
        for t in db.config.tables
    ]


@router.post(
    "/api/sql",
    summary="読み取り専用 SQL",
    responses=documented(SqlResult, *WRITE, 404, 501),
)
def run_sql(body: SqlBody, state: StateDep, team: TeamDep) -> Response:
    """SELECT 文 1 つを安全なサンドボックスで実行する。
    例: `{"sql": "SELECT store_name FROM stores WHERE pets_allowed = 'TRUE'"}`"""
    from tansaku.tables import SqlFailed, SqlRejected, sql_tool

    runner = sql_tool(state.tables().for_team(team), body.tool)
    outcome = runner.run(body.sql)
    if isinstance(outcome, SqlRejected):
        raise ApiError(400, "sql_rejected", outcome.error)
    if isinstance(outcome, SqlFailed):
        raise ApiError(400, "sql_failed", outcome.error)
    return json_response(outcome.to_dict())


@router.post(
    "/api/tables/reload",
    summary="テーブルの読み込み直し",
    responses=documented(TablesReloaded, *WRITE, 404, 501),
)
def reload_tables(state: StateDep, team: TeamDep, body: TablesReloadBody | None = None) -> Response:
    """テーブルのファイル(CSV / Parquet)を読み込み直す。本文 `{"table": "stores"}` で1つだけ、
    本文なしですべて。読めないファイルは 422 `reload_failed` で、そのテーブルは前の内容のまま。
    ファイルが変わったテーブルはクエリの前にも自動で読み込み直す。"""
    db = state.tables()
    names = [body.table] if body is not None and body.table else None
    try:
        report = db.reload(names)
    except ConfigError as exc:
        raise ApiError(404, "table_not_found", str(exc)) from None
    home = state.client.workspace.home
    tables = [
        t.to_dict() | {"error": public_message(t.error, home=home) if t.error else None}
        for t in report.tables
    ]
    if not report.ok:
        raise ApiError(
            422,
            "reload_failed",
            " / ".join(public_message(t.error or "", home=home) for t in report.failed),
            extra={"tables": tables},
        )
    return json_response({"ok": True, "tables": tables})


def _clock(now: str | None) -> datetime | None:
    if not now:
        return None
    from tansaku.text.dates import parse_now

    try:
        return parse_now(now)
    except ValueError as exc:
        raise InvalidRequest(str(exc)) from None


def _dates(
    date_from: str | None, date_to: str | None, period: str | None, now: str | None
) -> tuple[str | None, str | None, dict[str, Any]]:
    """--from/--to, or the days ``period`` names against ``now``; as ``tansaku stats``."""
    from tansaku.tables.period import period_of
    from tansaku.text.dates import now_tokyo

    clock = _clock(now)
    extra: dict[str, Any] = {}
    if period:
        if date_from or date_to:
            raise InvalidRequest(
                "period と from/to は同時に指定できません。どちらか一方にしてください"
            )
        clock = clock or now_tokyo()
        p = period_of(period, clock)
        extra = {"period_expression": period.strip(), "now": clock.isoformat(timespec="minutes")}
        return p.start.isoformat(), p.end.isoformat(), extra
    if clock is not None:
        extra["now"] = clock.isoformat(timespec="minutes")
        return date_from, date_to or clock.date().isoformat(), extra
    return date_from, date_to, extra


@router.get(
    "/api/stats/{kind}",
    summary="日報の集計",
    responses=documented(StatsResult, 400, 404, 422, 501),
)
def stats(
    kind: Literal["claims", "sales", "cash", "compare"],
    state: StateDep,
    team: TeamDep,
    date_from: DateFrom = None,
    date_to: DateTo = None,
    days: Annotated[int, Query(ge=1, le=3660)] = 30,
    period: Annotated[str | None, Query(max_length=40)] = None,
    now: DateText = None,
    store: Annotated[str | None, Query(max_length=200)] = None,
    metric: Annotated[str | None, Query(max_length=40)] = None,
    current_start: DateText = None,
    current_end: DateText = None,
    previous_start: DateText = None,
    previous_end: DateText = None,
) -> Response:
    """claims(クレーム)・sales(売上)・cash(現金過不足)は `from`/`to`/`days` か
    `period`(先月・先週・過去7日 …)と `now`、`store` で。compare は `metric`(sales /
    claim_count / cash_diff)と 2 つの期間。例: `/api/stats/claims?period=先月&store=新宿店`"""
    from tansaku.tables import (
        StoreScope,
        compare_periods,
        get_cash_difference_analysis,
        get_claim_statistics,
        get_sales_trend,
    )

    named = {
        "from": date_from,
        "to": date_to,
        "now": now,
        "current_start": current_start,
        "current_end": current_end,
        "previous_start": previous_start,
        "previous_end": previous_end,
    }
    for parameter, value in named.items():
        check_date_text(value, parameter)
    scope = StoreScope.only(store) if store else StoreScope.all_stores()
    db = state.tables()
    if kind == "compare":
        if not (metric and current_start and current_end and previous_start and previous_end):
            raise InvalidRequest(
                "compare には metric, current_start, current_end, previous_start, "
                "previous_end が必要です"
            )
        result = compare_periods(
            db, metric, current_start, current_end, previous_start, previous_end, scope=scope
        )
        return json_response(result.to_dict())
    start, end, extra = _dates(date_from, date_to, period, now)
    computes: dict[str, Callable[..., Any]] = {
        "claims": get_claim_statistics,
        "sales": get_sales_trend,
        "cash": get_cash_difference_analysis,
    }
    stats_result = computes[kind](db, start, end, days, scope=scope)
    return json_response(stats_result.to_dict() | extra)

"""The daily-report table as the analytics functions see it, and their number formatting.

``ReportQuery`` runs the library's own parameterised SQL for one store scope and period in the
same locked sandbox as the agent's queries. ``period_statistic`` gives each statistic the one
signature they all share (dates, days, scope, today, recent_limit, table) and hands it a
``PeriodQuery``: the period resolved and the table checked once. Averages and rates round half
away from zero (``-187.5`` → ``-188``, ``12.25%`` → ``12.3%``).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date
from decimal import ROUND_HALF_UP, Decimal
from typing import Any, Generic, TypeVar

from tansaku.tables.period import AnalyticsError, Period, StoreScope, resolve_period
from tansaku.tables.sandbox import TableDatabase

DAILY_REPORTS = "daily_reports"
REQUIRED_COLUMNS = ("date", "store", "author", "sales", "claim", "claim_content", "cash_difference")


def round_half_up(value: Decimal | int | float) -> int:
    return int(Decimal(value).quantize(Decimal(1), rounding=ROUND_HALF_UP))


def percent(numerator: int, denominator: int) -> str | None:
    """``"12.5%"`` (one decimal, half away from zero); ``None`` when the denominator is 0."""
    if denominator == 0:
        return None
    rate = (Decimal(numerator) * 100 / Decimal(denominator)).quantize(
        Decimal("0.1"), rounding=ROUND_HALF_UP
    )
    return f"{rate}%"


class JsonResult:
    """``to_json()`` for results that define ``to_dict()``."""

    def to_dict(self) -> dict[str, Any]:
        raise NotImplementedError

    def to_json(self, *, indent: int | None = 2) -> str:
        return json.dumps(self.to_dict(), ensure_ascii=False, indent=indent)


NO_REPORTS = "指定期間の日報がありません"


@dataclass(frozen=True)
class PeriodResult(JsonResult):
    """A statistic over one period and store scope. ``to_dict`` wraps ``body()`` in the envelope
    every analytics result shares: period, store scope, and a message when the period holds no
    reports (``reports_counted``)."""

    period: Period
    scope: StoreScope

    @property
    def reports_counted(self) -> int:
        raise NotImplementedError

    def body(self) -> dict[str, Any]:
        raise NotImplementedError

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"period": self.period.to_dict(), "store": self.scope.label}
        out.update(self.body())
        if not self.reports_counted:
            out["message"] = NO_REPORTS
        return out


# --- the table -----------------------------------------------------------------------------------


class ReportQuery:
    """Parameterised queries over the daily-report table for one scope and period.

    Checks that the table is registered and has the report columns, and (for a one-store
    scope) that the store has reports, so mistakes surface as clear ``AnalyticsError``s.
    """

    def __init__(self, db: TableDatabase, table: str, scope: StoreScope) -> None:
        spec = db.config.table(table)  # unknown names raise here, so quoting below is safe
        present = {name.lower() for name, _ in db.columns(spec.name)}
        self.columns = frozenset(present)
        """The table's column names, lower case."""
        missing = [c for c in REQUIRED_COLUMNS if c not in present]
        if missing:
            raise AnalyticsError(f"テーブル「{table}」に日報の列 {', '.join(missing)} がありません")
        self.db, self.table, self.scope = db, f'"{spec.name}"', scope
        if scope.store is not None:
            stores = [
                r[0] for r in db.execute(f"SELECT DISTINCT store FROM {self.table} ORDER BY 1").rows
            ]
            if scope.store not in stores:
                raise AnalyticsError(
                    f"店舗「{scope.store}」の日報はありません。"
                    f"登録されている店舗: {', '.join(stores)}"
                )

    def rows(
        self,
        select: str,
        period: Period,
        *,
        where: str = "",
        tail: str = "",
        params: tuple[Any, ...] = (),
    ) -> list[tuple[Any, ...]]:
        clauses = ['"date" BETWEEN CAST(? AS DATE) AND CAST(? AS DATE)']
        args: list[Any] = [period.start, period.end]
        if self.scope.store is not None:
            clauses.append("store = ?")
            args.append(self.scope.store)
        if where:
            clauses.append(where)
        sql = f"SELECT {select} FROM {self.table} WHERE {' AND '.join(clauses)} {tail}"
        return [tuple(r) for r in self.db.execute(sql, [*args, *params]).rows]


@dataclass(frozen=True)
class PeriodQuery:
    """What a period statistic reads: the daily-report table for one scope, the inclusive period,
    and how many recent cases to list (for the statistics that list them)."""

    reports: ReportQuery
    period: Period
    recent_limit: int = 10

    @property
    def scope(self) -> StoreScope:
        return self.reports.scope

    def rows(
        self, select: str, *, where: str = "", tail: str = "", params: tuple[Any, ...] = ()
    ) -> list[tuple[Any, ...]]:
        """``ReportQuery.rows`` over this query's period."""
        return self.reports.rows(select, self.period, where=where, tail=tail, params=params)

    def per_day(
        self, select: str, where: str, *, newest_first: bool = True
    ) -> list[tuple[Any, ...]]:
        """``date, <select>`` for each day with a report matching ``where``."""
        order = "DESC" if newest_first else "ASC"
        return self.rows(
            f'"date", {select}', where=where, tail=f'GROUP BY "date" ORDER BY "date" {order}'
        )

    def recent(self, select: str, where: str) -> list[tuple[Any, ...]]:
        """``date, store, author, <select>`` of the newest ``recent_limit`` reports matching
        ``where``."""
        return self.rows(
            f'"date", store, author, {select}',
            where=where,
            tail='ORDER BY "date" DESC, store LIMIT ?',
            params=(self.recent_limit,),
        )


R = TypeVar("R")


class period_statistic(Generic[R]):
    """``compute(query)`` as a statistic taking the dates (``resolve_period``), the store scope
    and the table: the period is resolved first, then the table and store are checked."""

    def __init__(self, compute: Callable[[PeriodQuery], R]) -> None:
        self.compute = compute
        self.__name__ = self.__qualname__ = compute.__name__
        self.__doc__ = compute.__doc__
        self.__module__ = compute.__module__

    def __call__(
        self,
        db: TableDatabase,
        date_from: date | str | None = None,
        date_to: date | str | None = None,
        days: int = 30,
        *,
        scope: StoreScope,
        today: date | None = None,
        recent_limit: int = 10,
        table: str = DAILY_REPORTS,
    ) -> R:
        period = resolve_period(date_from, date_to, days, today=today)
        return self.compute(PeriodQuery(ReportQuery(db, table, scope), period, recent_limit))


def iso(value: Any) -> str:
    """Dates as ``YYYY-MM-DD`` (the sandbox already returns ISO text)."""
    return value.isoformat() if isinstance(value, date) else str(value)


def as_int(value: Any) -> int:
    return int(value or 0)

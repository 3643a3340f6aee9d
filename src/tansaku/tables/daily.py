"""The daily-report table as the analytics functions see it, and their number formatting.

``ReportQuery`` runs the library's own parameterised SQL for one store scope and period in the
same locked sandbox as the agent's queries. Averages and rates round half away from zero
(``-187.5`` → ``-188``, ``12.25%`` → ``12.3%``).
"""

from __future__ import annotations

import json
from datetime import date
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

from tansaku.tables.period import AnalyticsError, Period, StoreScope
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


def period_result(
    period: Any, scope: Any, body: dict[str, Any], *, report_count: int
) -> dict[str, Any]:
    """The envelope every analytics result shares: period, store scope, the body, and a message
    when the period holds no reports."""
    out: dict[str, Any] = {"period": period.to_dict(), "store": scope.label, **body}
    if not report_count:
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


def iso(value: Any) -> str:
    """Dates as ``YYYY-MM-DD`` (the sandbox already returns ISO text)."""
    return value.isoformat() if isinstance(value, date) else str(value)


def as_int(value: Any) -> int:
    return int(value or 0)

"""``compare_periods``: one metric of the daily reports over two periods.

Metrics: ``sales`` (売上合計, 円), ``claim_count`` (クレーム件数, 件), ``cash_diff`` (現金過不足の
合計, 円; surplus positive, shortage negative). The result has both values, the difference,
the change rate (``None`` with a note when the previous value is 0) and 増加/減少/横ばい
(横ばい only for an exact tie).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from enum import StrEnum
from typing import Any

from tansaku.config import enum_choice
from tansaku.tables.daily import DAILY_REPORTS, JsonResult, ReportQuery, as_int, percent
from tansaku.tables.period import AnalyticsError, Period, StoreScope, parse_date
from tansaku.tables.sandbox import TableDatabase


class Metric(StrEnum):
    SALES = "sales"
    CLAIM_COUNT = "claim_count"
    CASH_DIFF = "cash_diff"

    @classmethod
    def from_str(cls, value: str | Metric) -> Metric:
        return enum_choice(
            cls,
            str(value.value if isinstance(value, Metric) else value).strip().lower(),
            lambda valid: AnalyticsError(f"指標「{value}」は使えません。使える指標: {valid}"),
        )


_METRIC_SQL = {
    Metric.SALES: ("coalesce(sum(sales), 0)", "円", "売上合計"),
    Metric.CLAIM_COUNT: ("count(*) FILTER (WHERE claim)", "件", "クレーム件数"),
    Metric.CASH_DIFF: (
        "coalesce(sum(cash_difference), 0)",
        "円",
        "現金過不足の合計(過剰はプラス、不足はマイナス)",
    ),
}


@dataclass(frozen=True)
class PeriodValue:
    period: Period
    value: int
    report_count: int

    def to_dict(self) -> dict[str, Any]:
        return {
            "start": self.period.start.isoformat(),
            "end": self.period.end.isoformat(),
            "value": self.value,
            "report_count": self.report_count,
        }


@dataclass(frozen=True)
class PeriodComparison(JsonResult):
    metric: Metric
    scope: StoreScope
    current: PeriodValue
    previous: PeriodValue

    @property
    def diff(self) -> int:
        return self.current.value - self.previous.value

    @property
    def change_rate(self) -> str | None:
        """``None`` when the previous value is 0 (no rate of change from nothing)."""
        return percent(self.diff, self.previous.value) if self.previous.value else None

    @property
    def trend(self) -> str:
        return "増加" if self.diff > 0 else "減少" if self.diff < 0 else "横ばい"

    def to_dict(self) -> dict[str, Any]:
        _, unit, meaning = _METRIC_SQL[self.metric]
        comparison: dict[str, Any] = {
            "diff": self.diff,
            "change_rate": self.change_rate,
            "trend": self.trend,
        }
        if self.change_rate is None:
            comparison["note"] = "前期間の値が0のため変化率は計算できません"
        return {
            "metric": self.metric.value,
            "description": meaning,
            "unit": unit,
            "store": self.scope.label,
            "current_period": self.current.to_dict(),
            "previous_period": self.previous.to_dict(),
            "comparison": comparison,
        }


def compare_periods(
    db: TableDatabase,
    metric: str | Metric,
    current_start: date | str,
    current_end: date | str,
    previous_start: date | str,
    previous_end: date | str,
    *,
    scope: StoreScope,
    table: str = DAILY_REPORTS,
) -> PeriodComparison:
    """期間比較: 2つの期間で指標(sales / claim_count / cash_diff)を比較する。"""
    chosen = Metric.from_str(metric)
    current = Period(
        parse_date(current_start, "今期の開始日"), parse_date(current_end, "今期の終了日")
    )
    previous = Period(
        parse_date(previous_start, "前期の開始日"), parse_date(previous_end, "前期の終了日")
    )
    reports = ReportQuery(db, table, scope)
    expr = _METRIC_SQL[chosen][0]

    def measure(period: Period) -> PeriodValue:
        ((value, count),) = reports.rows(f"{expr}, count(*)", period)
        return PeriodValue(period, as_int(value), as_int(count))

    return PeriodComparison(chosen, scope, measure(current), measure(previous))

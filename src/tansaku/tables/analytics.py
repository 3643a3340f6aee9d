"""Analytics over the daily-report table, scoped to what the caller may see.

Three typed functions (``compare.py`` has the fourth, ``compare_periods``), each returning a
frozen dataclass with ``to_dict()`` / ``to_json()`` in the shape of the analytics design
(``period``, ``summary``, ``daily_trend`` …):

- ``get_claim_statistics`` — reports, claims, claim rate, claims per day, recent claims;
- ``get_sales_trend`` — total, average per report, sales per day, weekly averages;
- ``get_cash_difference_analysis`` — reports with a cash difference, rate, total, average,
  plus/minus breakdown, per day, recent cases.

Periods are inclusive (``period.py``); the scope is mandatory and comes from the caller, never
from the LLM.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, timedelta
from decimal import Decimal
from typing import Any

from tansaku.tables.daily import (
    PeriodQuery,
    PeriodResult,
    as_int,
    iso,
    percent,
    period_statistic,
    round_half_up,
)
from tansaku.tables.period import Period, parse_date

# --- claims --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class DayCount:
    date: str
    count: int


@dataclass(frozen=True)
class ClaimCase:
    date: str
    store: str
    author: str
    content: str


@dataclass(frozen=True)
class ClaimStatistics(PeriodResult):
    total_reports: int
    claim_count: int
    daily_trend: tuple[DayCount, ...]
    """Days with at least one claim, newest first."""
    recent_claims: tuple[ClaimCase, ...]

    @property
    def claim_rate(self) -> str | None:
        return percent(self.claim_count, self.total_reports)

    def body(self) -> dict[str, Any]:
        return {
            "summary": {
                "total_reports": self.total_reports,
                "claim_count": self.claim_count,
                "claim_rate": self.claim_rate,
            },
            "daily_trend": [vars(d) for d in self.daily_trend],
            "recent_claims": [vars(c) for c in self.recent_claims],
        }

    @property
    def reports_counted(self) -> int:
        return self.total_reports


@period_statistic
def get_claim_statistics(query: PeriodQuery) -> ClaimStatistics:
    """クレーム統計: 指定期間のクレーム件数・発生率・日別件数・最近のクレーム内容。"""
    ((total, claims),) = query.rows("count(*), count(*) FILTER (WHERE claim)")
    trend = query.per_day("count(*)", "claim")
    recent = query.recent("claim_content", "claim")
    return ClaimStatistics(
        period=query.period,
        scope=query.scope,
        total_reports=as_int(total),
        claim_count=as_int(claims),
        daily_trend=tuple(DayCount(iso(d), as_int(n)) for d, n in trend),
        recent_claims=tuple(ClaimCase(iso(d), s, a, c) for d, s, a, c in recent),
    )


# --- sales ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class DaySales:
    date: str
    sales: int


@dataclass(frozen=True)
class WeekAverage:
    start: str
    end: str
    avg_sales: int
    report_count: int

    @property
    def label(self) -> str:
        return f"{self.start[5:7]}/{self.start[8:]}-{self.end[5:7]}/{self.end[8:]}"


@dataclass(frozen=True)
class StoreSales:
    store: str
    sales: int
    report_count: int


@dataclass(frozen=True)
class SalesTrend(PeriodResult):
    total_sales: int
    report_count: int
    daily_trend: tuple[DaySales, ...]
    """Sales summed over the scope's stores per day, oldest first."""
    weekly_avg: tuple[WeekAverage, ...]
    """Average per report in 7-day blocks from the period start (weeks without reports left out)."""
    by_store: tuple[StoreSales, ...] = ()
    """Sales per store, highest first (the scope's one store when it names one)."""

    @property
    def avg_sales(self) -> int:
        return (
            round_half_up(Decimal(self.total_sales) / self.report_count) if self.report_count else 0
        )

    def body(self) -> dict[str, Any]:
        return {
            "summary": {
                "total_sales": self.total_sales,
                "avg_sales": self.avg_sales,
                "report_count": self.report_count,
            },
            "daily_trend": [vars(d) for d in self.daily_trend],
            "weekly_avg": [
                {"week": w.label, "avg_sales": w.avg_sales, "report_count": w.report_count}
                for w in self.weekly_avg
            ],
            "by_store": [vars(b) for b in self.by_store],
        }

    @property
    def reports_counted(self) -> int:
        return self.report_count


def _weeks(period: Period, per_day: list[tuple[date, int, int]]) -> tuple[WeekAverage, ...]:
    buckets: dict[int, list[int]] = {}
    for day, total, count in per_day:
        bucket = buckets.setdefault((day - period.start).days // 7, [0, 0])
        bucket[0] += total
        bucket[1] += count
    weeks = []
    for index, (total, count) in sorted(buckets.items()):
        start = period.start + timedelta(days=7 * index)
        end = min(start + timedelta(days=6), period.end)
        weeks.append(
            WeekAverage(
                start.isoformat(), end.isoformat(), round_half_up(Decimal(total) / count), count
            )
        )
    return tuple(weeks)


@period_statistic
def get_sales_trend(query: PeriodQuery) -> SalesTrend:
    """売上トレンド: 指定期間の売上合計・日報1件あたり平均・日別売上・週平均。"""
    per_day = query.per_day("sum(sales), count(sales)", "sales IS NOT NULL", newest_first=False)
    rows = [(parse_date(iso(d)), as_int(s), as_int(n)) for d, s, n in per_day]
    per_store = query.rows(
        "store, sum(sales), count(sales)",
        where="sales IS NOT NULL",
        tail="GROUP BY store ORDER BY sum(sales) DESC, store",
    )
    return SalesTrend(
        period=query.period,
        scope=query.scope,
        total_sales=sum(s for _, s, _ in rows),
        report_count=sum(n for _, _, n in rows),
        daily_trend=tuple(DaySales(d.isoformat(), s) for d, s, _ in rows),
        weekly_avg=_weeks(query.period, rows),
        by_store=tuple(StoreSales(str(st), as_int(v), as_int(n)) for st, v, n in per_store),
    )


# --- cash differences ----------------------------------------------------------------------------


@dataclass(frozen=True)
class DayDifference:
    date: str
    diff: int
    count: int


@dataclass(frozen=True)
class CashCase:
    date: str
    store: str
    author: str
    diff: int


@dataclass(frozen=True)
class CashDifferenceAnalysis(PeriodResult):
    total_reports: int
    diff_count: int
    total_diff: int
    plus_count: int
    plus_total: int
    minus_count: int
    minus_total: int
    daily_trend: tuple[DayDifference, ...]
    """Days with a cash difference (summed over stores), newest first."""
    recent_cases: tuple[CashCase, ...]

    @property
    def diff_rate(self) -> str | None:
        return percent(self.diff_count, self.total_reports)

    @property
    def avg_diff(self) -> int:
        return round_half_up(Decimal(self.total_diff) / self.diff_count) if self.diff_count else 0

    def body(self) -> dict[str, Any]:
        return {
            "summary": {
                "total_reports": self.total_reports,
                "diff_count": self.diff_count,
                "diff_rate": self.diff_rate,
                "total_diff": self.total_diff,
                "avg_diff": self.avg_diff,
            },
            "breakdown": {
                "plus": {"count": self.plus_count, "total": self.plus_total},
                "minus": {"count": self.minus_count, "total": self.minus_total},
            },
            "daily_trend": [vars(d) for d in self.daily_trend],
            "recent_cases": [vars(c) for c in self.recent_cases],
        }

    @property
    def reports_counted(self) -> int:
        return self.total_reports


@period_statistic
def get_cash_difference_analysis(query: PeriodQuery) -> CashDifferenceAnalysis:
    """現金過不足分析: 発生件数・発生率・合計・平均・過剰/不足の内訳・日別・最近の発生。"""
    ((total, n, s, pn, ps, mn, ms),) = query.rows(
        "count(*), count(*) FILTER (WHERE cash_difference != 0), "
        "sum(cash_difference) FILTER (WHERE cash_difference != 0), "
        "count(*) FILTER (WHERE cash_difference > 0), "
        "sum(cash_difference) FILTER (WHERE cash_difference > 0), "
        "count(*) FILTER (WHERE cash_difference < 0), "
        "sum(cash_difference) FILTER (WHERE cash_difference < 0)"
    )
    trend = query.per_day("sum(cash_difference), count(*)", "cash_difference != 0")
    recent = query.recent("cash_difference", "cash_difference != 0")
    return CashDifferenceAnalysis(
        period=query.period,
        scope=query.scope,
        total_reports=as_int(total),
        diff_count=as_int(n),
        total_diff=as_int(s),
        plus_count=as_int(pn),
        plus_total=as_int(ps),
        minus_count=as_int(mn),
        minus_total=as_int(ms),
        daily_trend=tuple(DayDifference(iso(d), as_int(v), as_int(c)) for d, v, c in trend),
        recent_cases=tuple(CashCase(iso(d), st, a, as_int(v)) for d, st, a, v in recent),
    )

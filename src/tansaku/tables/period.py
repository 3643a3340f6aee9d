"""Periods and store scope for the analytics functions.

A period is inclusive on both ends (``2025-11-01``〜``2025-11-30`` is 30 days), like the dates a
manager types. ``resolve_period``:

- ``date_from`` and ``date_to``: that range (``days`` is ignored);
- only ``date_from``: ``days`` days starting there;
- only ``date_to``: ``days`` days ending there;
- neither: ``days`` days ending ``today`` (Asia/Tokyo when not given).

A ``StoreScope`` is what the caller may see: one store, or every store. Front ends build it
from the user (a store manager sees their store); the LLM never chooses it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from zoneinfo import ZoneInfo

from tansaku.errors import TansakuError
from tansaku.text.dates import FIRST_DATE, LAST_DATE, resolve_dates

TOKYO = ZoneInfo("Asia/Tokyo")
MAX_DAYS = 3660
_DATE_RE = re.compile(r"^\s*(\d{4})[-/](\d{1,2})[-/](\d{1,2})\s*$")


class AnalyticsError(TansakuError):
    """Bad analytics arguments (dates, metric, store) or a daily-report table that does not fit."""


def _supported(day: date, what: str) -> date:
    if not FIRST_DATE <= day <= LAST_DATE:
        raise AnalyticsError(
            f"{what}「{day}」は範囲外です。{FIRST_DATE}〜{LAST_DATE} の日付で指定してください"
        )
    return day


def parse_date(value: date | str, what: str = "日付") -> date:
    """``date`` or ``YYYY-MM-DD`` (``YYYY/MM/DD`` accepted) → ``date``; a clear error otherwise."""
    if isinstance(value, datetime):
        return _supported(value.date(), what)
    if isinstance(value, date):
        return _supported(value, what)
    match = _DATE_RE.match(str(value))
    if match:
        try:
            return _supported(date(*(int(g) for g in match.groups())), what)
        except ValueError:
            pass
    raise AnalyticsError(
        f"{what}「{value}」を解釈できません。"
        "YYYY-MM-DD 形式の実在する日付で指定してください(例: 2025-11-01)"
    )


@dataclass(frozen=True)
class Period:
    start: date
    end: date

    def __post_init__(self) -> None:
        if self.end < self.start:
            raise AnalyticsError(
                f"期間の終了日({self.end})が開始日({self.start})より前です。"
                "開始日 ≦ 終了日 にしてください"
            )
        if self.days > MAX_DAYS:
            raise AnalyticsError(f"期間が長すぎます({self.days}日、上限 {MAX_DAYS}日)")

    @property
    def days(self) -> int:
        return (self.end - self.start).days + 1

    def to_dict(self) -> dict[str, object]:
        return {
            "start_date": self.start.isoformat(),
            "end_date": self.end.isoformat(),
            "days": self.days,
        }


def today_in_tokyo() -> date:
    return datetime.now(TOKYO).date()


def resolve_period(
    date_from: date | str | None = None,
    date_to: date | str | None = None,
    days: int = 30,
    *,
    today: date | None = None,
) -> Period:
    if isinstance(days, bool) or not isinstance(days, int) or not 1 <= days <= MAX_DAYS:
        raise AnalyticsError(f"days は 1〜{MAX_DAYS} の整数にしてください(現在: {days!r})")
    start = parse_date(date_from, "開始日") if date_from not in (None, "") else None
    end = parse_date(date_to, "終了日") if date_to not in (None, "") else None
    span = timedelta(days=days - 1)
    if start and end:
        return Period(start, end)
    if start:
        return Period(start, _supported(start + span, "終了日"))
    end = end or today or today_in_tokyo()
    return Period(_supported(end - span, "開始日"), end)


def period_of(expression: str, now: datetime | date | None = None) -> Period:
    """The period a relative expression names against ``now`` (default: now in Tokyo):
    先月, 先週, 今月, 今週, 昨日, 今日, 過去7日, 12月 … — resolved by ``tansaku.text.dates``,
    the same rules as the dates in search queries."""
    text = (expression or "").strip()
    found = resolve_dates(text, now) if text else None
    if found is None or found.range is None or found.remainder.strip():
        raise AnalyticsError(
            f"期間「{expression}」を解釈できません。例: 先月, 先週, 今月, 今週, 昨日, 過去7日"
        )
    return Period(found.range.start, found.range.end)


@dataclass(frozen=True)
class StoreScope:
    """``store=None`` means every store."""

    store: str | None = None

    @classmethod
    def only(cls, store: str) -> StoreScope:
        if not store or not store.strip():
            raise AnalyticsError("店舗名が空です")
        return cls(store.strip())

    @classmethod
    def all_stores(cls) -> StoreScope:
        return cls(None)

    @property
    def label(self) -> str:
        return self.store or "全店舗"

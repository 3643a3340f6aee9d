"""The demo's calendar: the day it is built for, the window of days its reports cover, the days
its scripted facts fall on, Japanese holidays, and the record of the day in the workspace.

The demo data is generated relative to one day (``today``, Asia/Tokyo), so that relative
queries such as 「昨日のクレーム」, 「先週の冷蔵庫のトラブル」 or a 先月 period answer on the
day the demo is built:

==================  ===========================================================================
window              the 1st of the month two months before ``today`` .. yesterday
                    (so 先々月, 先月, 先週 and 昨日 are always complete; today has no report yet)
yesterday           新宿店: lukewarm food claim; 渋谷店: broken refrigerator (and a bulletin post);
                    池袋店: register fault with a claim
the day before      新宿店: slow service claim
last week           Wednesday of the previous Monday–Sunday week, 横浜店: walk-in refrigerator
                    fault (and a bulletin post)
last month          the 15th of the previous month, 新宿店: claim about a wrong reservation
==================  ===========================================================================

``REFERENCE_NOW`` (2025-12-11) is the day the bundled docs and the table tests quote.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from functools import lru_cache
from pathlib import Path

from tansaku.text.dates import TOKYO, now_tokyo

REFERENCE_NOW = datetime(2025, 12, 11, 10, 0, tzinfo=TOKYO)
MONTHS_BACK = 2
RECORD = "demo.json"  # under <home>/demo/


def demo_today(now: datetime | date | None = None) -> date:
    """The Asia/Tokyo calendar day of ``now`` (default: the current time).

    An aware datetime is converted to Asia/Tokyo; a naive datetime or a date is Tokyo local.
    """
    if now is None:
        return now_tokyo().date()
    if isinstance(now, datetime):
        return now.astimezone(TOKYO).date() if now.tzinfo is not None else now.date()
    return now


def _month_start(day: date, back: int) -> date:
    index = day.year * 12 + day.month - 1 - back
    return date(index // 12, index % 12 + 1, 1)


@dataclass(frozen=True)
class DemoWindow:
    """The days the demo reports cover, relative to ``today`` (both ends inclusive)."""

    today: date
    start: date
    end: date

    @property
    def days(self) -> int:
        return (self.end - self.start).days + 1

    def to_dict(self) -> dict[str, str]:
        return {
            "today": self.today.isoformat(),
            "start": self.start.isoformat(),
            "end": self.end.isoformat(),
        }


def demo_window(now: datetime | date | None = None) -> DemoWindow:
    """The 1st of the month ``MONTHS_BACK`` months before today .. yesterday."""
    today = demo_today(now)
    return DemoWindow(today, _month_start(today, MONTHS_BACK), today - timedelta(days=1))


@dataclass(frozen=True)
class ScriptedDays:
    """The days the scripted facts fall on (never the same day for the same store)."""

    yesterday: date
    day_before: date
    last_week: date  # Wednesday of the previous Monday–Sunday week
    last_month: date  # the 15th of the previous month


def scripted_days(now: datetime | date | None = None) -> ScriptedDays:
    today = demo_today(now)
    monday = today - timedelta(days=today.weekday())
    return ScriptedDays(
        yesterday=today - timedelta(days=1),
        day_before=today - timedelta(days=2),
        last_week=monday - timedelta(days=5),
        last_month=_month_start(today, 1) + timedelta(days=14),
    )


# --- Japanese national holidays (approximate: the rules since 2020, no one-off moves) -----------

_FIXED = ((1, 1), (2, 11), (2, 23), (4, 29), (5, 3), (5, 4), (5, 5), (8, 11), (11, 3), (11, 23))
_HAPPY_MONDAYS = ((1, 2), (7, 3), (9, 3), (10, 2))  # (month, nth Monday)


def _nth_monday(year: int, month: int, n: int) -> date:
    first = date(year, month, 1)
    return first + timedelta(days=(7 - first.weekday()) % 7 + 7 * (n - 1))


def _equinox_day(year: int, base: float) -> int:
    return int(base + 0.242194 * (year - 1980) - (year - 1980) // 4)


@lru_cache(maxsize=16)
def japanese_holidays(year: int) -> frozenset[date]:
    """National holidays of ``year``: fixed days, Happy Mondays, the equinoxes (formula valid
    1980–2099), 振替休日 (a holiday on Sunday moves to the next free day) and 国民の休日 (a
    day between two holidays)."""
    days = {date(year, m, d) for m, d in _FIXED}
    days |= {_nth_monday(year, m, n) for m, n in _HAPPY_MONDAYS}
    days.add(date(year, 3, _equinox_day(year, 20.8431)))
    days.add(date(year, 9, _equinox_day(year, 23.2488)))
    for day in sorted(days):
        if day.weekday() == 6:
            substitute = day + timedelta(days=1)
            while substitute in days:
                substitute += timedelta(days=1)
            days.add(substitute)
    for day in sorted(days):
        between = day + timedelta(days=1)
        if between not in days and between + timedelta(days=1) in days and between.weekday() != 6:
            days.add(between)
    return frozenset(days)


def is_holiday(day: date) -> bool:
    return day in japanese_holidays(day.year)


# --- the record in the workspace -----------------------------------------------------------------


def record_path(home: Path) -> Path:
    return Path(home) / "demo" / RECORD


def write_record(home: Path, window: DemoWindow, seed: int) -> Path:
    """Record the day the demo in ``home`` was built for (read by the tables and the hints)."""
    path = record_path(home)
    path.parent.mkdir(parents=True, exist_ok=True)
    data = {**window.to_dict(), "seed": seed}
    text = json.dumps(data, ensure_ascii=False, indent=2) + "\n"
    if not path.is_file() or path.read_text(encoding="utf-8") != text:
        path.write_text(text, encoding="utf-8")
    return path


def recorded_today(home: Path) -> date | None:
    """The day the demo in ``home`` was last built for, or None (no demo, unreadable record)."""
    try:
        data = json.loads(record_path(home).read_text(encoding="utf-8"))
        return date.fromisoformat(data["today"])
    except (OSError, ValueError, KeyError, TypeError):
        return None

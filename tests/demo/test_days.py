"""The demo data is relative to the day it is built for: windows, scripted days, holidays, and
the same data for the same day (in any process)."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from dataclasses import astuple
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import pytest

from tansaku.demo import report_phrases as phr
from tansaku.demo.days import (
    REFERENCE_NOW,
    demo_today,
    demo_window,
    is_holiday,
    japanese_holidays,
    recorded_today,
    scripted_days,
    write_record,
)
from tansaku.demo.reports import STORES, generate, write_reports_jsonl
from tansaku.text.dates import TOKYO, resolve_dates

# A Monday (yesterday is in last week), a Tuesday (the day before is in last week), a Sunday,
# the 1st of a month, New Year's Day, the 1st of March of a leap year, the reference day.
DAYS = [
    date(2026, 11, 23),
    date(2026, 3, 3),
    date(2026, 6, 14),
    date(2026, 9, 1),
    date(2027, 1, 1),
    date(2028, 3, 1),
    date(2025, 12, 11),
]


def _range(expression: str, today: date) -> tuple[str, str]:
    resolved = resolve_dates(f"{expression}のクレーム", today).range
    assert resolved is not None, expression
    return resolved.start.isoformat(), resolved.end.isoformat()


def test_window_examples():
    assert demo_window(date(2025, 12, 11)).to_dict() == {
        "today": "2025-12-11",
        "start": "2025-10-01",
        "end": "2025-12-10",
    }
    jan = demo_window(date(2026, 1, 1))
    assert (jan.start, jan.end, jan.days) == (date(2025, 11, 1), date(2025, 12, 31), 61)
    assert scripted_days(date(2025, 12, 11)) == scripted_days(REFERENCE_NOW)
    days = scripted_days(date(2025, 12, 11))
    assert (days.yesterday, days.day_before) == (date(2025, 12, 10), date(2025, 12, 9))
    assert (days.last_week, days.last_month) == (date(2025, 12, 3), date(2025, 11, 15))


def test_now_is_read_in_tokyo():
    assert demo_today(datetime(2025, 12, 10, 15, 30, tzinfo=UTC)) == date(2025, 12, 11)
    assert demo_today(datetime(2025, 12, 11, 23, 59)) == date(2025, 12, 11)  # naive: Tokyo
    assert demo_today(date(2025, 12, 11)) == date(2025, 12, 11)
    assert demo_today() == datetime.now(TOKYO).date()


@pytest.mark.parametrize("today", DAYS, ids=str)
def test_generation_is_deterministic_and_covers_the_relative_windows(today: date):
    data = generate(today)
    assert data == generate(datetime(today.year, today.month, today.day, 23, 59, tzinfo=TOKYO))
    window = demo_window(today)
    reports = data.daily_reports
    dates = sorted({r.date for r in reports})
    assert dates[0] == window.start.isoformat() and dates[-1] == window.end.isoformat()
    assert len(dates) == window.days  # every day of the window has reports
    assert all(window.start.isoformat() <= p.date <= window.end.isoformat() for p in data.bbs_posts)
    assert all(c.date <= window.end.isoformat() for c in data.bbs_comments)

    def within(expression: str) -> list:
        first, last = _range(expression, today)
        return [r for r in reports if first <= r.date <= last]

    yesterday = within("昨日")
    assert {r.store for r in yesterday} >= {"新宿店", "渋谷店", "池袋店"}
    assert sum(r.claim for r in yesterday) >= 2
    assert any("冷蔵庫の故障" in r.content for r in yesterday)
    last_week = within("先週")
    assert len({r.date for r in last_week}) == 7
    assert any("冷蔵庫" in r.content and "不具合" in r.content for r in last_week)
    first, last = _range("先週", today)
    assert any(first <= p.date <= last and "冷蔵庫" in p.title for p in data.bbs_posts)
    last_month = within("先月")
    first, last = _range("先月", today)
    assert {r.date for r in last_month} == {
        (date.fromisoformat(first) + timedelta(days=i)).isoformat()
        for i in range((date.fromisoformat(last) - date.fromisoformat(first)).days + 1)
    }
    assert any(r.claim and r.store == "新宿店" for r in last_month)
    assert len(within("先々月")) >= 25 * len(STORES) * 0.8
    assert len(within("最近")) >= 6 * len(STORES) * 0.8
    assert not within("今日")  # today's reports are not written yet


def test_scripted_days_never_collide_and_stay_in_the_window():
    today = date(2025, 1, 1)
    for _ in range(800):
        days = scripted_days(today)
        window = demo_window(today)
        keys = [(getattr(days, when), store_id) for when, store_id, *_ in phr.SCRIPT_REPORTS]
        assert len(set(keys)) == len(keys), today
        assert all(window.start <= day <= window.end for day, _ in keys), today
        assert days.last_week.weekday() == 2
        today += timedelta(days=1)


def test_a_later_day_keeps_the_other_days_as_they_were():
    """Building on the next day adds that day and moves the scripted facts; nothing else."""
    today, tomorrow = date(2026, 11, 18), date(2026, 11, 19)
    a, b = generate(today), generate(tomorrow)
    moved = {d.isoformat() for t in (today, tomorrow) for d in astuple(scripted_days(t))}
    same_a = [r for r in a.daily_reports if r.date not in moved]
    same_b = [r for r in b.daily_reports if r.date not in moved and r.date <= "2026-11-17"]
    assert same_a == same_b and len(same_a) > 200
    new = {r.date for r in b.daily_reports} - {r.date for r in a.daily_reports}
    assert new == {"2026-11-18"}
    generated_a = {p.post_id: p for p in a.bbs_posts if p.date not in moved}
    generated_b = {p.post_id: p for p in b.bbs_posts if p.date not in moved}
    assert {k: generated_b[k] for k in generated_a} == generated_a


def test_holidays():
    assert japanese_holidays(2025) >= {
        date(2025, 1, 13),  # 成人の日
        date(2025, 2, 24),  # 振替休日 (天皇誕生日 on Sunday)
        date(2025, 3, 20),  # 春分の日
        date(2025, 5, 6),  # 振替休日
        date(2025, 9, 23),  # 秋分の日
        date(2025, 10, 13),  # スポーツの日
        date(2025, 11, 24),  # 振替休日 (勤労感謝の日 on Sunday)
    }
    assert date(2026, 9, 22) in japanese_holidays(2026)  # 国民の休日 between two holidays
    assert len(japanese_holidays(2026)) == 18
    assert not is_holiday(date(2025, 12, 10))


def test_record_round_trip(tmp_path: Path):
    assert recorded_today(tmp_path) is None
    path = write_record(tmp_path, demo_window(REFERENCE_NOW), 7)
    assert recorded_today(tmp_path) == date(2025, 12, 11)
    mtime = path.stat().st_mtime_ns
    write_record(tmp_path, demo_window(REFERENCE_NOW), 7)
    assert path.stat().st_mtime_ns == mtime  # unchanged record is not rewritten
    path.write_text("{broken", encoding="utf-8")
    assert recorded_today(tmp_path) is None


_SCRIPT = """
import hashlib, sys, tempfile
from datetime import date
from pathlib import Path
from tansaku.demo.reports import generate, write_reports_jsonl
day = date.fromisoformat(sys.argv[1])
path = write_reports_jsonl(generate(day), Path(tempfile.mkdtemp()) / "r.jsonl")
print(hashlib.sha256(path.read_bytes()).hexdigest())
"""


def test_same_day_same_bytes_in_another_process(tmp_path: Path):
    """Per-record generators are seeded from strings: no PYTHONHASHSEED, no clock."""
    day = "2026-11-23"
    mine = write_reports_jsonl(generate(date.fromisoformat(day)), tmp_path / "r.jsonl")
    env = {**os.environ, "PYTHONHASHSEED": "12345"}
    out = subprocess.run(
        [sys.executable, "-c", _SCRIPT, day], capture_output=True, text=True, env=env, check=True
    )
    assert out.stdout.strip() == hashlib.sha256(mine.read_bytes()).hexdigest()

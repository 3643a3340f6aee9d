"""Analytics checked against numbers computed here, in plain Python, from the generated CSV."""

from __future__ import annotations

import csv
import json
from datetime import date, timedelta
from decimal import ROUND_HALF_UP, Decimal

import pytest

from tansaku.tables import (
    AnalyticsError,
    Metric,
    StoreScope,
    compare_periods,
    get_cash_difference_analysis,
    get_claim_statistics,
    get_sales_trend,
    resolve_period,
)
from tansaku.tables.daily import percent, round_half_up

ALL = StoreScope.all_stores()
SHINJUKU = StoreScope.only("新宿店")


@pytest.fixture(scope="module")
def rows(demo_home):
    with (demo_home / "tables" / "daily_reports.csv").open(encoding="utf-8", newline="") as fh:
        return [
            {
                "date": r["date"],
                "store": r["store"],
                "author": r["author"],
                "sales": int(r["sales"]),
                "claim": r["claim"] == "true",
                "claim_content": r["claim_content"],
                "cash": int(r["cash_difference"]),
            }
            for r in csv.DictReader(fh)
        ]


def pick(rows, start: str, end: str, store: str | None = None):
    return [r for r in rows if start <= r["date"] <= end and (store is None or r["store"] == store)]


def rate(n: int, d: int) -> str:
    return f"{(Decimal(n) * 100 / Decimal(d)).quantize(Decimal('0.1'), ROUND_HALF_UP)}%"


def half_up(n: int, d: int) -> int:
    return int((Decimal(n) / Decimal(d)).quantize(Decimal(1), ROUND_HALF_UP))


CASES = [
    ("2025-11-01", "2025-11-30", None),
    ("2025-12-01", "2025-12-31", "新宿店"),
    ("2025-10-01", "2025-12-31", None),
    ("2025-12-09", "2025-12-10", "池袋店"),
]


@pytest.mark.parametrize(("start", "end", "store"), CASES)
def test_claim_statistics(db, rows, start, end, store):
    scope = StoreScope(store)
    got = get_claim_statistics(db, start, end, scope=scope).to_dict()
    mine = pick(rows, start, end, store)
    claims = [r for r in mine if r["claim"]]
    days = (date.fromisoformat(end) - date.fromisoformat(start)).days + 1
    assert got["period"] == {"start_date": start, "end_date": end, "days": days}
    assert got["store"] == (store or "全店舗")
    assert got["summary"] == {
        "total_reports": len(mine),
        "claim_count": len(claims),
        "claim_rate": rate(len(claims), len(mine)),
    }
    per_day: dict[str, int] = {}
    for r in claims:
        per_day[r["date"]] = per_day.get(r["date"], 0) + 1
    assert got["daily_trend"] == [
        {"date": d, "count": n} for d, n in sorted(per_day.items(), reverse=True)
    ]
    recent = sorted(claims, key=lambda r: (r["date"], [-ord(c) for c in r["store"]]), reverse=True)
    assert got["recent_claims"] == [
        {
            "date": r["date"],
            "store": r["store"],
            "author": r["author"],
            "content": r["claim_content"],
        }
        for r in recent[:10]
    ]


def test_design_example_claims_on_dec_10(db):
    got = get_claim_statistics(db, "2025-12-10", "2025-12-10", scope=ALL).to_dict()
    contents = " ".join(c["content"] for c in got["recent_claims"])
    assert got["summary"]["claim_count"] >= 2 and "料理の温度が低い" in contents


@pytest.mark.parametrize(("start", "end", "store"), CASES)
def test_sales_trend(db, rows, start, end, store):
    got = get_sales_trend(db, start, end, scope=StoreScope(store)).to_dict()
    mine = pick(rows, start, end, store)
    total = sum(r["sales"] for r in mine)
    assert got["summary"] == {
        "total_sales": total,
        "avg_sales": half_up(total, len(mine)),
        "report_count": len(mine),
    }
    per_day: dict[str, int] = {}
    for r in mine:
        per_day[r["date"]] = per_day.get(r["date"], 0) + r["sales"]
    assert got["daily_trend"] == [{"date": d, "sales": s} for d, s in sorted(per_day.items())]
    weeks = []
    first, last = date.fromisoformat(start), date.fromisoformat(end)
    week_start = first
    while week_start <= last:
        week_end = min(week_start + timedelta(days=6), last)
        inside = [
            r["sales"] for r in mine if week_start.isoformat() <= r["date"] <= week_end.isoformat()
        ]
        if inside:
            weeks.append(
                {
                    "week": f"{week_start:%m/%d}-{week_end:%m/%d}",
                    "avg_sales": half_up(sum(inside), len(inside)),
                    "report_count": len(inside),
                }
            )
        week_start += timedelta(days=7)
    assert got["weekly_avg"] == weeks


@pytest.mark.parametrize(("start", "end", "store"), CASES)
def test_cash_difference_analysis(db, rows, start, end, store):
    got = get_cash_difference_analysis(db, start, end, scope=StoreScope(store)).to_dict()
    mine = pick(rows, start, end, store)
    diffs = [r for r in mine if r["cash"] != 0]
    plus = [r["cash"] for r in diffs if r["cash"] > 0]
    minus = [r["cash"] for r in diffs if r["cash"] < 0]
    total = sum(r["cash"] for r in diffs)
    assert got["summary"] == {
        "total_reports": len(mine),
        "diff_count": len(diffs),
        "diff_rate": rate(len(diffs), len(mine)),
        "total_diff": total,
        "avg_diff": half_up(total, len(diffs)) if diffs else 0,
    }
    assert got["breakdown"] == {
        "plus": {"count": len(plus), "total": sum(plus)},
        "minus": {"count": len(minus), "total": sum(minus)},
    }
    per_day: dict[str, list[int]] = {}
    for r in diffs:
        per_day.setdefault(r["date"], []).append(r["cash"])
    assert got["daily_trend"] == [
        {"date": d, "diff": sum(v), "count": len(v)}
        for d, v in sorted(per_day.items(), reverse=True)
    ]
    assert [c["date"] for c in got["recent_cases"]] == sorted(
        (r["date"] for r in diffs), reverse=True
    )[:10]
    assert all(c["diff"] != 0 for c in got["recent_cases"])


@pytest.mark.parametrize("metric", ["sales", "claim_count", "cash_diff"])
@pytest.mark.parametrize("store", [None, "新宿店"])
def test_compare_periods(db, rows, metric, store):
    cur = pick(rows, "2025-12-01", "2025-12-10", store)
    prev = pick(rows, "2025-11-01", "2025-11-10", store)
    value = {
        "sales": lambda rs: sum(r["sales"] for r in rs),
        "claim_count": lambda rs: sum(1 for r in rs if r["claim"]),
        "cash_diff": lambda rs: sum(r["cash"] for r in rs),
    }[metric]
    got = compare_periods(
        db, metric, "2025-12-01", "2025-12-10", "2025-11-01", "2025-11-10", scope=StoreScope(store)
    ).to_dict()
    c, p = value(cur), value(prev)
    assert got["metric"] == metric and got["unit"] == ("件" if metric == "claim_count" else "円")
    assert got["current_period"] == {
        "start": "2025-12-01",
        "end": "2025-12-10",
        "value": c,
        "report_count": len(cur),
    }
    assert got["previous_period"]["value"] == p
    assert got["comparison"]["diff"] == c - p
    assert got["comparison"]["change_rate"] == (rate(c - p, p) if p else None)
    assert got["comparison"]["trend"] == ("増加" if c > p else "減少" if c < p else "横ばい")


def test_compare_division_by_zero_and_flat(db):
    empty = ("2025-09-01", "2025-09-30")  # before the data starts
    got = compare_periods(db, "sales", "2025-12-01", "2025-12-07", *empty, scope=ALL).to_dict()
    assert got["previous_period"]["value"] == 0
    assert got["comparison"]["change_rate"] is None
    assert got["comparison"]["trend"] == "増加" and "計算できません" in got["comparison"]["note"]
    same = compare_periods(db, Metric.CLAIM_COUNT, *empty, *empty, scope=ALL).to_dict()
    assert same["comparison"] == {
        "diff": 0,
        "change_rate": None,
        "trend": "横ばい",
        "note": "前期間の値が0のため変化率は計算できません",
    }
    flat = compare_periods(
        db, "sales", "2025-11-01", "2025-11-10", "2025-11-01", "2025-11-10", scope=SHINJUKU
    )
    assert flat.trend == "横ばい" and flat.change_rate == "0.0%"


def test_scope_only_sees_its_store(db):
    got = get_claim_statistics(db, "2025-10-01", "2025-12-31", scope=SHINJUKU).to_dict()
    assert {c["store"] for c in got["recent_claims"]} == {"新宿店"}
    cash = get_cash_difference_analysis(db, "2025-10-01", "2025-12-31", scope=SHINJUKU)
    assert {c.store for c in cash.recent_cases} <= {"新宿店"}
    with pytest.raises(AnalyticsError, match="店舗「梅田店」の日報はありません"):
        get_sales_trend(db, "2025-11-01", "2025-11-30", scope=StoreScope.only("梅田店"))


def test_empty_period(db):
    got = get_claim_statistics(db, "2024-01-01", "2024-01-31", scope=ALL).to_dict()
    assert got["summary"] == {"total_reports": 0, "claim_count": 0, "claim_rate": None}
    assert got["message"] == "指定期間の日報がありません"
    assert get_sales_trend(db, "2024-01-01", "2024-01-31", scope=ALL).avg_sales == 0


def test_relative_periods(db, rows):
    got = get_sales_trend(db, date_to="2025-12-31", days=7, scope=ALL).to_dict()
    assert got["period"] == {"start_date": "2025-12-25", "end_date": "2025-12-31", "days": 7}
    assert got["summary"]["report_count"] == len(pick(rows, "2025-12-25", "2025-12-31"))
    today = get_claim_statistics(db, scope=ALL, today=date(2025, 12, 10)).to_dict()
    assert today["period"] == {"start_date": "2025-11-11", "end_date": "2025-12-10", "days": 30}
    assert resolve_period("2025-11-01", days=10) == resolve_period("2025-11-01", "2025-11-10")
    assert resolve_period("2025/11/01", "2025/11/30").days == 30


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"date_from": "2025-13-01", "date_to": "2025-12-31"}, "開始日「2025-13-01」"),
        ({"date_from": "昨日", "date_to": "2025-12-31"}, "YYYY-MM-DD"),
        ({"date_from": "2025-12-31", "date_to": "2025-12-01"}, "開始日 ≦ 終了日"),
        ({"days": 0}, "days は 1〜"),
        ({"date_from": "2025-02-30", "date_to": "2025-03-01"}, "実在する日付"),
        # out of the supported range: a clear error, never an OverflowError
        ({"date_from": "9999-12-31", "days": 30}, "1900-01-01〜2999-12-31"),
        ({"date_to": "0001-01-01", "days": 30}, "1900-01-01〜2999-12-31"),
        ({"date_from": "2999-12-31", "days": 30}, "終了日「3000-01-29」は範囲外"),
    ],
)
def test_bad_dates_are_clear_errors(db, kwargs, message):
    with pytest.raises(AnalyticsError, match=message):
        get_claim_statistics(db, scope=ALL, **kwargs)


def test_bad_metric(db):
    with pytest.raises(AnalyticsError, match="使える指標: sales, claim_count, cash_diff"):
        compare_periods(
            db, "profit", "2025-12-01", "2025-12-10", "2025-11-01", "2025-11-10", scope=ALL
        )


def test_json_output_for_tools(db):
    stats = get_claim_statistics(db, "2025-12-01", "2025-12-10", scope=SHINJUKU)
    text = stats.to_json()
    assert "新宿店" in text and "\\u" not in text
    assert json.loads(text) == stats.to_dict()
    assert set(stats.to_dict()) == {"period", "store", "summary", "daily_trend", "recent_claims"}


def test_rounding_helpers():
    assert round_half_up(Decimal("-187.5")) == -188 and round_half_up(Decimal("2.5")) == 3
    assert percent(1, 8) == "12.5%" and percent(49, 400) == "12.3%" and percent(1, 0) is None
    assert percent(-1, 3) == "-33.3%"

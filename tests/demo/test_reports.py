"""The daily-report generator: deterministic for a day, realistic enough, and carrying the
scripted facts (checked here on the reference day 2025-12-11; other days in test_days.py)."""

from __future__ import annotations

import csv
import json
from collections import Counter
from datetime import date, timedelta
from pathlib import Path

import pytest

from tansaku.demo.days import REFERENCE_NOW
from tansaku.demo.reports import (
    AUTHORS,
    DAILY_REPORT_COLUMNS,
    STORES,
    generate,
    report_text,
    write_daily_reports_csv,
    write_reports_jsonl,
)

START, END = date(2025, 10, 1), date(2025, 12, 10)  # the window of 2025-12-11


@pytest.fixture(scope="module")
def data():
    return generate(REFERENCE_NOW)


def test_same_seed_same_output(tmp_path):
    a, b = generate(REFERENCE_NOW), generate(date(2025, 12, 11), seed=20251001)
    assert a == b
    write_reports_jsonl(a, tmp_path / "a.jsonl")
    write_reports_jsonl(b, tmp_path / "b.jsonl")
    write_daily_reports_csv(a.daily_reports, tmp_path / "a.csv")
    write_daily_reports_csv(b.daily_reports, tmp_path / "b.csv")
    assert (tmp_path / "a.jsonl").read_bytes() == (tmp_path / "b.jsonl").read_bytes()
    assert (tmp_path / "a.csv").read_bytes() == (tmp_path / "b.csv").read_bytes()


def test_other_seed_other_output(data):
    other = generate(REFERENCE_NOW, seed=7)
    assert other.daily_reports != data.daily_reports


def test_volume_and_stores(data):
    reports = data.daily_reports
    assert len(reports) >= 240  # 71 days x 4 stores, ~90% written
    stores = {r.store for r in reports}
    assert len(stores) >= 3
    assert stores == {name for _, name in STORES}
    assert {r.store_id for r in reports} == {1, 2, 3, 4}
    for r in reports:
        assert r.author in AUTHORS[r.store]
        assert r.report_id == f"DR-{r.date.replace('-', '')}-{r.store_id:02d}"
    assert len({r.report_id for r in reports}) == len(reports)


def test_date_coverage(data):
    days = (END - START).days + 1
    dates = sorted({r.date for r in data.daily_reports})
    assert dates[0] >= START.isoformat() and dates[-1] <= END.isoformat()
    assert {d[:7] for d in dates} == {"2025-10", "2025-11", "2025-12"}
    coverage = len(data.daily_reports) / (days * len(STORES))
    assert 0.85 <= coverage <= 0.95  # one report per store on ~90% of days
    per_store = Counter(r.store for r in data.daily_reports)
    assert all(n >= days * 0.8 for n in per_store.values())
    # at most one report per store and day
    assert len({(r.date, r.store) for r in data.daily_reports}) == len(data.daily_reports)


def test_claims_cash_and_sales_are_realistic(data):
    reports = data.daily_reports
    claims = [r for r in reports if r.claim]
    assert 0.07 <= len(claims) / len(reports) <= 0.18
    assert all(r.claim_content for r in claims)
    assert all(r.claim_content == "" for r in reports if not r.claim)
    diffs = [r for r in reports if r.cash_difference]
    assert 0.03 <= len(diffs) / len(reports) <= 0.12
    assert all(abs(r.cash_difference) <= 10_000 for r in reports)
    assert all(100_000 < r.sales < 2_000_000 and r.customers > 0 for r in reports)
    # weekends sell more than weekdays, December more than October
    by_weekend = {True: [], False: []}
    for r in reports:
        by_weekend[date.fromisoformat(r.date).weekday() >= 5].append(r.sales)
    assert sum(by_weekend[True]) / len(by_weekend[True]) > sum(by_weekend[False]) / len(
        by_weekend[False]
    )
    month = {m: [r.sales for r in reports if r.date[5:7] == m] for m in ("10", "12")}
    assert sum(month["12"]) / len(month["12"]) > sum(month["10"]) / len(month["10"])


def test_wording_varies_with_synonyms(data):
    text = " ".join(report_text(r) for r in data.daily_reports)
    for word in ("クレーム", "苦情", "ご指摘"):
        assert word in text
    for word in ("トラブル", "不具合", "故障", "事故"):
        assert word in text
    assert len({r.content for r in data.daily_reports}) == len(data.daily_reports)
    sentences = [r.content.count("。") for r in data.daily_reports]
    assert min(sentences) >= 2 and max(sentences) <= 8


def _report(data, day: str, store: str):
    return next(r for r in data.daily_reports if r.date == day and r.store == store)


def test_scripted_facts(data):
    dec9 = _report(data, "2025-12-09", "新宿店")
    assert dec9.claim and "提供が遅い" in dec9.claim_content
    assert dec9.author == "田中太郎"
    dec10 = [r for r in data.daily_reports if r.date == "2025-12-10"]
    shinjuku = _report(data, "2025-12-10", "新宿店")
    assert shinjuku.claim and "温度が低い" in shinjuku.claim_content
    assert "冷蔵庫の故障" in _report(data, "2025-12-10", "渋谷店").content
    assert "レジの不具合" in _report(data, "2025-12-10", "池袋店").content
    troubled = [r for r in dec10 if r.claim or "故障" in r.content or "不具合" in r.content]
    assert len(troubled) >= 2
    posts = [p for p in data.bbs_posts if p.date == "2025-12-10" and p.category == "トラブル報告"]
    assert any("冷蔵庫" in p.title for p in posts)
    # last week (Mon 12-01 .. Sun 12-07): Wednesday 12-03, 横浜店, walk-in refrigerator
    fridge = _report(data, "2025-12-03", "横浜店")
    assert "ウォークイン冷蔵庫" in fridge.content and "不具合" in fridge.content
    assert any(p.date == "2025-12-03" and "冷蔵庫" in p.title for p in data.bbs_posts)
    # last month: 11-15, 新宿店, a reservation claim
    reservation = _report(data, "2025-11-15", "新宿店")
    assert reservation.claim and "予約の人数" in reservation.claim_content


def test_bulletin_board(data):
    posts, comments = data.bbs_posts, data.bbs_comments
    weeks = ((END - START).days + 1) / 7
    assert 2 * weeks * 0.9 <= len(posts) <= 4 * weeks + 2
    assert {p.category for p in posts} == {"連絡", "共有", "トラブル報告", "改善提案"}
    ids = {p.post_id for p in posts}
    assert len(ids) == len(posts)
    for p in posts:  # BBS-<date>-<n>: stable when the window moves
        assert p.post_id.startswith(f"BBS-{p.date.replace('-', '')}-")
    assert comments and all(c.post_id in ids for c in comments)
    post_dates = {p.post_id: p.date for p in posts}
    for c in comments:
        assert post_dates[c.post_id] <= c.date <= END.isoformat()
        assert c.comment_id.startswith("CMT-" + c.post_id.removeprefix("BBS-") + "-")
    assert len({c.comment_id for c in comments}) == len(comments)


def test_short_range_and_bad_range(data):
    small = generate(REFERENCE_NOW, start=date(2025, 11, 1), end=date(2025, 11, 7))
    week = {(date(2025, 11, 1) + timedelta(days=i)).isoformat() for i in range(7)}
    assert {r.date for r in small.daily_reports} <= week
    assert not any(p.date == "2025-12-10" for p in small.bbs_posts)
    # a day's data does not depend on the range around it
    assert list(small.daily_reports) == [r for r in data.daily_reports if r.date in week]
    assert list(small.bbs_posts) == [p for p in data.bbs_posts if p.date in week]
    with pytest.raises(ValueError, match="must not be before"):
        generate(REFERENCE_NOW, start=date(2025, 12, 2), end=date(2025, 12, 1))


def test_csv_round_trip(data, tmp_path):
    path = write_daily_reports_csv(data.daily_reports, tmp_path / "daily_reports.csv")
    with path.open(encoding="utf-8", newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert tuple(rows[0]) == DAILY_REPORT_COLUMNS
    assert len(rows) == len(data.daily_reports)
    first, original = rows[0], data.daily_reports[0]
    assert int(first["sales"]) == original.sales
    assert first["claim"] in ("true", "false")
    assert all(r["claim_content"] == "" for r in rows if r["claim"] == "false")


def test_jsonl_for_search_ingest(data, tmp_path):
    path = write_reports_jsonl(data, tmp_path / "reports.jsonl")
    raw = path.read_text(encoding="utf-8")
    assert "\\u" not in raw  # Japanese kept readable
    lines = [json.loads(line) for line in raw.splitlines()]
    assert len(lines) == len(data.daily_reports) + len(data.bbs_posts) + len(data.bbs_comments)
    kinds = Counter(line["source_type"] for line in lines)
    assert set(kinds) == {"daily_report", "bbs_post", "bbs_comment"}
    for line in lines:
        assert {"id", "source_type", "title", "text", "date", "store", "author"} <= set(line)
        assert line["text"]
    claim = next(x for x in lines if x["id"] == "DR-20251210-01")
    assert "クレーム: お客様から料理の温度が低い" in claim["text"]
    assert claim["store"] == "新宿店" and claim["claim"] is True
    comment = next(x for x in lines if x["source_type"] == "bbs_comment")
    assert comment["title"].startswith("Re: ") and comment["post_id"].startswith("BBS-")


def test_readme_numbers_match_the_reference_data(data):
    """examples/reports/README.md quotes the volume on the reference day: keep it honest."""
    readme = Path(__file__).resolve().parents[2] / "examples" / "reports" / "README.md"
    text = readme.read_text(encoding="utf-8")
    expected = (
        f"日報 {len(data.daily_reports)} 件、掲示板の投稿 {len(data.bbs_posts)} 件、"
        f"コメント {len(data.bbs_comments)} 件"
    )
    assert expected in text

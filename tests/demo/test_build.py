"""The demo workspace built for a fixed day with the deterministic fake embedder: relative
searches find that day's data, re-runs embed nothing, a later day embeds only what changed."""

from __future__ import annotations

import csv
import re
import shlex
from datetime import date, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

import tansaku
from tansaku.config import FusionConfig
from tansaku.demo.build import DEMO_COLLECTIONS, build_demo, demo_hints, install_tables
from tansaku.demo.days import recorded_today
from tansaku.embed.hash import HashEmbedder
from tansaku.text.dates import TOKYO

NOW = datetime(2026, 3, 2, 9, 30, tzinfo=TOKYO)  # a Monday: yesterday is Sunday of last week
YESTERDAY = "2026-03-01"
LAST_WEEK = ("2026-02-23", "2026-03-01")


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    home = tmp_path_factory.mktemp("demo")
    with tansaku.connect(home, embedder=HashEmbedder()) as ts:
        reports = build_demo(ts, now=NOW)
    assert set(reports) == {d.name for d in DEMO_COLLECTIONS}
    assert all(r.ok and r.inserted > 0 for r in reports.values())
    return home


def _search(home: Path, query: str, now: datetime = NOW, **kwargs: Any):
    with tansaku.connect(home, embedder=HashEmbedder()) as ts:
        return ts.search(query, collection="reports", now=now, top_k=10, **kwargs)


def test_demo_yesterday_claims_found(home: Path):
    result = _search(home, "昨日のクレーム")
    assert result.to_dict()["plan"]["date_filter"]["from"] == YESTERDAY
    assert result.hits
    assert {h.record.metadata["date"] for h in result.hits} == {YESTERDAY}
    claims = [h for h in result.hits if h.record.metadata.get("claim") is True]
    assert {h.record.metadata["store"] for h in claims} >= {"新宿店", "池袋店"}
    assert any("料理の温度が低い" in h.record.text for h in claims)


def test_demo_last_week_refrigerator_found(home: Path):
    # The fake embedder's dense axis is noise, and the default fusion's gate weighs it up when
    # the best keyword hit lacks a word of the question (トラブル): the keyword sides decide here.
    result = _search(
        home, "先週の冷蔵庫のトラブル", fusion=FusionConfig(normalization="max", dense_gate=0.0)
    )
    first, last = LAST_WEEK
    assert result.hits
    assert all(first <= h.record.metadata["date"] <= last for h in result.hits)
    texts = " ".join(h.record.text for h in result.hits)
    assert "ウォークイン冷蔵庫" in texts and "冷蔵庫の故障" in texts


def test_same_day_rebuild_embeds_nothing(home: Path):
    with tansaku.connect(home, embedder=HashEmbedder()) as ts:
        again = build_demo(ts, now=NOW.replace(hour=23))
    for name, report in again.items():
        counts = (report.inserted, report.updated, report.deleted, report.embedded)
        assert counts == (0, 0, 0, 0), name
    assert recorded_today(home) == NOW.date()


def test_tables_use_the_same_dates(home: Path):
    pytest.importorskip("duckdb")
    from tansaku.tables import StoreScope, TableDatabase, get_claim_statistics, load_tables_config

    assert install_tables(home) == ["stores", "events", "daily_reports"]  # the recorded day
    with (home / "tables" / "daily_reports.csv").open(encoding="utf-8", newline="") as fh:
        dates = sorted({row["date"] for row in csv.DictReader(fh)})
    assert (dates[0], dates[-1]) == ("2026-01-01", YESTERDAY)
    with TableDatabase(load_tables_config(home / "tables.toml")) as db:
        last_month = get_claim_statistics(
            db, "2026-02-01", "2026-02-28", scope=StoreScope.all_stores()
        )
        yesterday = get_claim_statistics(db, YESTERDAY, YESTERDAY, scope=StoreScope.all_stores())
    assert last_month.to_dict()["summary"]["claim_count"] > 0
    assert yesterday.to_dict()["summary"]["claim_count"] >= 2


def test_hints_are_relative_and_their_stats_command_runs(home: Path, monkeypatch):
    pytest.importorskip("duckdb")
    from tansaku.cli.main import app

    today = NOW.date()
    hints = demo_hints(today, current=today, home=home)
    searches = [h for h in hints if h.args[0] == "search"]
    assert [h.args[1] for h in searches] == ["昨日のクレーム", "先週の冷蔵庫のトラブル"]
    assert all("--now" not in h.args for h in hints)  # built today: plain relative queries
    later = demo_hints(today, current=today + timedelta(days=3), home=home)
    assert all(h.args[4:6] == ("--now", "2026-03-02") for h in later if h.args[0] == "search")
    assert shlex.split(hints[0].command)[1:] == list(hints[0].args)

    (stats,) = [h for h in hints if h.args[0] == "stats"]
    install_tables(home)  # as `tansaku demo build` does (a test of its own may run elsewhere)
    assert stats.args[:4] == ("stats", "claims", "--period", "先月")
    monkeypatch.setenv("TANSAKU_HOME", str(home))  # run as on the day it was built for:
    result = CliRunner().invoke(app, [*stats.args, "--now", today.isoformat(), "--json"])
    assert result.exit_code == 0, result.output
    assert '"start_date": "2026-02-01"' in result.stdout
    assert '"claim_count": 0' not in result.stdout
    assert not [h for h in demo_hints(today, current=today, tables=False) if h.args[0] == "stats"]


def test_a_later_day_embeds_only_what_changed(tmp_path: Path):
    """The next day: the new day's reports, the moved scripted facts, nothing else."""
    home = tmp_path / "demo"
    with tansaku.connect(home, embedder=HashEmbedder()) as ts:
        first = build_demo(ts, now=date(2026, 11, 18))
        later = build_demo(ts, now=date(2026, 11, 19))
    assert first["reports"].embedded > 250
    assert 0 < later["reports"].embedded <= 20
    assert later["reports"].inserted <= 12 and later["reports"].deleted <= 6
    for name in ("manuals", "notes", "cards"):
        assert later[name].embedded == 0 and later[name].inserted == 0, name
    assert recorded_today(home) == date(2026, 11, 19)


def test_readme_demo_examples_use_relative_dates():
    """The README's commands over the demo's reports must answer against a demo built today:
    relative expressions, no fixed dates or --now."""
    readme = Path(__file__).resolve().parents[2] / "README.md"
    lines = [
        line
        for line in readme.read_text(encoding="utf-8").splitlines()
        if line.startswith("tansaku stats")
        or (line.startswith("tansaku search") and ("-c reports" in line or "n reports" in line))
    ]
    assert len(lines) >= 3
    for line in lines:
        assert not re.search(r"\d{4}-\d{2}-\d{2}|--now|--from|--to", line.split("#")[0]), line

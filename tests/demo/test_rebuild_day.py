"""``tansaku demo build --now DAY`` over an existing workspace — also one that was moved or
copied since it was built — leaves exactly that day's reports: the reports collection and the
``daily_reports`` table hold the same reports as a fresh build for that day, and no search finds
a report dated after "now". Through the CLI, with the hash embedder (``TANSAKU_EMBEDDER=hash``)."""

from __future__ import annotations

import csv
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

import tansaku
from tansaku.cli.main import app
from tansaku.text.dates import parse_now

LATER, EARLIER = "2026-03-02", "2025-12-11"


def _build(home: Path, day: str) -> None:
    result = CliRunner().invoke(app, ["demo", "build", "--home", str(home), "--now", day])
    assert result.exit_code == 0, result.output


def _reports(home: Path) -> dict[str, str]:
    """Each stored report record's id → its date; every record's source is in ``home``."""
    with tansaku.connect(home) as ts, ts.reading("reports") as col:
        ids = sorted(col.store.hashes("default"))
        records = col.store.get("default", ids)
    assert all(str(r.metadata["source"]).startswith(str(home)) for r in records)
    return {r.id: str(r.metadata["date"]) for r in records}


def _table_ids(home: Path) -> set[str]:
    with (home / "tables" / "daily_reports.csv").open(encoding="utf-8", newline="") as fh:
        return {row["report_id"] for row in csv.DictReader(fh)}


@pytest.fixture
def hashed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TANSAKU_EMBEDDER", "hash")


@pytest.mark.usefixtures("hashed")
def test_a_rebuild_for_another_day_leaves_exactly_that_days_reports(tmp_path: Path) -> None:
    pytest.importorskip("duckdb")
    fresh = tmp_path / "fresh"
    _build(fresh, EARLIER)
    expected = _reports(fresh)
    assert max(expected.values()) < EARLIER

    built = tmp_path / "built"
    _build(built, LATER)
    later = _reports(built)
    assert max(later.values()) >= "2026-03-01" and len(later) != len(expected)
    moved = tmp_path / "moved"  # the workspace copied elsewhere, then rebuilt for another day
    shutil.copytree(built, moved)
    for home in (built, moved):
        _build(home, EARLIER)
        assert _reports(home) == expected, home
        doc_ids = {rid.split(":")[0] for rid in expected}
        assert _table_ids(home) <= doc_ids  # the table's reports are the collection's
        assert _table_ids(home) == _table_ids(fresh)
        with tansaku.connect(home) as ts:
            result = ts.search("クレーム", collection="reports", top_k=50, now=parse_now(EARLIER))
        assert result.hits and all(h.record.metadata["date"] < EARLIER for h in result.hits)

    _build(moved, LATER)  # and back: exactly the later day's again
    assert _reports(moved) == later

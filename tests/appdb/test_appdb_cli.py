"""``tansaku keys`` and ``tansaku feedback export`` through the CLI runner (SQLite workspace)."""

from __future__ import annotations

import csv
import io
import json
from datetime import UTC, datetime, timedelta

import pytest
from appdb_events import search_event
from typer.testing import CliRunner

from tansaku.appdb import open_appdb
from tansaku.cli.main import app

runner = CliRunner()
T0 = datetime(2025, 8, 25, 3, 0, tzinfo=UTC)  # 12:00 in Tokyo


def test_keys_create_list_revoke(tmp_path) -> None:
    home = tmp_path / "ws"
    made = runner.invoke(
        app, ["keys", "create", "--team", "cards", "--name", "CI", "--home", str(home)]
    )
    assert made.exit_code == 0, made.output
    key = made.stdout.strip()
    assert key.startswith("tsk_") and "\n" not in key
    assert "今だけ表示" in made.stderr
    with open_appdb(home) as db:
        assert db.keys.verify(key) == "cards"
    listed = runner.invoke(app, ["keys", "list", "--json", "--home", str(home)])
    (info,) = json.loads(listed.stdout)["keys"]
    assert info["prefix"] == key[:12] and info["team"] == "cards" and info["active"]
    assert key not in listed.stdout
    gone = runner.invoke(app, ["keys", "revoke", key[:12], "--home", str(home)])
    assert gone.exit_code == 0 and "無効にしました" in gone.stdout
    with open_appdb(home) as db:
        assert db.keys.verify(key) is None
    missing = runner.invoke(app, ["keys", "revoke", "tsk_xxxxxxxx", "--home", str(home)])
    assert missing.exit_code == 1 and "見つかりません" in missing.stderr


def test_keys_refuse_a_bad_team_and_a_missing_workspace(tmp_path) -> None:
    bad = runner.invoke(app, ["keys", "create", "--team", "../x", "--home", str(tmp_path / "w")])
    assert bad.exit_code == 2 and "チーム名" in bad.stderr
    nowhere = runner.invoke(app, ["keys", "list", "--home", str(tmp_path / "nope")])
    assert nowhere.exit_code == 1 and "ありません" in nowhere.stderr
    assert not (tmp_path / "nope").exists()


@pytest.fixture
def rated(tmp_path):
    home = tmp_path / "ws"
    with open_appdb(home) as db:
        db.events.record("cards", search_event("q1", "フィールドのカードを手札に戻すカード"), at=T0)
        db.events.record("cards", search_event("q2", "疾走", zero_hit=True), at=T0)
        db.events.record("other", search_event("q3", "他チームの検索"), at=T0)
        db.feedback.submit(
            "cards",
            query_id="q1",
            rating=-1,
            reason='=HYPERLINK("http://x") が出る',
            client="ip:1",
            now=T0 + timedelta(minutes=1),
        )
        db.feedback.submit("cards", query_id="q2", rating=1, client="ip:1", now=T0)
        db.feedback.submit("other", query_id="q3", rating=-1, client="ip:2", now=T0)
        db.feedback.submit(
            "cards", query_id="q1", rating=1, client="ip:1", now=T0 + timedelta(days=3)
        )
    return home


def test_export_csv_one_row_per_feedback_formulas_neutralised(rated) -> None:
    res = runner.invoke(
        app,
        [
            "feedback",
            "export",
            "--from",
            "2025-08-25",
            "--to",
            "2025-08-25",
            "--csv",
            "--team",
            "cards",
            "--home",
            str(rated),
        ],
    )
    assert res.exit_code == 0, res.output
    rows = list(csv.DictReader(io.StringIO(res.stdout)))
    assert [r["query_id"] for r in rows] == ["q2", "q1"]
    q1 = rows[1]
    assert q1["rating"] == "-1" and q1["reason"].startswith("'=HYPERLINK(&quot;")
    assert q1["query"] == "フィールドのカードを手札に戻すカード"
    assert q1["created_at"] == "2025-08-25T12:01:00+09:00"
    assert q1["namespaces"] == "effect_1|effect_combined"


def test_export_json_has_the_stats_and_rows_of_the_team_only(rated) -> None:
    res = runner.invoke(
        app,
        [
            "feedback",
            "export",
            "--from",
            "2025-08-25",
            "--to",
            "2025-08-25",
            "--json",
            "--team",
            "cards",
            "--home",
            str(rated),
        ],
    )
    assert res.exit_code == 0, res.output
    data = json.loads(res.stdout)
    stats = data["stats"]
    assert (stats["searches"], stats["zero_hit"], stats["feedback"], stats["negative"]) == (
        2,
        1,
        2,
        1,
    )
    assert {"term": "手札", "count": 1} in stats["top_negative_terms"]
    assert [f["query_id"] for f in data["feedback"]] == ["q2", "q1"]
    assert all("client" not in f for f in data["feedback"])


def test_export_summary_and_bad_options(rated) -> None:
    res = runner.invoke(
        app,
        [
            "feedback",
            "export",
            "--from",
            "2025-08-01",
            "--to",
            "2025-08-31",
            "--home",
            str(rated),
            "--team",
            "cards",
        ],
    )
    assert res.exit_code == 0, res.output
    assert "検索 2 件" in res.stdout and "👎率 33.3%" in res.stdout and "手札(1)" in res.stdout
    both = runner.invoke(app, ["feedback", "export", "--csv", "--json", "--home", str(rated)])
    assert both.exit_code == 2 and "どちらか一方" in both.stderr
    bad = runner.invoke(app, ["feedback", "export", "--from", "8/25", "--home", str(rated)])
    assert bad.exit_code == 2 and "YYYY-MM-DD" in bad.stderr
    order = runner.invoke(
        app,
        ["feedback", "export", "--from", "2025-09-01", "--to", "2025-08-01", "--home", str(rated)],
    )
    assert order.exit_code == 2

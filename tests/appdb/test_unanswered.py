"""The unanswered log in appdb: filters, resolve, team scope, and the one-time legacy import."""

from __future__ import annotations

import json
import sqlite3
from datetime import UTC, datetime, timedelta

import pytest

from tansaku.appdb import NotFound
from tansaku.appdb.rows import Page, Period
from tansaku.appdb.unanswered import QuestionFilter

T0 = datetime(2025, 8, 25, tzinfo=UTC)


def test_add_filter_page_and_resolve(db) -> None:
    for i, coll in enumerate(["manual", "reports", "manual"]):
        db.unanswered.add(
            "shinjuku",
            collection=coll,
            question=f"来月の売上は?{i}",
            reason="予測はできません",
            tools=["get_sales_stats"],
            asked_at=T0 + timedelta(days=i),
        )
    assert [q.question for q in db.unanswered.find("shinjuku", QuestionFilter("manual"))] == [
        "来月の売上は?2",
        "来月の売上は?0",
    ]
    assert (
        db.unanswered.count("shinjuku", QuestionFilter(period=Period(T0 + timedelta(days=1)))) == 2
    )
    page = db.unanswered.find("shinjuku", page=Page(1, offset=1))
    assert [q.question for q in page] == ["来月の売上は?1"]
    q = page[0]
    done = db.unanswered.resolve("shinjuku", q.id, "マニュアル第3章に追記しました")
    assert done.resolved and done.resolution == "マニュアル第3章に追記しました"
    again = db.unanswered.resolve("shinjuku", q.id, "追記2")
    assert again.resolved_at == done.resolved_at and again.resolution == "追記2"
    assert db.unanswered.count("shinjuku", QuestionFilter(resolved=False)) == 2
    assert [x.id for x in db.unanswered.find("shinjuku", QuestionFilter(resolved=True))] == [q.id]
    assert q.to_dict()["tools"] == ["get_sales_stats"]


def test_a_team_never_sees_or_resolves_another_teams_questions(db) -> None:
    q = db.unanswered.add("shinjuku", collection="manual", question="鍵の場所は?", reason="r")
    assert db.unanswered.find("shibuya") == [] and db.unanswered.count("shibuya") == 0
    with pytest.raises(NotFound):
        db.unanswered.resolve("shibuya", q.id, "x")
    with pytest.raises(NotFound):
        db.unanswered.get("shibuya", q.id)
    assert not db.unanswered.get("shinjuku", q.id).resolved


def test_the_legacy_sqlite_log_is_imported_once(db, tmp_path) -> None:
    legacy = tmp_path / "old" / "appdb.sqlite"
    legacy.parent.mkdir()
    con = sqlite3.connect(legacy)
    con.executescript(
        "CREATE TABLE unanswered (id INTEGER PRIMARY KEY AUTOINCREMENT, asked_at TEXT NOT NULL,"
        " team TEXT NOT NULL, collection TEXT NOT NULL, question TEXT NOT NULL,"
        " reason TEXT NOT NULL, tools TEXT NOT NULL);"
    )
    con.executemany(
        "INSERT INTO unanswered (asked_at, team, collection, question, reason, tools)"
        " VALUES (?, ?, ?, ?, ?, ?)",
        [
            (
                "2025-08-01T09:00:00+00:00",
                "shinjuku",
                "manual",
                "冷蔵庫の型番は?",
                "該当なし",
                json.dumps(["search_manual"], ensure_ascii=False),
            ),
            ("2025-08-02T10:30:00+00:00", "shibuya", "reports", "昨日の天気は?", "該当なし", "[]"),
        ],
    )
    con.commit()
    con.close()
    assert db.unanswered.import_legacy(legacy) == 2
    assert db.unanswered.import_legacy(legacy) == 0
    (q,) = db.unanswered.find("shinjuku")
    assert q.question == "冷蔵庫の型番は?" and q.tools == ("search_manual",)
    assert q.asked_at == datetime(2025, 8, 1, 9, tzinfo=UTC)
    assert [x.question for x in db.unanswered.find("shibuya")] == ["昨日の天気は?"]
    assert legacy.is_file()  # left in place: nothing is lost
    assert db.unanswered.import_legacy(tmp_path / "missing.sqlite") == 0

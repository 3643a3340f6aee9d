"""The agent's UnansweredLog, same API as before, now stored in appdb: the old raw-SQLite
file's rows come along on first use, once."""

from __future__ import annotations

import json
import sqlite3

import pytest

from tansaku.agent.unanswered import UnansweredLog
from tansaku.appdb import NotFound, close_shared, open_appdb


@pytest.fixture(autouse=True)
def _fresh_shared():
    yield
    close_shared()


def _legacy(path) -> None:
    con = sqlite3.connect(path)
    con.executescript(
        "CREATE TABLE unanswered (id INTEGER PRIMARY KEY AUTOINCREMENT, asked_at TEXT NOT NULL,"
        " team TEXT NOT NULL, collection TEXT NOT NULL, question TEXT NOT NULL,"
        " reason TEXT NOT NULL, tools TEXT NOT NULL);"
    )
    con.execute(
        "INSERT INTO unanswered (asked_at, team, collection, question, reason, tools)"
        " VALUES ('2025-12-01T09:00:00+00:00', 'default', 'manuals', '来月の売上予測は?',"
        " '予測はできません', ?)",
        (json.dumps(["get_sales_stats"]),),
    )
    con.commit()
    con.close()


def test_same_api_stored_in_appdb_with_the_legacy_rows(tmp_path) -> None:
    home = tmp_path / "ws"
    home.mkdir()
    _legacy(home / "appdb.sqlite")
    log = UnansweredLog(home / "appdb.sqlite")
    log.add(
        team="default",
        collection="reports",
        question="明日の天気は?",
        reason="該当なし",
        tools=["search_past_cases"],
    )
    log.add(team="other", collection="reports", question="他チーム", reason="r", tools=[])
    items = log.list(team="default")
    assert [u.question for u in items] == ["明日の天気は?", "来月の売上予測は?"]
    assert items[1].asked_at == "2025-12-01T09:00:00+00:00"
    assert items[1].tools == ("get_sales_stats",)
    assert items[0].to_dict()["resolved"] is False
    # a second log on the same workspace does not import the file again
    assert len(UnansweredLog(home / "appdb.sqlite").list(team="default")) == 2
    with open_appdb(home) as db:
        assert db.unanswered.count("default") == 2 and db.unanswered.count("other") == 1
    done = log.resolve(team="default", question_id=items[0].id, resolution="FAQ に追記")
    assert done.resolved_at is not None and done.resolution == "FAQ に追記"
    with pytest.raises(NotFound):
        log.resolve(team="other", question_id=items[0].id)
    assert log.list(team="default", resolved=False)[0].question == "来月の売上予測は?"


def test_an_open_appdb_can_be_given(db) -> None:
    log = UnansweredLog(db)
    log.add(team="t", collection="c", question="質問", reason="理由", tools=[])
    assert [u.question for u in log.list(team="t")] == ["質問"]
    assert log.list(team="u") == []


def test_opening_the_workspace_copies_the_legacy_rows(tmp_path) -> None:
    """The server opens appdb directly: the old file's rows are there from its first open."""
    home = tmp_path / "ws"
    home.mkdir()
    _legacy(home / "appdb.sqlite")
    with open_appdb(home) as db:
        assert [q.question for q in db.unanswered.find("default")] == ["来月の売上予測は?"]
    with open_appdb(home) as db:
        assert db.unanswered.count("default") == 1

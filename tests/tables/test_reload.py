"""Rows appended to a table's file reach a running database: on the next query (the file's
signature changed), on ``reload()``, and on ``tansaku tables reload`` run as another process.
A file that cannot be read keeps the old table; a reader never sees a half-loaded one."""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path

import pytest
from tables_support import append_row, copied_row, demo_workspace, sql_json, tansaku

from tansaku.errors import ConfigError
from tansaku.tables import TableDatabase, load_tables_config, sql_tool

COUNT = "SELECT count(*) AS n FROM stores"


def _count(db: TableDatabase, tool: str = "search_stores") -> int:
    outcome = sql_tool(db, tool)(COUNT)
    assert "error" not in outcome, outcome
    return int(outcome["results"][0]["n"])


@pytest.fixture(params=["inline", "process"])
def home(request, tmp_path: Path) -> Path:
    return demo_workspace(tmp_path / "ws", isolation=request.param)


@pytest.fixture
def db(home: Path):
    with TableDatabase(load_tables_config(home / "tables.toml")) as database:
        yield database


def test_rows_appended_are_seen_by_the_next_query(home: Path, db: TableDatabase) -> None:
    stores = home / "tables" / "stores.csv"
    assert _count(db) == 28 and db.row_count("stores") == 28
    append_row(stores, copied_row(stores, "STR-0003", "STR-9001"))
    assert _count(db) == 29  # the tool's own scope database
    assert db.row_count("stores") == 29  # the shared one
    found = sql_tool(db, "search_stores")("SELECT store_id FROM stores WHERE store_id = 'STR-9001'")
    assert found["count"] == 1
    append_row(stores, copied_row(stores, "STR-0004", "STR-9002"))
    assert _count(db, "sql") == 30


def test_reload_reports_the_rows(home: Path, db: TableDatabase) -> None:
    stores = home / "tables" / "stores.csv"
    append_row(stores, copied_row(stores, "STR-0003", "STR-9001"))
    report = db.reload(["stores"])
    assert report.ok and report.to_dict() == {
        "ok": True,
        "tables": [{"name": "stores", "reloaded": True, "rows": 29, "error": None}],
    }
    everything = db.reload()
    assert [t.name for t in everything.tables] == ["stores", "events", "daily_reports"]
    assert everything.ok and _count(db) == 29
    with pytest.raises(ConfigError, match="テーブル「nope」は登録されていません"):
        db.reload(["nope"])


def test_a_file_that_cannot_be_read_keeps_the_old_table(home: Path, db: TableDatabase) -> None:
    events = home / "tables" / "events.csv"
    good = events.read_text(encoding="utf-8")
    assert db.row_count("events") == 21
    # start_date is a DATE: a 13th month cannot be loaded as declared
    append_row(events, copied_row(events, "EVT-001", "EVT-999").replace("2025-10-04", "2025-13-04"))
    search = sql_tool(db, "search_events")
    assert search("SELECT count(*) AS n FROM events")["results"] == [{"n": 21}]
    report = db.reload(["events"])
    assert not report.ok
    [failure] = report.failed
    assert failure.name == "events" and failure.rows is None
    assert "テーブル「events」を読み込めません" in failure.error
    assert failure.error.endswith("前に読み込んだ内容のまま使います")
    assert "tansaku-tables-" not in failure.error  # the user's file, never the private copy
    assert db._core.sources.stale() == []  # a broken version is not tried again at each query
    assert db.row_count("events") == 21
    events.write_text(good + copied_row(events, "EVT-002", "EVT-998") + "\n", encoding="utf-8")
    assert search("SELECT count(*) AS n FROM events")["results"] == [{"n": 22}]


def test_a_broken_table_does_not_hold_back_another(home: Path, db: TableDatabase) -> None:
    stores, events = home / "tables" / "stores.csv", home / "tables" / "events.csv"
    append_row(stores, copied_row(stores, "STR-0003", "STR-9001"))
    events.write_bytes(b"event_id,start_date\n\xff\xfe\x00broken\n")
    report = db.reload()
    assert {t.name: t.reloaded for t in report.tables} == {
        "stores": True,
        "events": False,
        "daily_reports": True,
    }
    assert _count(db) == 29 and db.row_count("events") == 21


def test_a_removed_file_keeps_the_old_table(home: Path, db: TableDatabase) -> None:
    (home / "tables" / "stores.csv").unlink()
    assert _count(db) == 28
    [failure] = db.reload(["stores"]).failed
    assert "ファイルがありません" in failure.error


def test_tansaku_tables_reload_reaches_a_running_database(home: Path, db: TableDatabase) -> None:
    """An edit that keeps the file's size and time (and inode) is invisible to the signature;
    ``tansaku tables reload`` in another process still reaches this one."""
    stores = home / "tables" / "stores.csv"
    assert _count(db) == 28
    before = os.stat(stores)
    data = stores.read_bytes()
    with stores.open("r+b") as fh:  # the same number of bytes, the same inode
        fh.write(data.replace(b"STR-0001,", b"STR-0X01,", 1))
    os.utime(stores, ns=(before.st_atime_ns, before.st_mtime_ns))
    probe = "SELECT count(*) AS n FROM stores WHERE store_id = 'STR-0X01'"
    assert sql_tool(db, "search_stores")(probe)["results"] == [{"n": 0}]
    done = tansaku(home, "tables", "reload", "stores")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "stores: 28行を読み込みました"
    assert "次のクエリの前に読み込み直します" in done.stderr
    assert sql_tool(db, "search_stores")(probe)["results"] == [{"n": 1}]
    requests = json.loads((home / "tables.reload.json").read_text(encoding="utf-8"))
    assert set(requests) == {"stores"}


def test_readers_never_see_a_half_loaded_table(home: Path, db: TableDatabase) -> None:
    """Readers in threads while rows are appended and reloaded: every answer is a whole file's
    count, never fewer rows than a reader saw before, and no query fails."""
    stores = home / "tables" / "stores.csv"
    rounds = 6 if db.config.sandbox.isolation == "inline" else 3
    valid = set(range(28, 29 + rounds))
    seen: list[list[int]] = [[] for _ in range(3)]
    errors: list[object] = []
    stop = threading.Event()

    def read(out: list[int]) -> None:
        tool = sql_tool(db, "search_stores")
        while not stop.is_set():
            outcome = tool("SELECT count(*) AS n, count(DISTINCT store_id) AS ids FROM stores")
            if "error" in outcome:
                errors.append(outcome)
                return
            row = outcome["results"][0]
            out.append(row["n"])
            if row["n"] != row["ids"]:
                errors.append(row)

    readers = [threading.Thread(target=read, args=(out,)) for out in seen]
    for reader in readers:
        reader.start()
    try:
        for i in range(rounds):
            append_row(stores, copied_row(stores, "STR-0003", f"STR-95{i:02d}"))
            assert db.reload(["stores"]).ok
    finally:
        stop.set()
        for reader in readers:
            reader.join(60)
    assert not errors, errors[:3]
    for counts in seen:
        assert counts and set(counts) <= valid
        assert counts == sorted(counts)  # the new table once seen, never the old one again
    assert _count(db) == 28 + rounds


def test_a_team_view_shares_the_database(db: TableDatabase) -> None:
    view = db.for_team("shinjuku")
    assert view.team == "shinjuku" and db.team == "default"
    assert view._backend is db._backend
    view.close()  # a view's close leaves the database open
    assert _count(db) == 28
    with pytest.raises(ConfigError):
        db.for_team("新宿")


def test_the_private_copies_go_with_the_database(home: Path) -> None:
    database = TableDatabase(load_tables_config(home / "tables.toml"))
    folder = database._core.sources.folder
    assert folder.is_dir() and len(list(folder.iterdir())) == 3
    assert oct(folder.stat().st_mode & 0o777) == "0o700"
    database.close()
    assert not folder.exists()


def test_tansaku_tables_reload_in_fresh_processes(tmp_path: Path) -> None:
    """What a user types: a query, rows appended, ``tansaku tables reload``, the query again —
    each a new process, the sandbox in its worker process as configured by default."""
    home = demo_workspace(tmp_path / "ws", isolation="process")
    stores = home / "tables" / "stores.csv"
    assert sql_json(home, COUNT)["results"] == [{"n": 28}]
    append_row(stores, copied_row(stores, "STR-0003", "STR-9001"))
    done = tansaku(home, "tables", "reload", "stores", "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {
        "ok": True,
        "tables": [{"name": "stores", "reloaded": True, "rows": 29, "error": None}],
    }
    assert sql_json(home, COUNT)["results"] == [{"n": 29}]
    assert sql_json(home, COUNT, "--tool", "search_stores")["results"] == [{"n": 29}]


def test_tansaku_tables_reload_says_what_it_could_not_read(tmp_path: Path) -> None:
    home = demo_workspace(tmp_path / "ws")
    (home / "tables" / "events.csv").write_bytes(b"event_id,start_date\n\xff\xfe\x00broken\n")
    everything = tansaku(home, "tables", "reload")
    assert everything.returncode == 1
    assert "stores: 28行を読み込みました" in everything.stdout
    assert "events: テーブル「events」を読み込めません" in everything.stderr
    assert "前に読み込んだ内容のまま使います" in everything.stderr
    assert "Traceback" not in everything.stderr
    as_json = json.loads(tansaku(home, "tables", "reload", "events", "--json").stdout)
    assert as_json["ok"] is False and as_json["tables"][0]["rows"] is None
    unknown = tansaku(home, "tables", "reload", "nope")
    assert unknown.returncode == 2
    assert "テーブル「nope」は登録されていません" in unknown.stderr
    requests = json.loads((home / "tables.reload.json").read_text(encoding="utf-8"))
    assert set(requests) == {"stores", "daily_reports"}  # never a table that did not load
    listed = tansaku(home, "tables", "--json")  # the list is still the group's default
    assert listed.returncode == 1 and "events" in listed.stderr

"""The SQL audit log: a JSON line per query run or refused — through ``tansaku sql`` (fresh
processes) and through the agent's SQL tool (the team of its toolset) — whole lines under
threads and processes writing at once."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from datetime import datetime, timedelta
from pathlib import Path

import pytest
from tables_support import demo_workspace, tansaku

import tansaku as tansaku_lib
from tansaku.tables import TableDatabase, load_tables_config, sql_tool
from tansaku.tables.audit import SqlAudit, read_audit
from tansaku.testing import HashEmbedder
from tansaku.tools import toolset

FIELDS = {"time", "team", "tool", "sql", "rows", "ms", "refused", "error"}
GOOD = "SELECT store_name FROM stores WHERE pets_allowed = 'TRUE'"
SEED = "SELECT setseed(0.5)"
DELETE = "DELETE FROM stores WHERE store_id = 'STR-0001'"


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return demo_workspace(tmp_path / "ws")


def _lines(home: Path) -> list[dict]:
    path = home / "logs" / "sql-audit.jsonl"
    raw = path.read_bytes().decode("utf-8").split("\n")
    assert raw[-1] == ""  # every line ends with its newline
    return [json.loads(line) for line in raw[:-1]]  # every line is JSON


def _check(entry: dict) -> None:
    assert set(entry) == FIELDS
    when = datetime.fromisoformat(entry["time"])
    assert when.utcoffset() == timedelta(hours=9)
    assert isinstance(entry["ms"], float | int) and entry["ms"] >= 0


def test_tansaku_sql_logs_what_ran_and_what_was_refused(home: Path) -> None:
    assert tansaku(home, "sql", GOOD).returncode == 0
    assert tansaku(home, "sql", SEED).returncode == 2
    assert tansaku(home, "sql", DELETE, "--tool", "search_stores").returncode == 2
    assert tansaku(home, "sql", "SELECT no_such_column FROM stores").returncode == 1
    entries = _lines(home)
    assert len(entries) == 4
    for entry in entries:
        _check(entry)
    good, seed, delete, failed = entries
    assert (good["team"], good["tool"], good["sql"], good["refused"]) == (
        "default",
        "sql",
        GOOD,
        None,
    )
    assert good["rows"] > 0 and good["error"] is None
    assert seed["rows"] is None and "関数 setseed は使えません" in seed["refused"]
    assert delete["tool"] == "search_stores"
    assert delete["refused"] == "SELECT文以外(DELETE)は実行できません"
    assert failed["refused"] is None and failed["rows"] is None
    assert "no_such_column" in failed["error"]


def test_the_agents_tool_logs_its_team(home: Path) -> None:
    client = tansaku_lib.connect(home, embedder=HashEmbedder(32))
    try:
        with TableDatabase(
            load_tables_config(home / "tables.toml"), audit_log=home / "logs" / "sql-audit.jsonl"
        ) as db:
            tools = toolset(client, team="shinjuku", tables=db.for_team("shinjuku"))
            ok = json.loads(tools.call("search_stores", {"sql_query": GOOD}))
            assert ok["count"] > 0
            refused = json.loads(tools.call("search_events", {"sql_query": SEED}))
            assert "setseed" in refused["error"]
            other = json.loads(tools.call("search_stores", {"sql_query": DELETE}))
            assert "error" in other
    finally:
        client.close()
    entries = _lines(home)
    assert [(e["team"], e["tool"], e["rows"] is None) for e in entries] == [
        ("shinjuku", "search_stores", False),
        ("shinjuku", "search_events", True),
        ("shinjuku", "search_stores", True),
    ]
    for entry in entries:
        _check(entry)
    assert entries[0]["rows"] == ok["count"]


def test_threads_write_whole_lines(home: Path) -> None:
    with TableDatabase(
        load_tables_config(home / "tables.toml"), audit_log=home / "logs" / "sql-audit.jsonl"
    ) as db:

        def run(team: str) -> None:
            tool = sql_tool(db.for_team(team), "search_stores")
            for i in range(15):
                tool(GOOD if i % 3 else SEED)

        threads = [threading.Thread(target=run, args=(f"team{n}",)) for n in range(6)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(120)
    entries = _lines(home)
    assert len(entries) == 90
    assert {e["team"] for e in entries} == {f"team{n}" for n in range(6)}
    assert sum(1 for e in entries if e["refused"]) == 30


WRITER = """
import sys
from pathlib import Path
from tansaku.tables.audit import SqlAudit
audit = SqlAudit(Path(sys.argv[1]))
for i in range(200):
    audit.record(team=sys.argv[2], tool="sql", sql="SELECT '" + "あ" * 3000 + "'", rows=i, ms=0.1)
"""


def test_processes_write_whole_lines(tmp_path: Path) -> None:
    """Long lines (9 KB each) from three processes at once: none cut, none interleaved."""
    path = tmp_path / "logs" / "sql-audit.jsonl"
    procs = [subprocess.Popen([sys.executable, "-c", WRITER, str(path), f"p{n}"]) for n in range(3)]
    for proc in procs:
        assert proc.wait(120) == 0
    entries = read_audit(path)
    assert len(entries) == 600
    for team in ("p0", "p1", "p2"):
        assert [e["rows"] for e in entries if e["team"] == team] == list(range(200))
    assert oct(path.stat().st_mode & 0o777) == "0o600"


def test_a_log_that_cannot_be_written_costs_no_query(home: Path) -> None:
    blocked = home / "not-a-folder"
    blocked.write_text("", encoding="utf-8")
    with TableDatabase(
        load_tables_config(home / "tables.toml"), audit_log=blocked / "sql-audit.jsonl"
    ) as db:
        assert sql_tool(db, "search_stores")(GOOD)["count"] > 0
    assert (
        SqlAudit(blocked / "x.jsonl").record(team="t", tool="sql", sql="SELECT 1", rows=1, ms=1.0)[
            "rows"
        ]
        == 1
    )

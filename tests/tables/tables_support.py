"""Helpers of the reload, infer/add, audit and design-SQL tests: a demo workspace of one's own
and ``tansaku`` run as a fresh process, as a user runs it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

from tansaku.demo.tables import install_demo_tables
from tansaku.tables import load_tables_config, write_tables_config

TANSAKU = [sys.executable, "-m", "tansaku.cli.main"]


def demo_workspace(home: Path, *, isolation: str = "inline") -> Path:
    """The demo tables in ``home`` (``isolation`` written to its ``tables.toml``)."""
    install_demo_tables(home)
    config = load_tables_config(home / "tables.toml")
    sandbox = replace(config.sandbox, isolation=isolation)
    write_tables_config(replace(config, sandbox=sandbox), home / "tables.toml")
    return home


def tansaku(home: Path, *args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """``tansaku ARGS --home HOME``'s way: a new interpreter, the workspace from the env."""
    env = {**os.environ, "TANSAKU_HOME": str(home), "NO_COLOR": "1", "COLUMNS": "200"}
    env.pop("TANSAKU_DEBUG", None)
    return subprocess.run(
        [*TANSAKU, *args], capture_output=True, text=True, env=env, timeout=timeout, check=False
    )


def sql_json(home: Path, sql: str, *extra: str) -> dict[str, Any]:
    done = tansaku(home, "sql", sql, "--json", *extra)
    assert done.returncode in (0, 1, 2), done.stderr
    out: dict[str, Any] = json.loads(done.stdout)
    return out


def append_row(csv: Path, row: str) -> None:
    """``row`` as the file's last line (the example files end their lines with CRLF)."""
    with csv.open("a", encoding="utf-8", newline="") as fh:
        fh.write(row.rstrip("\r\n") + "\r\n")


def copied_row(csv: Path, old_id: str, new_id: str) -> str:
    """A data line of ``csv`` (the one with ``old_id``) under a new id."""
    for line in csv.read_text(encoding="utf-8").splitlines():
        if line.startswith(old_id + ","):
            return line.replace(old_id, new_id, 1)
    raise AssertionError(f"{old_id} not in {csv}")

"""The SQL audit log: one JSON line per query a SQL tool ran or refused.

``<home>/logs/sql-audit.jsonl`` (``Workspace.sql_audit_file``)::

    {"time": "2026-01-05T10:00:00.123+09:00", "team": "shinjuku", "tool": "search_stores",
     "sql": "SELECT …", "rows": 3, "ms": 4.2, "refused": null, "error": null}

``sql`` is the query as it was given (cut at :data:`MAX_SQL_CHARS`); ``rows`` the rows returned
(null when refused or failed); ``refused`` the Japanese reason it was not run; ``error`` DuckDB's
message when it ran and failed. Each line is written with one ``write`` on a descriptor opened
with ``O_APPEND``, so lines of concurrent threads and processes never interleave. A log that
cannot be written costs a warning, never the query.
"""

from __future__ import annotations

import json
import logging
import os
import threading
from pathlib import Path
from typing import Any

from tansaku.text.dates import now_tokyo

log = logging.getLogger(__name__)
MAX_SQL_CHARS = 20_000
_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_APPEND | getattr(os, "O_CLOEXEC", 0)


class SqlAudit:
    """Appends audit lines to ``path`` (created with mode 0600, its folder as needed)."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self._warned = threading.Event()

    def record(
        self,
        *,
        team: str,
        tool: str,
        sql: str,
        rows: int | None,
        ms: float,
        refused: str | None = None,
        error: str | None = None,
    ) -> dict[str, Any]:
        """Append one line; returns the entry."""
        text = sql if len(sql) <= MAX_SQL_CHARS else sql[:MAX_SQL_CHARS] + "…"
        entry: dict[str, Any] = {
            "time": now_tokyo().isoformat(timespec="milliseconds"),
            "team": team,
            "tool": tool,
            "sql": text,
            "rows": rows,
            "ms": round(ms, 1),
            "refused": refused,
            "error": error,
        }
        line = (json.dumps(entry, ensure_ascii=False) + "\n").encode("utf-8")
        try:
            self._append(line)
        except OSError as e:
            if not self._warned.is_set():  # once per database: not a line per query
                self._warned.set()
                log.warning("SQL の監査ログ %s に書けません: %s", self.path, e)
        return entry

    def _append(self, line: bytes) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, _FLAGS, 0o600)
        try:
            written = os.write(fd, line)  # one call: an O_APPEND write lands whole at the end
            if written != len(line):  # a full disk: finish the line rather than leave half
                os.write(fd, line[written:])
        finally:
            os.close(fd)


def read_audit(path: Path) -> list[dict[str, Any]]:
    """The entries of an audit log (none when it does not exist)."""
    p = Path(path)
    if not p.is_file():
        return []
    return [json.loads(x) for x in p.read_text(encoding="utf-8").splitlines() if x.strip()]

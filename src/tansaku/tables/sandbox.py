"""``TableDatabase``: the registered tables behind one locked DuckDB, safe to share.

Two isolation modes (``[sandbox] isolation``):

- ``process`` (default): the engine runs in a worker process (``worker.py``) that is killed and
  restarted when a query overstays its timeout, with its address space capped on POSIX;
- ``inline``: the engine runs in this process (no subprocess; faster to open). The interrupt
  timer still stops joins, scans and recursion, but not one giant scalar call.

Both run the same ``Engine`` (``engine.py``): tables loaded then the connection locked (external
access off, extensions off, no spilling, memory limit, configuration locked), each query in a
rolled-back transaction under an interrupt timer, results converted to JSON-safe values.
"""

from __future__ import annotations

from collections.abc import Collection
from pathlib import Path
from typing import Any

from tansaku.tables import _deps
from tansaku.tables.engine import Engine, QueryFailed, RawResult, quote_ident
from tansaku.tables.registry import TablesConfig, load_tables_config
from tansaku.tables.worker import WorkerClient
from tansaku.workspace import Workspace

__all__ = ["QueryFailed", "RawResult", "TableDatabase", "open_tables"]


class TableDatabase:
    """The tables of a ``TablesConfig``, loaded and locked. Thread-safe; close it when done."""

    def __init__(self, config: TablesConfig) -> None:
        _deps.duckdb()  # MissingExtra here, in the caller's process, not in a worker
        self.config = config
        self._backend: Engine | WorkerClient
        if config.sandbox.isolation == "inline":
            self._backend = Engine(config)
        else:
            self._backend = WorkerClient(config)

    @classmethod
    def open(cls, config: TablesConfig) -> TableDatabase:
        return cls(config)

    def execute(
        self,
        sql: str,
        params: list[Any] | None = None,
        *,
        max_rows: int | None = None,
        allowed: Collection[str] | None = None,
    ) -> RawResult:
        """Run ``sql`` under the timer in a rolled-back transaction; values come back JSON-safe.

        Callers pass SQL that ``validate.check_sql`` accepted, or their own trusted SQL with
        ``?`` parameters (the analytics functions). ``max_rows=None`` fetches everything.
        ``allowed``: the tables a tool may read — DuckDB's plan of the query is checked against
        them before it runs (``QueryRejected`` otherwise; see ``bound.py``).
        """
        return self._backend.execute(sql, list(params or []), max_rows, allowed)

    def row_count(self, table: str) -> int:
        self.config.table(table)  # raises for unknown names; the name is then safe to quote
        return int(self.execute(f"SELECT count(*) FROM {quote_ident(table)}").rows[0][0])

    def columns(self, table: str) -> tuple[tuple[str, str], ...]:
        """``(name, DuckDB type)`` of a loaded table, in order."""
        self.config.table(table)
        result = self.execute(
            "SELECT column_name, data_type FROM information_schema.columns "
            "WHERE table_name = ? ORDER BY ordinal_position",
            [table],
        )
        return tuple((str(n), str(t)) for n, t in result.rows)

    def close(self) -> None:
        self._backend.close()

    def __enter__(self) -> TableDatabase:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def open_tables(source: TablesConfig | Path | str | None = None) -> TableDatabase:
    """Open a ``TableDatabase`` from a config, a ``tables.toml`` path, or (``None``) the
    workspace's registry (``$TANSAKU_HOME/tables.toml``)."""
    if isinstance(source, TablesConfig):
        return TableDatabase(source)
    path = Workspace.from_env().tables_file if source is None else Path(source)
    return TableDatabase(load_tables_config(path))

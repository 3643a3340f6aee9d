"""``TableDatabase``: the registered tables behind one locked DuckDB, safe to share.

Two isolation modes (``[sandbox] isolation``):

- ``process`` (default): the engine runs in a worker process (``worker.py``) that is killed and
  restarted when a query overstays its timeout, with its address space capped on POSIX;
- ``inline``: the engine runs in this process (no subprocess; faster to open). The interrupt
  timer still stops joins, scans and recursion, but not one giant scalar call.

Either way a failure that may have left the engine unfit (``QueryFailed.degraded``: out of
memory, interrupted, internal or fatal error) replaces it: the worker process is recycled, the
inline engine rebuilt from the files. ``recycled`` counts the replacements.

Both run the same ``Engine`` (``engine.py``): tables loaded then the connection locked (external
access off, extensions off, no spilling, memory limit, configuration locked), each query in a
rolled-back transaction under an interrupt timer, results converted to JSON-safe values.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Collection
from pathlib import Path
from typing import Any

from tansaku.tables import _deps
from tansaku.tables.engine import Engine, QueryFailed, RawResult, quote_ident
from tansaku.tables.registry import TablesConfig, load_tables_config
from tansaku.tables.worker import WorkerClient
from tansaku.workspace import Workspace

__all__ = ["QueryFailed", "RawResult", "TableDatabase", "open_tables"]

log = logging.getLogger(__name__)


class TableDatabase:
    """The tables of a ``TablesConfig``, loaded and locked. Thread-safe; close it when done."""

    def __init__(self, config: TablesConfig) -> None:
        _deps.duckdb()  # MissingExtra here, in the caller's process, not in a worker
        self.config = config
        self._swap = threading.Lock()
        self._inline_recycled = 0
        self._backend: Engine | WorkerClient
        if config.sandbox.isolation == "inline":
            self._backend = Engine(config)
        else:
            self._backend = WorkerClient(config)

    @property
    def recycled(self) -> int:
        """Engines replaced after a failure that may have left them unfit."""
        if isinstance(self._backend, WorkerClient):
            return self._backend.recycled
        return self._inline_recycled

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
        ``allowed``: the tables a tool may read — the query runs in a database holding only
        them, DuckDB's plan of it is checked against them before it runs (``QueryRejected``
        otherwise; see ``bound.py``), and its result is capped as a whole (``caps.py``).
        """
        backend = self._backend
        try:
            return backend.execute(sql, list(params or []), max_rows, allowed)
        except QueryFailed as e:
            if e.degraded and isinstance(backend, Engine):
                self._rebuild(backend)
            raise

    def _rebuild(self, old: Engine) -> None:
        """A fresh inline engine in place of ``old`` (the worker recycles itself)."""
        with self._swap:
            if self._backend is not old:
                return  # another thread did it
            try:
                fresh = Engine(self.config, old.scopes)
            except Exception:  # keep the old one: it may still work, the next failure retries
                log.warning("could not rebuild the inline table engine", exc_info=True)
                return
            self._backend = fresh
            self._inline_recycled += 1
        old.close()

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

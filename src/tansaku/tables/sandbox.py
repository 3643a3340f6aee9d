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

**Reload.** Tables are loaded from private copies of their files (``sources.py``). Before each
query the files are checked (one ``stat`` each): a table whose file changed — rows appended, the
file replaced — or that ``tansaku tables reload`` asked for (``reload.py``) is loaded again
first. ``reload()`` does it on demand. A reload swaps whole databases in under the query lock
(a query sees the old table or the new one); a file that cannot be read keeps the old table and
is reported (``ReloadReport``), and is not tried again until it changes.

**Teams and the audit log.** ``for_team(team)`` is a view of the same database (same engine,
same worker) whose SQL tools write ``team`` in the audit log (``audit.py``) given at open.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Collection, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tansaku.errors import LoadError, TansakuError
from tansaku.tables import _deps
from tansaku.tables.audit import SqlAudit
from tansaku.tables.engine import Engine, QueryFailed, RawResult, TableLoadError, quote_ident
from tansaku.tables.registry import TablesConfig, load_tables_config
from tansaku.tables.reload import ReloadReport, TableReload, kept_message
from tansaku.tables.sources import Snapshot, TableSources, signature
from tansaku.tables.worker import WorkerClient
from tansaku.workspace import DEFAULT_TEAM, Workspace, validate_name

__all__ = ["QueryFailed", "RawResult", "ReloadReport", "TableDatabase", "open_tables"]

log = logging.getLogger(__name__)


@dataclass
class _Core:
    """What every view of one database shares."""

    backend: Engine | WorkerClient
    sources: TableSources
    swap: threading.Lock = field(default_factory=threading.Lock)
    reload_lock: threading.Lock = field(default_factory=threading.Lock)
    inline_recycled: int = 0


class TableDatabase:
    """The tables of a ``TablesConfig``, loaded and locked. Thread-safe; close it when done.
    ``audit_log``: the SQL tools' audit log (none when not given)."""

    def __init__(self, config: TablesConfig, *, audit_log: Path | None = None) -> None:
        _deps.duckdb()  # MissingExtra here, in the caller's process, not in a worker
        self.config = config
        self.team = DEFAULT_TEAM
        """The team the SQL tools' audit lines name (``for_team``)."""
        self.audit = SqlAudit(audit_log) if audit_log is not None else None
        self._owner = True
        sources = TableSources(config)
        try:
            sources.take_all()
            files = sources.files()
            backend: Engine | WorkerClient
            if config.sandbox.isolation == "inline":
                backend = Engine(config, files=files)
            else:
                backend = WorkerClient(config, files=files)
        except BaseException:
            sources.close()
            raise
        self._core = _Core(backend=backend, sources=sources)

    def for_team(self, team: str) -> TableDatabase:
        """This database as ``team`` uses it: the same tables and engine, the team in the audit
        log. Closing the view does nothing; close the database it came from."""
        view = object.__new__(TableDatabase)
        view.config = self.config
        view.team = validate_name(team, "チーム名")
        view.audit = self.audit
        view._owner = False
        view._core = self._core
        return view

    @property
    def _backend(self) -> Engine | WorkerClient:
        return self._core.backend

    @property
    def recycled(self) -> int:
        """Engines replaced after a failure that may have left them unfit."""
        backend = self._core.backend
        if isinstance(backend, WorkerClient):
            return backend.recycled
        return self._core.inline_recycled

    @classmethod
    def open(cls, config: TablesConfig, *, audit_log: Path | None = None) -> TableDatabase:
        return cls(config, audit_log=audit_log)

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
        Tables whose files changed are loaded again first.
        """
        self.refresh()
        with self._recovering() as backend:
            return backend.execute(sql, list(params or []), max_rows, allowed)

    @contextmanager
    def _recovering(self) -> Iterator[Engine | WorkerClient]:
        """The engine to query now; an inline engine that a failure may have left unfit
        (``QueryFailed.degraded``) is rebuilt before the failure goes on."""
        backend = self._core.backend
        try:
            yield backend
        except QueryFailed as e:
            if e.degraded and isinstance(backend, Engine):
                self._rebuild(backend)
            raise

    def _rebuild(self, old: Engine) -> None:
        """A fresh inline engine in place of ``old`` (the worker recycles itself)."""
        core = self._core
        with core.swap:
            if core.backend is not old:
                return  # another thread did it
            try:
                fresh = Engine(self.config, old.scopes, old.files)
            except Exception:  # keep the old one: it may still work, the next failure retries
                log.warning("could not rebuild the inline table engine", exc_info=True)
                return
            core.backend = fresh
            core.inline_recycled += 1
        old.close()

    # --- reload ----------------------------------------------------------------------------

    def refresh(self) -> ReloadReport | None:
        """Reload the tables whose files changed or that were asked for (None: none was).
        What cannot be loaded is logged and keeps its old rows."""
        core = self._core
        with core.reload_lock:
            stale = core.sources.stale()
            if not stale:
                return None
            report = self._reload(stale)
        for failure in report.failed:
            log.warning("%s", failure.error)
        return report

    def reload(self, names: Iterable[str] | None = None) -> ReloadReport:
        """Load ``names`` (default: every table) again from their files now. A table whose
        file cannot be read keeps its old rows; the report says why (``ConfigError`` for an
        unknown name, before anything is read)."""
        targets = list(dict.fromkeys(names)) if names is not None else list(self.config.table_names)
        for name in targets:
            self.config.table(name)  # unknown → ConfigError
        with self._core.reload_lock:
            return self._reload(targets)

    def _reload(self, targets: list[str]) -> ReloadReport:
        """Under the reload lock: copy each target's file, load every table into new databases,
        dropping a target that fails (``TableLoadError``) until the rest loads, then swap."""
        core = self._core
        results: dict[str, TableReload] = {}
        fresh: dict[str, Snapshot] = {}
        for name in targets:
            table = self.config.table(name)
            try:
                fresh[name] = core.sources.take(table)
            except LoadError as e:
                results[name] = TableReload(name, False, error=kept_message(e.reason))
                core.sources.reject(name, None, signature(table.path))
        while fresh:
            try:
                core.backend.reload(core.sources.files(fresh))
            except TableLoadError as e:
                snapshot = fresh.pop(e.table, None)
                if snapshot is None:  # a table that did not change: nothing here can fix it
                    self._give_up(fresh, results, e.reason)
                    break
                results[e.table] = TableReload(e.table, False, error=kept_message(e.reason))
                core.sources.reject(e.table, snapshot, snapshot.signature)
                continue
            except Exception as e:  # the worker could not start, DuckDB ran out of memory …
                self._give_up(fresh, results, str(e) if isinstance(e, TansakuError) else repr(e))
                break
            core.sources.commit(fresh)
            for name in fresh:
                results[name] = TableReload(name, True, rows=self._rows(name))
            break
        core.sources.requests.done(targets)
        return ReloadReport(tuple(results[name] for name in targets))

    def _rows(self, table: str) -> int | None:
        """Rows of a table just loaded (None if counting them failed: it is loaded anyway)."""
        try:
            with self._recovering() as backend:
                counted = backend.execute(f"SELECT count(*) FROM {quote_ident(table)}", [], None)
            return int(counted.rows[0][0])
        except TansakuError:
            log.warning("could not count the rows of the reloaded table %s", table, exc_info=True)
            return None

    def _give_up(
        self, fresh: dict[str, Snapshot], results: dict[str, TableReload], reason: str
    ) -> None:
        for name, snapshot in fresh.items():
            results[name] = TableReload(name, False, error=kept_message(reason))
            self._core.sources.reject(name, snapshot, snapshot.signature)
        fresh.clear()

    # --- the registry's view ---------------------------------------------------------------

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
        if not self._owner:
            return
        self._core.backend.close()
        self._core.sources.close()

    def __enter__(self) -> TableDatabase:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def open_tables(
    source: TablesConfig | Path | str | None = None, *, audit_log: Path | None = None
) -> TableDatabase:
    """Open a ``TableDatabase`` from a config, a ``tables.toml`` path, or (``None``) the
    workspace's registry (``$TANSAKU_HOME/tables.toml``, its SQL audit log in the workspace's
    ``logs/`` unless ``audit_log`` says otherwise)."""
    if isinstance(source, TablesConfig):
        return TableDatabase(source, audit_log=audit_log)
    if source is None:
        ws = Workspace.from_env()
        return TableDatabase(
            load_tables_config(ws.tables_file), audit_log=audit_log or ws.sql_audit_file
        )
    return TableDatabase(load_tables_config(Path(source)), audit_log=audit_log)

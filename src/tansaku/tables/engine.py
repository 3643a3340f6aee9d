"""The DuckDB engine: load the registered tables into memory, then lock the connection.

After loading, the connection turns off external access (no file, network or extension access:
``read_text``, ``COPY``, ``ATTACH``, ``INSTALL`` raise ``PermissionException``), disables
extension autoloading and spilling to disk, blanks the path settings, sets a memory limit and
thread count, and locks the configuration so no query can turn any of that back on. Every query
runs inside a transaction that is always rolled back, with a timer that interrupts it after
``timeout_seconds``; at most ``max_rows`` rows are fetched and every value is converted to a
JSON-safe one (text cut at ``max_cell_chars``; a tool's result capped as a whole, ``caps.py``).

**Least privilege.** A tool query (``allowed`` given) runs in a DuckDB database of its own that
physically holds only the tool's tables — one per scope, loaded from the files on the scope's
first query — so no name, CTE trick or bind-time lookup (``DESCRIBE``, ``duckdb_tables()``) can
reach a table outside the scope: it is not there. Its plan is checked as well (``bound.py``)
for what every database has: the catalogs and settings. The shared database with every table
serves the analytics functions and the workspace owner's ``sql`` tool.

DuckDB checks for interrupts between vectors, not inside one scalar call, so a single huge
``repeat()`` or ``generate_series()`` can outlive the timer: that is why ``TableDatabase`` runs
this engine in a worker process it can kill (``worker.py``).

**Files.** Each table is loaded from ``files[name]`` when given (the ``TableDatabase``'s private
copy, ``sources.py``), else from its registered path. ``reload(files)`` builds a new shared
database from new files and swaps it in under the query lock — a query sees the old tables or
the new ones, never a half-loaded one — and drops the scope databases (each loads again, from
the new files, on its next query). A table that cannot be loaded raises ``TableLoadError``
naming it, and nothing is swapped.
"""

from __future__ import annotations

import contextlib
import re
import threading
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tansaku.errors import LoadError, TansakuError
from tansaku.tables import _deps
from tansaku.tables.bound import OutOfScope, check_plan, logical_plan
from tansaku.tables.caps import Budget, bounded_rows
from tansaku.tables.registry import ColumnType, TablesConfig, TableSpec
from tansaku.tables.results import rows_budget
from tansaku.tables.validate import QueryRejected

# Messages of a failure after which the process may no longer allocate or start threads.
DEGRADING_MESSAGE = re.compile(
    r"out of memory|bad_alloc|cannot allocate|could not allocate|failed to allocate|"
    r"can't start new thread|resource temporarily unavailable|memoryerror|"
    r"internal error|fatal error|database has been invalidated",
    re.IGNORECASE,
)
_DEGRADING_TYPES = ("OutOfMemoryException", "InternalException", "FatalException")
EXPLAIN = "EXPLAIN (FORMAT JSON) "


def _as_written(message: str) -> str:
    """DuckDB's message about the plan request, as if about the query itself: the agent never
    wrote EXPLAIN, so its ``LINE 1:`` excerpt loses the prefix and the caret moves back."""
    if EXPLAIN not in message:
        return message
    pad = " " * len(EXPLAIN)
    lines = message.replace(EXPLAIN, "").split("\n")
    for i, line in enumerate(lines):
        if line.startswith(pad) and set(line.strip()) == {"^"}:
            lines[i] = line[len(pad) :]
    return "\n".join(lines)


class QueryFailed(TansakuError):
    """DuckDB refused or failed the query. ``timed_out`` when it was stopped for taking too long;
    ``degraded`` when the failure may have left the engine unfit (out of memory, interrupted,
    internal or fatal error): a worker is then replaced (``worker.py``)."""

    def __init__(self, message: str, *, timed_out: bool = False, degraded: bool = False) -> None:
        self.timed_out = timed_out
        self.degraded = degraded or timed_out
        super().__init__(message)


def degrading(error: BaseException) -> bool:
    """Whether ``error`` may leave DuckDB or the process unfit for the next query."""
    if isinstance(error, MemoryError):
        return True
    duckdb = _deps.duckdb()
    types = tuple(getattr(duckdb, n) for n in _DEGRADING_TYPES if hasattr(duckdb, n))
    return isinstance(error, types) or bool(DEGRADING_MESSAGE.search(str(error)))


@dataclass(frozen=True)
class RawResult:
    columns: tuple[str, ...]
    rows: tuple[tuple[Any, ...], ...]
    """JSON-safe values (dates as ISO text, decimals as numbers)."""
    truncated: bool = False
    """Values, list elements, cells or rows were cut to the result caps."""


def timeout_message(seconds: float) -> str:
    return (
        f"クエリが制限時間({seconds:g}秒)を超えたため中断しました。"
        "条件を絞るか、結合・再帰・巨大な値の生成を減らしてください"
    )


def quote_ident(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _quote_literal(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


class TableLoadError(LoadError):
    """The table ``table`` could not be loaded (``path``: its registered file)."""

    def __init__(self, table: str, path: str, reason: str) -> None:
        self.table = table
        super().__init__(path, reason)


def _select_list(table: TableSpec) -> str:
    if not table.columns:
        return "*"
    parts = []
    for c in table.columns:
        q = quote_ident(c.source_name)  # the file's header; the table's column is c.name
        if c.type in (ColumnType.TEXT, ColumnType.JSON):
            expr = f"COALESCE(CAST({q} AS VARCHAR), '')"  # empty strings, never nulls
        elif table.is_parquet:
            expr = f"CAST({q} AS {c.type.duckdb_type})"
        else:
            expr = f"CAST(NULLIF(TRIM({q}), '') AS {c.type.duckdb_type})"
        parts.append(f"{expr} AS {quote_ident(c.name)}")
    return ", ".join(parts)


def _source(table: TableSpec, file: str) -> str:
    path = _quote_literal(file)
    if table.is_parquet:
        return f"read_parquet({path})"
    if table.columns:  # read as text, cast declared columns ourselves (clear errors, no guessing)
        return f"read_csv({path}, header = true, all_varchar = true)"
    return f"read_csv({path}, header = true)"


def lock_statements(config: TablesConfig) -> list[str]:
    s = config.sandbox
    return [
        "SET enable_progress_bar = false",
        "SET autoinstall_known_extensions = false",
        "SET autoload_known_extensions = false",
        "SET allow_community_extensions = false",
        "SET temp_directory = ''",  # never spill to disk
        "SET secret_directory = ''",  # no paths under the home directory in the settings
        "SET extension_directory = ''",
        f"SET memory_limit = {_quote_literal(s.memory_limit)}",
        f"SET threads = {int(s.threads)}",
        "SET enable_external_access = false",
        "SET lock_configuration = true",
    ]


@dataclass(frozen=True)
class _Database:
    """One locked in-memory DuckDB database: ``con`` runs queries; ``planner``, a second
    connection to it with the optimizer off, only answers ``EXPLAIN`` (bound.py reads the
    unoptimized plan, and without the optimizer ``EXPLAIN SELECT range(0, 3000000)`` takes
    milliseconds instead of seconds spent folding and printing a 3-million-element constant)."""

    con: Any
    planner: Any

    def interrupt(self) -> None:
        self.con.interrupt()
        self.planner.interrupt()

    def close(self) -> None:
        for connection in (self.planner, self.con):
            with contextlib.suppress(Exception):
                connection.close()


def _connect(
    config: TablesConfig, tables: Iterable[TableSpec], files: Mapping[str, str] | None = None
) -> _Database:
    """A new in-memory DuckDB database holding ``tables`` (each read from ``files[name]`` when
    given, else from its path), locked."""
    duckdb = _deps.duckdb()
    con = duckdb.connect(":memory:")
    planner = None
    try:
        con.execute("SET enable_progress_bar = false")
        for table in tables:
            load_table(con, table, (files or {}).get(table.name))
        planner = con.cursor()
        for statement in (
            "SET enable_progress_bar = false",
            "PRAGMA disable_optimizer",
            "SET explain_output = 'all'",  # the unoptimized logical plan is in EXPLAIN's rows
        ):
            planner.execute(statement)
        for statement in lock_statements(config):  # the lock covers both connections
            con.execute(statement)
    except BaseException:
        if planner is not None:
            planner.close()
        con.close()
        raise
    return _Database(con, planner)


def load_table(con: Any, table: TableSpec, file: str | None = None) -> None:
    """``CREATE TABLE`` ``table`` in ``con`` (unlocked) from ``file`` (a copy of its file) or
    its path; ``TableLoadError`` names the registered file, never the copy."""
    source = file or str(table.path)
    if not Path(source).is_file():
        raise TableLoadError(
            table.name, str(table.path), f"テーブル「{table.name}」のファイルがありません"
        )
    sql = (
        f"CREATE TABLE {quote_ident(table.name)} AS "
        f"SELECT {_select_list(table)} FROM {_source(table, source)}"
    )
    try:
        con.execute(sql)
    except _deps.duckdb().Error as e:
        first = str(e).strip().splitlines()[0].replace(source, str(table.path))
        raise TableLoadError(
            table.name,
            str(table.path),
            f"テーブル「{table.name}」を読み込めません(列名・型を確認してください): {first}",
        ) from None


def probe_table(table: TableSpec) -> int:
    """Load ``table`` from its file into a scratch database and count its rows: what a reload
    would read (``TableLoadError`` when it cannot)."""
    con = _deps.duckdb().connect(":memory:")
    try:
        con.execute("SET enable_progress_bar = false")
        load_table(con, table)
        return int(con.execute(f"SELECT count(*) FROM {quote_ident(table.name)}").fetchone()[0])
    finally:
        con.close()


class Engine:
    """Locked in-memory DuckDB databases: a shared one with every table, and one per tool scope
    with only that scope's tables (``scopes``: those to load now; others on first use).
    One query at a time."""

    def __init__(
        self,
        config: TablesConfig,
        scopes: Iterable[Collection[str]] = (),
        files: Mapping[str, str] | None = None,
    ) -> None:
        self._duckdb = _deps.duckdb()
        self.config = config
        self.files = dict(files or {})
        """Table → the file it is loaded from (absent: its registered path)."""
        self._lock = threading.Lock()
        self._all = frozenset(config.table_names)
        self._scoped: dict[frozenset[str], _Database] = {}
        self._shared = _connect(config, config.tables, self.files)
        try:
            for scope in scopes:
                self._prepare(scope)
        except BaseException:
            self._close_all()
            raise

    @property
    def scopes(self) -> tuple[frozenset[str], ...]:
        """The scopes that have a database of their own."""
        return tuple(self._scoped)

    def _prepare(self, tables: Collection[str]) -> _Database:
        key = frozenset(tables)
        if key == self._all:
            return self._shared
        if key not in self._scoped:
            specs = [self.config.table(name) for name in sorted(key)]  # unknown → ConfigError
            self._scoped[key] = _connect(self.config, specs, self.files)
        return self._scoped[key]

    def prepare(self, tables: Collection[str]) -> None:
        """Load a database for the scope ``tables`` now (else on its first query)."""
        with self._lock:
            self._prepare(tables)

    def reload(self, files: Mapping[str, str]) -> None:
        """Load every table again from ``files`` into a new shared database and swap it in
        (``TableLoadError``: nothing changes). Scope databases load again on their next query."""
        fresh = _connect(self.config, self.config.tables, files)  # outside the query lock
        with self._lock:
            old = [self._shared, *self._scoped.values()]
            self._shared, self._scoped, self.files = fresh, {}, dict(files)
        for database in old:
            database.close()

    def _close_all(self) -> None:
        for database in (self._shared, *self._scoped.values()):
            database.close()

    def close(self) -> None:
        with self._lock:
            self._close_all()

    def execute(
        self,
        sql: str,
        params: list[Any],
        max_rows: int | None,
        allowed: Collection[str] | None = None,
    ) -> RawResult:
        """Run ``sql`` (rolled back, under the timer). ``allowed``: the tool's tables — the query
        runs in their own database, its plan may read nothing else (``QueryRejected``), and its
        result is capped as a whole. Without it the shared database runs trusted SQL."""
        settings = self.config.sandbox
        timeout = settings.timeout_seconds
        fired = threading.Event()
        with self._lock:
            database = self._shared if allowed is None else self._prepare(allowed)
            con = database.con

            def interrupt() -> None:
                fired.set()
                database.interrupt()

            timer = threading.Timer(timeout, interrupt)
            timer.daemon = True
            if allowed is None:  # trusted SQL (analytics): only the per-value cut
                budget = Budget(max_bytes=2**62, items=2**62)
                max_columns = 2**31
            else:
                budget = rows_budget(settings.max_result_bytes, settings.max_items)
                max_columns = settings.max_columns
            try:
                con.begin()
                timer.start()
                if allowed is not None:
                    plan = database.planner.execute(EXPLAIN + sql, params).fetchall()
                    check_plan(logical_plan(plan), allowed)
                con.execute(sql, params)
                columns = tuple(str(d[0]) for d in (con.description or ()))
                rows = con.fetchall() if max_rows is None else con.fetchmany(max_rows)
                safe = bounded_rows(  # cut here: huge values never leave the engine
                    columns,
                    rows,
                    max_chars=settings.max_cell_chars,
                    budget=budget,
                    max_columns=max_columns,
                )
            except OutOfScope as e:
                raise QueryRejected(e.reason) from None
            except self._duckdb.Error as e:
                if fired.is_set() or isinstance(e, self._duckdb.InterruptException):
                    raise QueryFailed(timeout_message(timeout), timed_out=True) from None
                raise QueryFailed(_as_written(str(e).strip()), degraded=degrading(e)) from None
            except MemoryError:
                raise QueryFailed("結果が大きすぎてメモリが足りません", degraded=True) from None
            except (ValueError, TypeError, OverflowError, UnicodeError) as e:
                raise QueryFailed(f"結果を変換できません: {e}") from None
            finally:
                timer.cancel()
                if timer.is_alive():
                    timer.join()
                with contextlib.suppress(self._duckdb.Error):
                    con.rollback()
        return RawResult(columns=columns[:max_columns], rows=tuple(safe), truncated=budget.cut)

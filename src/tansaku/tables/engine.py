"""The DuckDB engine: load the registered tables into memory, then lock the connection.

After loading, the connection turns off external access (no file, network or extension access:
``read_text``, ``COPY``, ``ATTACH``, ``INSTALL`` raise ``PermissionException``), disables
extension autoloading and spilling to disk, sets a memory limit and thread count, and locks the
configuration so no query can turn any of that back on. Every query runs inside a transaction
that is always rolled back, with a timer that interrupts it after ``timeout_seconds``; at most
``max_rows`` rows are fetched and every value is converted to a JSON-safe one (text cut at
``max_cell_chars``).

DuckDB checks for interrupts between vectors, not inside one scalar call, so a single huge
``repeat()`` or ``generate_series()`` can outlive the timer: that is why ``TableDatabase`` runs
this engine in a worker process it can kill (``worker.py``).
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Collection
from dataclasses import dataclass
from typing import Any

from tansaku.errors import LoadError, TansakuError
from tansaku.tables import _deps
from tansaku.tables.bound import OutOfScope, check_plan, logical_plan
from tansaku.tables.registry import ColumnType, TablesConfig, TableSpec
from tansaku.tables.results import Budget, json_safe
from tansaku.tables.validate import QueryRejected


class QueryFailed(TansakuError):
    """DuckDB refused or failed the query. ``timed_out`` when it was stopped for taking too long."""

    def __init__(self, message: str, *, timed_out: bool = False) -> None:
        self.timed_out = timed_out
        super().__init__(message)


@dataclass(frozen=True)
class RawResult:
    columns: tuple[str, ...]
    rows: tuple[tuple[Any, ...], ...]
    """JSON-safe values (dates as ISO text, decimals as numbers)."""
    truncated: bool = False
    """Values, list elements or rows were cut to the result budget."""


def timeout_message(seconds: float) -> str:
    return (
        f"クエリが制限時間({seconds:g}秒)を超えたため中断しました。"
        "条件を絞るか、結合・再帰・巨大な値の生成を減らしてください"
    )


def quote_ident(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _quote_literal(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


def _select_list(table: TableSpec) -> str:
    if not table.columns:
        return "*"
    parts = []
    for c in table.columns:
        q = quote_ident(c.name)
        if c.type in (ColumnType.TEXT, ColumnType.JSON):
            expr = f"COALESCE(CAST({q} AS VARCHAR), '')"  # empty strings, never nulls
        elif table.is_parquet:
            expr = f"CAST({q} AS {c.type.duckdb_type})"
        else:
            expr = f"CAST(NULLIF(TRIM({q}), '') AS {c.type.duckdb_type})"
        parts.append(f"{expr} AS {q}")
    return ", ".join(parts)


def _source(table: TableSpec) -> str:
    path = _quote_literal(str(table.path))
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
        f"SET memory_limit = {_quote_literal(s.memory_limit)}",
        f"SET threads = {int(s.threads)}",
        "SET enable_external_access = false",
        "SET explain_output = 'all'",  # EXPLAIN returns the unoptimized plan too (bound.py)
        "SET lock_configuration = true",
    ]


class Engine:
    """One locked in-memory DuckDB connection holding the tables. One query at a time."""

    def __init__(self, config: TablesConfig) -> None:
        self._duckdb = _deps.duckdb()
        self.config = config
        self._lock = threading.Lock()
        self._con = self._duckdb.connect(":memory:")
        try:
            self._con.execute("SET enable_progress_bar = false")
            for table in config.tables:
                self._load(table)
            for statement in lock_statements(config):
                self._con.execute(statement)
        except BaseException:
            self._con.close()
            raise

    def _load(self, table: TableSpec) -> None:
        if not table.path.is_file():
            raise LoadError(str(table.path), f"テーブル「{table.name}」のファイルがありません")
        sql = (
            f"CREATE TABLE {quote_ident(table.name)} AS "
            f"SELECT {_select_list(table)} FROM {_source(table)}"
        )
        try:
            self._con.execute(sql)
        except self._duckdb.Error as e:
            first = str(e).strip().splitlines()[0]
            raise LoadError(
                str(table.path),
                f"テーブル「{table.name}」を読み込めません(列名・型を確認してください): {first}",
            ) from None

    def close(self) -> None:
        with self._lock:
            self._con.close()

    def check_scope(self, sql: str, params: list[Any], allowed: Collection[str]) -> None:
        """Refuse a query whose plan reads anything but ``allowed`` tables (``bound.py``)."""
        with self._lock:
            try:
                rows = self._con.execute(f"EXPLAIN (FORMAT JSON) {sql}", params).fetchall()
                check_plan(logical_plan(rows), allowed)
            except OutOfScope as e:
                raise QueryRejected(e.reason) from None
            except self._duckdb.Error as e:
                raise QueryFailed(str(e).strip()) from None

    def execute(
        self,
        sql: str,
        params: list[Any],
        max_rows: int | None,
        allowed: Collection[str] | None = None,
    ) -> RawResult:
        """Run ``sql`` (rolled back, under the timer). ``allowed``: the tool's tables — the
        query's plan may read nothing else."""
        if allowed is not None:
            self.check_scope(sql, params, allowed)
        timeout = self.config.sandbox.timeout_seconds
        fired = threading.Event()

        def interrupt() -> None:
            fired.set()
            self._con.interrupt()

        with self._lock:
            con = self._con
            timer = threading.Timer(timeout, interrupt)
            timer.daemon = True
            try:
                con.begin()
                timer.start()
                con.execute(sql, params)
                columns = tuple(str(d[0]) for d in (con.description or ()))
                rows = con.fetchall() if max_rows is None else con.fetchmany(max_rows)
                settings = self.config.sandbox  # cut here: never ship huge values
                budget = Budget(settings.max_result_chars, settings.max_items)
                safe = _bounded(rows, settings.max_cell_chars, budget)
            except self._duckdb.Error as e:
                if fired.is_set() or isinstance(e, self._duckdb.InterruptException):
                    raise QueryFailed(timeout_message(timeout), timed_out=True) from None
                raise QueryFailed(str(e).strip()) from None
            except (ValueError, TypeError, OverflowError, UnicodeError) as e:
                raise QueryFailed(f"結果を変換できません: {e}") from None
            finally:
                timer.cancel()
                if timer.is_alive():
                    timer.join()
                with contextlib.suppress(self._duckdb.Error):
                    con.rollback()
        return RawResult(columns=columns, rows=safe, truncated=budget.cut)


def _bounded(
    rows: list[tuple[Any, ...]], max_chars: int, budget: Budget
) -> tuple[tuple[Any, ...], ...]:
    """JSON-safe rows within the budget: rows after it is spent are left out."""
    out = []
    for row in rows:
        if budget.spent:
            budget.cut = True
            break
        out.append(tuple(json_safe(v, max_chars=max_chars, budget=budget) for v in row))
    return tuple(out)

"""``search_table(sql)`` for one table family — ``search_stores``, ``search_events`` … — sharing
one implementation: validate (``validate.py``), run in the sandbox (``sandbox.py``), shape the
outcome (``results.py``).

    db = open_tables(workspace.tables_file)
    stores = sql_tool(db, "search_stores")
    stores.description                     # Japanese, generated from the registry
    stores("SELECT store_name FROM stores WHERE pets_allowed = 'TRUE'")
    # -> {"results": [{"store_name": "…"}, …], "count": 3}

Every call run or refused is a line of the database's audit log (``audit.py``) naming its
team (``db.for_team(team)``), the tool and the SQL.
"""

from __future__ import annotations

import time
from typing import Any

from tansaku.tables.describe import (
    SQL_PARAMETER,
    SQL_PARAMETER_DESCRIPTION,
    allowed_summary,
    tool_description,
)
from tansaku.tables.registry import DEFAULT_NO_ROWS_MESSAGE, SqlToolConfig, TableSpec
from tansaku.tables.results import (
    SqlFailed,
    SqlOutcome,
    SqlRejected,
    SqlResults,
    rows_budget,
    rows_to_dicts,
)
from tansaku.tables.sandbox import QueryFailed, TableDatabase
from tansaku.tables.validate import QueryRejected, check_sql

ALL_TABLES_TOOL = "sql"


class SqlTool:
    """One SQL tool over some registered tables of a ``TableDatabase``.

    ``name``, ``description`` and ``parameters`` (JSON schema) are what a tool registry needs;
    ``run`` returns a typed outcome, calling the tool returns its ``to_dict()``.
    """

    def __init__(self, db: TableDatabase, config: SqlToolConfig) -> None:
        self.db = db
        self.config = config
        self.tables: tuple[TableSpec, ...] = tuple(db.config.table(n) for n in config.tables)
        self._json_columns = frozenset(c for t in self.tables for c in t.json_columns)

    @property
    def name(self) -> str:
        return self.config.name

    @property
    def description(self) -> str:
        return tool_description(self.name, self.config.purpose, self.tables, self.db.config.sandbox)

    @property
    def parameters(self) -> dict[str, Any]:
        return {
            "type": "object",
            "properties": {
                SQL_PARAMETER: {"type": "string", "description": SQL_PARAMETER_DESCRIPTION}
            },
            "required": [SQL_PARAMETER],
        }

    def _no_rows_message(self, used: frozenset[str]) -> str:
        for table in self.tables:
            if table.name in used:
                return table.no_rows_message
        return self.tables[0].no_rows_message if len(self.tables) == 1 else DEFAULT_NO_ROWS_MESSAGE

    def run(self, sql_query: str) -> SqlOutcome:
        started = time.perf_counter()
        outcome = self._run(sql_query)
        audit = getattr(self.db, "audit", None)
        if audit is not None:
            audit.record(
                team=getattr(self.db, "team", "default"),
                tool=self.name,
                sql=sql_query if isinstance(sql_query, str) else repr(sql_query),
                rows=outcome.count if isinstance(outcome, SqlResults) else None,
                ms=(time.perf_counter() - started) * 1000,
                refused=outcome.reason if isinstance(outcome, SqlRejected) else None,
                error=outcome.message if isinstance(outcome, SqlFailed) else None,
            )
        return outcome

    def _run(self, sql_query: str) -> SqlOutcome:
        settings = self.db.config.sandbox
        names = tuple(t.name for t in self.tables)
        try:
            checked = check_sql(
                sql_query,
                allowed_tables=names,
                max_rows=settings.max_rows,
                table_files={t.name: str(t.path) for t in self.tables},
            )
        except QueryRejected as e:
            return SqlRejected(reason=e.reason, allowed=allowed_summary(names))
        try:  # runs in a database holding only these tables; its plan is checked (bound.py)
            raw = self.db.execute(checked.sql, max_rows=settings.max_rows, allowed=names)
        except QueryRejected as e:
            return SqlRejected(reason=e.reason, allowed=allowed_summary(names))
        except QueryFailed as e:
            return SqlFailed(message=str(e), timed_out=e.timed_out)
        budget = rows_budget(settings.max_result_bytes, settings.max_items)
        rows = rows_to_dicts(
            raw.columns,
            raw.rows,
            json_columns=self._json_columns,
            max_chars=settings.max_cell_chars,
            budget=budget,
            max_columns=settings.max_columns,
        )
        message = self._no_rows_message(checked.tables) if not rows else None
        return SqlResults(
            results=rows,
            count=len(rows),
            message=message,
            sql=checked.sql,
            truncated=raw.truncated or budget.cut,
        )

    def __call__(self, sql_query: str) -> dict[str, Any]:
        return self.run(sql_query).to_dict()


def sql_tool(db: TableDatabase, name: str) -> SqlTool:
    """The tool ``name`` from ``[[tools]]`` in the registry, or ``"sql"`` for every table."""
    if name == ALL_TABLES_TOOL:
        return all_tables_tool(db)
    return SqlTool(db, db.config.tool(name))


def sql_tools(db: TableDatabase) -> tuple[SqlTool, ...]:
    """One tool per ``[[tools]]`` entry (``search_stores``, ``search_events`` …)."""
    return tuple(SqlTool(db, t) for t in db.config.tools)


def all_tables_tool(db: TableDatabase) -> SqlTool:
    """Every registered table in one tool: for the workspace owner (``tansaku sql``), not agents."""
    return SqlTool(
        db,
        SqlToolConfig(
            name=ALL_TABLES_TOOL,
            purpose="登録済みのテーブルをSQLクエリで検索します。",
            tables=db.config.table_names,
        ),
    )


def search_table(db: TableDatabase, tool: str, sql_query: str) -> dict[str, Any]:
    """Run ``sql_query`` through the tool ``tool`` and return the outcome dict."""
    return sql_tool(db, tool)(sql_query)

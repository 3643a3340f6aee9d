"""Tables: a sandboxed SQL tool for agents and analytics over daily reports (DuckDB + sqlglot).

Needs the ``tables`` extra (``pip install 'tansaku[tables]'``); importing this package does not,
the first database or validation call does (``MissingExtra`` otherwise).

    from tansaku.tables import open_tables, sql_tool, get_claim_statistics, StoreScope

    db = open_tables()                                   # $TANSAKU_HOME/tables.toml
    sql_tool(db, "search_stores")("SELECT store_name FROM stores WHERE pets_allowed = 'TRUE'")
    get_claim_statistics(db, "2025-11-01", "2025-11-30", scope=StoreScope.only("新宿店")).to_dict()
    db.reload(["stores"])                                # the file again (also done on change)
    infer_table(Path("menu.csv"), name="menu")           # a registry entry from a file
"""

from tansaku.tables.analytics import (
    CashDifferenceAnalysis,
    ClaimStatistics,
    SalesTrend,
    get_cash_difference_analysis,
    get_claim_statistics,
    get_sales_trend,
)
from tansaku.tables.breakdown import ClaimBreakdown, get_claim_breakdown
from tansaku.tables.compare import Metric, PeriodComparison, compare_periods
from tansaku.tables.config_toml import write_tables_config
from tansaku.tables.infer import InferredTable, infer_table
from tansaku.tables.period import AnalyticsError, Period, StoreScope, resolve_period
from tansaku.tables.register import add_table
from tansaku.tables.registry import (
    ColumnSpec,
    ColumnType,
    ExampleQuery,
    SandboxSettings,
    SqlToolConfig,
    TablesConfig,
    TableSpec,
    load_tables_config,
)
from tansaku.tables.reload import ReloadReport, TableReload, request_reload
from tansaku.tables.results import SqlFailed, SqlOutcome, SqlRejected, SqlResults
from tansaku.tables.sandbox import QueryFailed, TableDatabase, open_tables
from tansaku.tables.sqltool import SqlTool, all_tables_tool, search_table, sql_tool, sql_tools
from tansaku.tables.validate import CheckedSql, QueryRejected, check_sql

__all__ = [
    "AnalyticsError",
    "CashDifferenceAnalysis",
    "CheckedSql",
    "ClaimBreakdown",
    "ClaimStatistics",
    "ColumnSpec",
    "ColumnType",
    "ExampleQuery",
    "InferredTable",
    "Metric",
    "Period",
    "PeriodComparison",
    "QueryFailed",
    "QueryRejected",
    "ReloadReport",
    "SalesTrend",
    "SandboxSettings",
    "SqlFailed",
    "SqlOutcome",
    "SqlRejected",
    "SqlResults",
    "SqlTool",
    "SqlToolConfig",
    "StoreScope",
    "TableDatabase",
    "TableReload",
    "TableSpec",
    "TablesConfig",
    "add_table",
    "all_tables_tool",
    "check_sql",
    "compare_periods",
    "get_cash_difference_analysis",
    "get_claim_breakdown",
    "get_claim_statistics",
    "get_sales_trend",
    "infer_table",
    "load_tables_config",
    "open_tables",
    "request_reload",
    "resolve_period",
    "search_table",
    "sql_tool",
    "sql_tools",
    "write_tables_config",
]

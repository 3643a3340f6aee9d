"""Optional dependencies of ``tansaku.tables`` (the ``tables`` extra), imported on first use."""

from __future__ import annotations

from types import ModuleType

from tansaku.errors import MissingExtra


def duckdb() -> ModuleType:
    try:
        import duckdb as module
    except ImportError:
        raise MissingExtra("duckdb", "tables", "表データ(CSV/Parquet)の検索と集計") from None
    return module


def sqlglot() -> ModuleType:
    try:
        import sqlglot as module
    except ImportError:
        raise MissingExtra("sqlglot", "tables", "SQLの安全性チェック") from None
    return module

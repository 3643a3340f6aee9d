"""Table registry: the workspace's ``tables.toml`` — tables, their columns, SQL tools, limits.

Paths are relative to the TOML file. Example::

    [sandbox]
    max_rows = 10            # LIMIT added when absent, clamped when above
    timeout_seconds = 5.0    # the query is interrupted after this
    memory_limit = "256MB"

    [[tools]]
    name = "search_stores"
    purpose = "店舗データをSQLクエリで検索します。"
    tables = ["stores"]

    [[tables]]
    name = "stores"
    path = "tables/stores.csv"
    description = "エリア内の店舗情報"
    no_rows_message = "検索条件に一致する店舗が見つかりませんでした"

    [[tables.columns]]
    name = "parking"
    type = "JSON"            # TEXT, INTEGER, DOUBLE, BOOLEAN, DATE, TIMESTAMP, JSON
    description = "駐車場情報(JSON形式)"
    example = '{"available": true, "capacity": 120}'

    [[tables.columns]]
    name = "column_3"        # the SQL name; the file's header when it is not an identifier:
    header = "駐車場の台数"   # (``tansaku tables infer`` writes both)

    [[tables.examples]]
    question = "駐車場がある店舗"
    sql = "SELECT store_name, parking FROM stores WHERE parking LIKE '%\\"available\\": true%'"

Tables not named by any tool are reachable only from ``tansaku sql`` and the analytics functions
(``daily_reports`` stays out of the agent's SQL tools so store scoping cannot be bypassed).
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from enum import StrEnum
from pathlib import Path
from typing import Any

from tansaku.config import enum_choice
from tansaku.errors import ConfigError

DEFAULT_NO_ROWS_MESSAGE = "検索条件に一致するデータが見つかりませんでした"
_TABLE_NAME_RE = re.compile(r"^[a-z_][a-z0-9_]{0,62}$")
_COLUMN_NAME_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,62}$")


class ColumnType(StrEnum):
    TEXT = "TEXT"
    INTEGER = "INTEGER"
    DOUBLE = "DOUBLE"
    BOOLEAN = "BOOLEAN"
    DATE = "DATE"
    TIMESTAMP = "TIMESTAMP"
    JSON = "JSON"  # stored as text; results parse it back into JSON

    @classmethod
    def from_str(cls, value: str) -> ColumnType:
        return enum_choice(
            cls,
            str(value).strip().upper(),
            lambda valid: ConfigError(f"列の型「{value}」は使えません。使える型: {valid}"),
        )

    @property
    def duckdb_type(self) -> str:
        return _DUCKDB_TYPES[self]


_DUCKDB_TYPES = {
    ColumnType.TEXT: "VARCHAR",
    ColumnType.INTEGER: "BIGINT",
    ColumnType.DOUBLE: "DOUBLE",
    ColumnType.BOOLEAN: "BOOLEAN",
    ColumnType.DATE: "DATE",
    ColumnType.TIMESTAMP: "TIMESTAMP",
    ColumnType.JSON: "VARCHAR",
}


@dataclass(frozen=True, kw_only=True)
class ColumnSpec:
    name: str
    """Column name in the file and in SQL (ASCII identifier)."""
    type: ColumnType = ColumnType.TEXT
    description: str = ""
    """Japanese meaning, shown to the LLM."""
    example: str = ""
    """An example value, shown to the LLM."""
    header: str = ""
    """The column's header in the file when it differs from ``name`` (a Japanese or spaced
    header gets an ASCII SQL name); empty: the header is ``name``."""

    @property
    def source_name(self) -> str:
        """The header to read from the file."""
        return self.header or self.name


@dataclass(frozen=True, kw_only=True)
class ExampleQuery:
    question: str
    """What a user asks (Japanese)."""
    sql: str


@dataclass(frozen=True, kw_only=True)
class TableSpec:
    name: str
    """SQL table name: lowercase ASCII, so it never needs quoting."""
    path: Path
    """Absolute path of the CSV or Parquet file."""
    description: str = ""
    columns: tuple[ColumnSpec, ...] = ()
    """Declared columns; empty means every column of the file with detected types."""
    examples: tuple[ExampleQuery, ...] = ()
    no_rows_message: str = DEFAULT_NO_ROWS_MESSAGE

    @property
    def is_parquet(self) -> bool:
        return self.path.suffix.lower() in (".parquet", ".pq")

    @property
    def json_columns(self) -> frozenset[str]:
        return frozenset(c.name for c in self.columns if c.type is ColumnType.JSON)


@dataclass(frozen=True, kw_only=True)
class SqlToolConfig:
    name: str
    """Tool name the LLM calls, e.g. ``search_stores``."""
    purpose: str
    """First line of the tool description (Japanese)."""
    tables: tuple[str, ...]


_RENAMED_SANDBOX_KEYS = {"max_result_chars": "max_result_bytes"}


@dataclass(frozen=True, kw_only=True)
class SandboxSettings:
    max_rows: int = 10
    timeout_seconds: float = 5.0
    memory_limit: str = "256MB"
    threads: int = 2
    max_cell_chars: int = 4000
    """Longer text values are cut (a guard for the LLM's context, not a data limit)."""
    max_result_bytes: int = 65_536
    """UTF-8 bytes of a tool's whole result as JSON: values past it are cut, rows left out,
    and the result says so (``truncated``)."""
    max_items: int = 100
    """Elements kept of one list/struct/map value (``SELECT range(0, 3000000)`` is one value)."""
    max_columns: int = 100
    """Cells kept of one row (``SELECT *`` over a cross join)."""
    isolation: str = "process"
    """``process``: queries run in a worker process killed on overrun; ``inline``: in-process."""

    def __post_init__(self) -> None:
        if not 1 <= self.max_rows <= 1000:
            raise ConfigError(f"max_rows は 1〜1000 にしてください(現在: {self.max_rows})")
        if not 0 < self.timeout_seconds <= 600:
            raise ConfigError(
                "timeout_seconds は 0 より大きく 600 以下にしてください"
                f"(現在: {self.timeout_seconds})"
            )
        if not re.fullmatch(r"\d+(\.\d+)?\s*(KB|MB|GB|KiB|MiB|GiB)", self.memory_limit.strip()):
            raise ConfigError(
                f"memory_limit「{self.memory_limit}」は '256MB' のように書いてください"
            )
        if self.isolation not in ("process", "inline"):
            raise ConfigError(
                f"isolation「{self.isolation}」は使えません。使える値: process, inline"
            )
        if self.threads < 1 or self.max_cell_chars < 100:
            raise ConfigError("threads は 1 以上、max_cell_chars は 100 以上にしてください")
        if self.max_result_bytes < 1000 or self.max_items < 1 or self.max_columns < 1:
            raise ConfigError(
                "max_result_bytes は 1000 以上、max_items と max_columns は 1 以上にしてください"
                f"(現在: {self.max_result_bytes}, {self.max_items}, {self.max_columns})"
            )


@dataclass(frozen=True, kw_only=True)
class TablesConfig:
    tables: tuple[TableSpec, ...] = ()
    tools: tuple[SqlToolConfig, ...] = ()
    sandbox: SandboxSettings = field(default_factory=SandboxSettings)
    source: Path | None = field(default=None, compare=False)
    """The ``tables.toml`` this config was read from (None: built in code). Beside it,
    ``tables.reload.json`` asks running processes to reload tables (``reload.py``)."""

    def __post_init__(self) -> None:
        names = [t.name for t in self.tables]
        dup = sorted({n for n in names if names.count(n) > 1})
        if dup:
            raise ConfigError(f"テーブル名が重複しています: {', '.join(dup)}")
        tools = [t.name for t in self.tools]
        if len(set(tools)) != len(tools):
            raise ConfigError(f"ツール名が重複しています: {', '.join(tools)}")
        for tool in self.tools:
            missing = [n for n in tool.tables if n not in names]
            if missing:
                raise ConfigError(
                    f"ツール「{tool.name}」のテーブル {', '.join(missing)} が登録されていません。"
                    f"登録済み: {', '.join(names) or '(なし)'}"
                )

    @property
    def table_names(self) -> tuple[str, ...]:
        return tuple(t.name for t in self.tables)

    def table(self, name: str) -> TableSpec:
        for t in self.tables:
            if t.name == name:
                return t
        raise ConfigError(
            f"テーブル「{name}」は登録されていません。"
            f"登録済み: {', '.join(self.table_names) or '(なし)'}"
        )

    def tool(self, name: str) -> SqlToolConfig:
        for t in self.tools:
            if t.name == name:
                return t
        valid = ", ".join(t.name for t in self.tools) or "(なし)"
        raise ConfigError(f"SQLツール「{name}」はありません。使えるツール: {valid}")

    def merged(self, other: TablesConfig) -> TablesConfig:
        """``other``'s tables and tools replace same-named ones here; the rest is kept."""
        names = set(other.table_names)
        tools = {t.name for t in other.tools}
        return replace(
            self,
            tables=tuple(t for t in self.tables if t.name not in names) + other.tables,
            tools=tuple(t for t in self.tools if t.name not in tools) + other.tools,
        )


# --- reading -------------------------------------------------------------------------------------


def _str(raw: Mapping[str, Any], key: str, where: str, default: str | None = None) -> str:
    value = raw.get(key, default)
    if value is None:
        raise ConfigError(f"{where} に {key} がありません")
    if not isinstance(value, str):
        raise ConfigError(f"{where} の {key} は文字列にしてください(現在: {value!r})")
    return value


def _column(raw: Mapping[str, Any], table: str) -> ColumnSpec:
    name = _str(raw, "name", f"テーブル「{table}」の列")
    if not _COLUMN_NAME_RE.match(name):
        raise ConfigError(f"列名「{name}」(テーブル「{table}」)は英数字と _ だけにしてください")
    header = _str(raw, "header", name, "")
    if any(ord(ch) < 32 or ord(ch) == 127 for ch in header):
        raise ConfigError(f"列「{name}」(テーブル「{table}」)の header に制御文字は使えません")
    return ColumnSpec(
        name=name,
        type=ColumnType.from_str(raw.get("type", "TEXT")),
        description=_str(raw, "description", name, ""),
        example=str(raw.get("example", "")),
        header=header if header != name else "",
    )


def check_table_name(name: str) -> str:
    """``name`` if it can be a table's SQL name, else ``ConfigError`` (Japanese)."""
    if not _TABLE_NAME_RE.match(name or ""):
        raise ConfigError(
            f"テーブル名「{name}」は使えません。"
            "小文字の英数字と _ だけ(先頭は英字か _、63文字まで)にしてください"
        )
    return name


def is_column_name(name: str) -> bool:
    """Whether ``name`` can be a column's SQL name as it is."""
    return bool(_COLUMN_NAME_RE.match(name))


def _table(raw: Mapping[str, Any], base: Path) -> TableSpec:
    name = check_table_name(_str(raw, "name", "[[tables]]"))
    columns = tuple(_column(c, name) for c in raw.get("columns", []))
    seen = [c.name.lower() for c in columns]
    if len(set(seen)) != len(seen):
        raise ConfigError(f"テーブル「{name}」の列名が重複しています")
    headers = [c.source_name for c in columns]
    if len(set(headers)) != len(headers):
        raise ConfigError(f"テーブル「{name}」で同じ列(header)を2回読んでいます")
    examples = tuple(
        ExampleQuery(question=_str(e, "question", name), sql=_str(e, "sql", name))
        for e in raw.get("examples", [])
    )
    path = Path(_str(raw, "path", f"テーブル「{name}」")).expanduser()
    return TableSpec(
        name=name,
        path=(path if path.is_absolute() else base / path).resolve(),
        description=_str(raw, "description", name, ""),
        columns=columns,
        examples=examples,
        no_rows_message=_str(raw, "no_rows_message", name, DEFAULT_NO_ROWS_MESSAGE),
    )


def parse_tables_config(raw: Mapping[str, Any], base_dir: Path) -> TablesConfig:
    """Build a config from parsed TOML; relative paths are resolved against ``base_dir``."""
    sandbox_raw = dict(raw.get("sandbox", {}))
    for old, new in _RENAMED_SANDBOX_KEYS.items():  # written by an earlier version
        if old in sandbox_raw:
            value = sandbox_raw.pop(old)
            sandbox_raw.setdefault(new, value)
    known = set(SandboxSettings.__dataclass_fields__)
    unknown = sorted(set(sandbox_raw) - known)
    if unknown:
        raise ConfigError(
            f"[sandbox] の不明なキー: {', '.join(unknown)}(使えるキー: {', '.join(sorted(known))})"
        )
    tools = tuple(
        SqlToolConfig(
            name=_str(t, "name", "[[tools]]"),
            purpose=_str(t, "purpose", "[[tools]]", ""),
            tables=tuple(t.get("tables", [])),
        )
        for t in raw.get("tools", [])
    )
    for tool in tools:
        if not _TABLE_NAME_RE.match(tool.name) or tool.name == "sql":
            raise ConfigError(
                f"ツール名「{tool.name}」は使えません。小文字の英数字と _ だけにしてください"
                "(sql は全テーブル用に予約されています)"
            )
    return TablesConfig(
        tables=tuple(_table(t, base_dir) for t in raw.get("tables", [])),
        tools=tools,
        sandbox=SandboxSettings(**sandbox_raw),
    )


def load_tables_config(path: Path) -> TablesConfig:
    """Read a ``tables.toml``; table paths are relative to the file."""
    path = Path(path)
    try:
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigError(
            f"テーブル設定 {path} がありません。`tansaku demo` でサンプルを登録するか、"
            "tables.toml を作成してください(docs/tables.md)"
        ) from None
    except tomllib.TOMLDecodeError as e:
        raise ConfigError(f"{path} を読めません: {e}") from None
    config = parse_tables_config(raw, path.parent.resolve())
    return replace(config, source=path.resolve())

"""A registry entry inferred from a table's file, for the user to correct: ``tansaku tables
infer`` prints it, ``tansaku tables add`` registers it.

The file is read the way the sandbox will load it (DuckDB's ``read_csv(header = true,
all_varchar = true)``: its delimiter detection, a UTF-8 BOM dropped, blank lines skipped), and
every value of every row is looked at:

- **type**: ``INTEGER`` (``-12``, never ``007``: a leading zero is a code), ``DOUBLE`` (``3.5``,
  ``1e5``), ``BOOLEAN`` (``true``/``false`` in any case — a column of ``TRUE`` and blanks stays
  ``TEXT``: its blank means "no", which a BOOLEAN would read as NULL), ``DATE``
  (``2025-12-10``, ``2025/12/10``), ``TIMESTAMP`` (``2025-12-10 10:00[:00]``), ``JSON`` (every
  value a JSON object or array), else ``TEXT``. Blank cells fit any type; one value that does
  not fit a type rules it out (mixed columns are ``TEXT``);
- **name**: the header when it is an SQL identifier (``store_name``); otherwise an ASCII name
  (``column_2`` for ``店舗名``, ``unit_price`` for ``unit price``) with the header kept in
  ``header`` so the file is still read by it;
- **description**: a Japanese placeholder built from the header (a Japanese header is its own
  description), with the values of a column that has few (``"TRUE" または空文字``);
- **example**: two or three distinct values, cut to a short length.

Parquet files keep their own column types.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from datetime import date, datetime
from pathlib import Path
from typing import Any

from tansaku.errors import ConfigError, LoadError
from tansaku.tables import _deps
from tansaku.tables.config_toml import table_lines
from tansaku.tables.engine import quote_ident
from tansaku.tables.registry import (
    DEFAULT_NO_ROWS_MESSAGE,
    ColumnSpec,
    ColumnType,
    ExampleQuery,
    TableSpec,
    check_table_name,
    is_column_name,
)

EXAMPLES = 3
EXAMPLE_CHARS = 40
FEW_VALUES = 5
SHORT_VALUE = 20  # a value listed in a description (a code, a flag, a category)
_BATCH = 10_000
_INTEGER = re.compile(r"[+-]?(0|[1-9][0-9]*)")
_NUMBER = re.compile(r"[+-]?((0|[1-9][0-9]*)(\.[0-9]*)?|\.[0-9]+)([eE][+-]?[0-9]+)?")
_DATE = re.compile(r"(\d{4})[-/](\d{2})[-/](\d{2})")
_TIMESTAMP = re.compile(r"(\d{4})-(\d{2})-(\d{2})[ T](\d{2}):(\d{2})(:(\d{2})(\.\d{1,6})?)?")
_SUFFIXES = (".csv", ".tsv", ".txt", ".parquet", ".pq")
_ORDER = (
    ColumnType.BOOLEAN,
    ColumnType.INTEGER,
    ColumnType.DOUBLE,
    ColumnType.DATE,
    ColumnType.TIMESTAMP,
    ColumnType.JSON,
)
_PARQUET_TYPES = {
    "BOOLEAN": ColumnType.BOOLEAN,
    "DATE": ColumnType.DATE,
    "DOUBLE": ColumnType.DOUBLE,
    "FLOAT": ColumnType.DOUBLE,
    "REAL": ColumnType.DOUBLE,
}


def _is_date(value: str) -> bool:
    m = _DATE.fullmatch(value)
    if not m:
        return False
    try:
        date(int(m[1]), int(m[2]), int(m[3]))
    except ValueError:
        return False
    return True


def _is_timestamp(value: str) -> bool:
    m = _TIMESTAMP.fullmatch(value)
    if not m:
        return False
    try:
        datetime(int(m[1]), int(m[2]), int(m[3]), int(m[4]), int(m[5]), int(m[7] or 0))
    except ValueError:
        return False
    return True


def _is_json(value: str) -> bool:
    if value[0] not in "[{":
        return False
    try:
        return isinstance(json.loads(value), dict | list)
    except ValueError:
        return False


_CHECKS = {
    ColumnType.INTEGER: lambda v: bool(_INTEGER.fullmatch(v)) and abs(int(v)) < 2**63,
    ColumnType.DOUBLE: lambda v: bool(_NUMBER.fullmatch(v)) and any(c.isdigit() for c in v),
    ColumnType.BOOLEAN: lambda v: v.lower() in ("true", "false"),
    ColumnType.DATE: _is_date,
    ColumnType.TIMESTAMP: _is_timestamp,
    ColumnType.JSON: _is_json,
}


@dataclass
class _Column:
    """What the values of one column allow, gathered row by row."""

    header: str
    fixed: ColumnType | None = None
    """A Parquet column's own type (no guessing)."""
    candidates: set[ColumnType] = field(default_factory=lambda: set(_CHECKS))
    blanks: int = 0
    filled: int = 0
    booleans: set[str] = field(default_factory=set)
    distinct: list[str] = field(default_factory=list)
    """The first ``FEW_VALUES + 1`` distinct values, in order."""

    def see(self, raw: Any) -> None:
        if raw is None or (isinstance(raw, str) and not raw.strip()):
            self.blanks += 1
            return
        value = raw.strip() if isinstance(raw, str) else _text(raw)
        self.filled += 1
        if len(self.distinct) <= FEW_VALUES and value not in self.distinct:
            self.distinct.append(value)
        if self.fixed is not None:
            return
        for kind in list(self.candidates):
            if not _CHECKS[kind](value):
                self.candidates.discard(kind)
        if ColumnType.BOOLEAN in self.candidates:
            self.booleans.add(value.lower())

    @property
    def type(self) -> ColumnType:
        if self.fixed is not None:
            return self.fixed
        if not self.filled:
            return ColumnType.TEXT
        for kind in _ORDER:
            if kind not in self.candidates:
                continue
            if kind is ColumnType.BOOLEAN and self.blanks and len(self.booleans) < 2:
                continue  # "TRUE" or blank: a flag whose blank means no
            return kind
        return ColumnType.TEXT


def _text(value: Any) -> str:
    if isinstance(value, date | datetime):
        return value.isoformat(sep=" ") if isinstance(value, datetime) else value.isoformat()
    if isinstance(value, dict | list):
        return json.dumps(value, ensure_ascii=False)
    return str(value)


def _cut(text: str, limit: int = EXAMPLE_CHARS) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _example(column: _Column) -> str:
    values = column.distinct[:EXAMPLES]
    if column.type is ColumnType.TEXT:
        return ", ".join(json.dumps(_cut(v), ensure_ascii=False) for v in values)
    if column.type is ColumnType.JSON:
        return ", ".join(_cut(v, 60) for v in values[:2])
    return ", ".join(values)


def _words(header: str) -> str:
    spaced = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", " ", header)
    return " ".join(re.split(r"[\s_\-.]+", spaced)).strip()


def _description(column: _Column) -> str:
    header = column.header.strip()
    text = header if not header.isascii() else f"{_words(header) or header}(説明を日本語で書く)"
    few = (
        column.type is ColumnType.TEXT
        and 0 < len(column.distinct) <= min(FEW_VALUES, max(1, column.filled // 2))
        and all(len(v) <= SHORT_VALUE for v in column.distinct)
    )
    if few:
        values = ", ".join(json.dumps(v, ensure_ascii=False) for v in column.distinct)
        text += f"({values}{' または空文字' if column.blanks else ''})"
    elif column.type is ColumnType.JSON:
        text += "(JSON形式)"
    return text


def sql_names(headers: list[str]) -> list[str]:
    """An SQL column name per header: the header when it is an identifier, else an ASCII name
    from it (``column_N``, 1-based, when nothing ASCII is left); unique ignoring case."""
    names: list[str] = []
    taken: set[str] = set()
    for position, header in enumerate(headers, start=1):
        if is_column_name(header):
            base = header
        else:
            base = re.sub(r"[^A-Za-z0-9]+", "_", header).strip("_")[:50]
            if not re.search(r"[A-Za-z]", base) or not base.isascii():
                base = f"column_{position}"
            elif base[0].isdigit():
                base = f"c_{base}"
        name, n = base, 2
        while name.lower() in taken:
            name, n = f"{base}_{n}", n + 1
        taken.add(name.lower())
        names.append(name)
    return names


def table_name_of(path: Path) -> str:
    """A table name from a file name (``Stores 2025.csv`` → ``stores_2025``)."""
    stem = path.name.split(".")[0]
    name = re.sub(r"[^a-z0-9]+", "_", stem.lower()).strip("_")
    if name and name[0].isdigit():
        name = f"t_{name}"
    if not name or not name.isascii():
        raise ConfigError(
            f"ファイル名「{path.name}」からテーブル名を作れません。"
            "--name で英小文字のテーブル名を指定してください(例: --name stores)"
        )
    return check_table_name(name[:63])


def _read_error(path: Path, error: Exception) -> LoadError:
    message = str(error)
    if "not utf-8" in message.lower() or "invalid unicode" in message.lower():
        return LoadError(
            str(path),
            "UTF-8 の CSV ではありません。Shift_JIS などで保存されたファイルは、"
            "UTF-8 で保存し直してから登録してください",
        )
    first = message.strip().splitlines()[0] if message.strip() else type(error).__name__
    return LoadError(str(path), f"表として読めません: {first}")


def _scan(path: Path) -> tuple[list[_Column], int]:
    duckdb = _deps.duckdb()
    literal = "'" + str(path).replace("'", "''") + "'"
    parquet = path.suffix.lower() in (".parquet", ".pq")
    source = (
        f"read_parquet({literal})"
        if parquet
        else f"read_csv({literal}, header = true, all_varchar = true)"
    )
    con = duckdb.connect(":memory:")
    try:
        con.execute("SET enable_progress_bar = false")
        columns: list[_Column] = []
        if parquet:
            for name, kind, *_ in con.execute(f"DESCRIBE SELECT * FROM {source}").fetchall():
                columns.append(_Column(str(name), fixed=_parquet_type(str(kind))))
        cursor = con.execute(f"SELECT * FROM {source}")
        if not parquet:
            columns = [_Column(str(d[0])) for d in cursor.description or ()]
        rows = 0
        while batch := cursor.fetchmany(_BATCH):
            rows += len(batch)
            for row in batch:
                for column, value in zip(columns, row, strict=True):
                    column.see(value)
    except duckdb.Error as e:
        raise _read_error(path, e) from None
    finally:
        con.close()
    if not columns:
        raise LoadError(str(path), "列がありません(1行目に列名を書いてください)")
    return columns, rows


def _parquet_type(kind: str) -> ColumnType:
    upper = kind.upper()
    if upper.startswith(("TIMESTAMP", "DATETIME")):
        return ColumnType.TIMESTAMP
    if upper.endswith("INT") or upper in ("BIGINT", "HUGEINT", "UHUGEINT"):
        return ColumnType.INTEGER
    if upper.startswith("DECIMAL"):
        return ColumnType.DOUBLE
    return _PARQUET_TYPES.get(upper, ColumnType.TEXT)


@dataclass(frozen=True)
class InferredTable:
    spec: TableSpec
    rows: int
    """Rows read from the file."""


def infer_table(path: Path, *, name: str | None = None) -> InferredTable:
    """The registry entry ``path`` suggests (``LoadError`` when it cannot be read as a table,
    ``ConfigError`` for a name that cannot be a table's)."""
    path = Path(path).expanduser().resolve()
    if not path.is_file():
        raise LoadError(str(path), "ファイルがありません")
    if path.suffix.lower() not in _SUFFIXES:
        raise LoadError(str(path), f"登録できるのは CSV と Parquet です({', '.join(_SUFFIXES)})")
    table = check_table_name(name) if name else table_name_of(path)
    found, rows = _scan(path)
    names = sql_names([c.header for c in found])
    columns = tuple(
        ColumnSpec(
            name=sql,
            type=c.type,
            description=_description(c),
            example=_example(c),
            header=c.header if c.header != sql else "",
        )
        for sql, c in zip(names, found, strict=True)
    )
    spec = TableSpec(
        name=table,
        path=path,
        description=f"{path.stem}の表(説明を日本語で書く)",
        columns=columns,
        examples=_examples(table, columns, found),
        no_rows_message=DEFAULT_NO_ROWS_MESSAGE,
    )
    return InferredTable(spec=spec, rows=rows)


def _examples(
    table: str, columns: tuple[ColumnSpec, ...], found: list[_Column]
) -> tuple[ExampleQuery, ...]:
    """Two starting points for the tool description's 【検索例】; the user adds real ones.
    Column names are double-quoted: a header such as ``order`` is a keyword in SQL."""
    examples = [ExampleQuery(question="最初の数行を見る", sql=f"SELECT * FROM {table} LIMIT 5")]
    for spec, column in zip(columns, found, strict=True):
        if spec.type is ColumnType.TEXT and 1 < len(column.distinct) <= FEW_VALUES:
            q = quote_ident(spec.name)
            examples.append(
                ExampleQuery(
                    question=f"{spec.description.split('(')[0]}ごとの件数",
                    sql=f"SELECT {q}, count(*) AS n FROM {table} GROUP BY {q} ORDER BY n DESC",
                )
            )
            break
    return tuple(examples)


HEADER = (
    "# {file} から推定したテーブル設定({rows}行を読みました)。tables.toml に追記する前に確認して"
    "ください:\n"
    "# - description はエージェントが読む説明です。列名から作った仮の文なので"
    "日本語で書き直してください\n"
    "# - type(TEXT / INTEGER / DOUBLE / BOOLEAN / DATE / TIMESTAMP / JSON)と example も"
    "確認してください\n"
    "# - header はファイルの列名です(SQL では name で書きます)\n"
    "# - エージェントに検索させるには [[tools]] にこのテーブルを加えてください"
    "(tansaku tables add --tool でも可)\n"
)


def inferred_toml(inferred: InferredTable, base_dir: Path) -> str:
    """The entry as TOML for ``tables.toml`` in ``base_dir``, with a comment on what to check."""
    head = HEADER.format(file=inferred.spec.path.name, rows=f"{inferred.rows:,}")
    return head + "\n" + "\n".join(table_lines(inferred.spec, base_dir)) + "\n"

"""Outcomes of a SQL tool call and the conversion of DuckDB values to JSON-safe ones.

Exactly three shapes reach the agent (``to_dict``):

- ``{"results": [...], "count": N}`` — plus ``"message"`` when N is 0 (the table's no-rows text);
- ``{"error": "SQLを実行できません: …"}`` — rejected before running (``SqlRejected``);
- ``{"error": "SQLの実行中にエラーが発生しました: …"}`` — DuckDB's own message (``SqlFailed``).
"""

from __future__ import annotations

import base64
import datetime as dt
import json
import math
import uuid
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

TRUNCATED_MARK = "…(省略)"


@dataclass(frozen=True)
class SqlResults:
    results: tuple[dict[str, Any], ...]
    count: int
    message: str | None = None
    sql: str = field(default="", compare=False)
    """The SQL that ran (LIMIT enforced); for logs, not part of ``to_dict``."""

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"results": [dict(r) for r in self.results], "count": self.count}
        if self.count == 0 and self.message:
            out["message"] = self.message
        return out


@dataclass(frozen=True)
class SqlRejected:
    """The validator refused the SQL; nothing ran."""

    reason: str
    allowed: str

    @property
    def error(self) -> str:
        return f"SQLを実行できません: {self.reason}。{self.allowed}"

    def to_dict(self) -> dict[str, Any]:
        return {"error": self.error}


@dataclass(frozen=True)
class SqlFailed:
    """DuckDB failed the query (syntax it does not accept, a missing column, the time limit)."""

    message: str
    timed_out: bool = False

    @property
    def error(self) -> str:
        return f"SQLの実行中にエラーが発生しました: {self.message}"

    def to_dict(self) -> dict[str, Any]:
        return {"error": self.error}


SqlOutcome = SqlResults | SqlRejected | SqlFailed


def _text(value: str, max_chars: int) -> str:
    return value if len(value) <= max_chars else value[:max_chars] + TRUNCATED_MARK


def json_safe(value: Any, *, max_chars: int = 4000) -> Any:
    """A JSON-serialisable copy of a DuckDB value: dates as ISO text, decimals as numbers,
    NaN/inf as null, bytes as base64, long text cut at ``max_chars``."""
    if value is None or isinstance(value, bool | int):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, str):
        return _text(value, max_chars)
    if isinstance(value, Decimal):
        if not value.is_finite():
            return None
        return int(value) if value == value.to_integral_value() else float(value)
    if isinstance(value, dt.datetime | dt.date | dt.time):
        return value.isoformat()
    if isinstance(value, dt.timedelta):
        return str(value)
    if isinstance(value, uuid.UUID):
        return str(value)
    if isinstance(value, bytes | bytearray | memoryview):
        return _text(base64.b64encode(bytes(value)).decode("ascii"), max_chars)
    if isinstance(value, Mapping):
        return {str(k): json_safe(v, max_chars=max_chars) for k, v in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        return [json_safe(v, max_chars=max_chars) for v in value]
    return _text(str(value), max_chars)


def _maybe_json(value: Any) -> Any:
    if not isinstance(value, str) or not value.strip() or value.endswith(TRUNCATED_MARK):
        return value
    try:
        return json.loads(value)
    except ValueError:
        return value


def rows_to_dicts(
    columns: Iterable[str],
    rows: Iterable[Iterable[Any]],
    *,
    json_columns: frozenset[str] = frozenset(),
    max_chars: int = 4000,
) -> tuple[dict[str, Any], ...]:
    """Rows as dicts of JSON-safe values; JSON-typed columns parsed back into JSON.

    Duplicate column names (``SELECT a.x, b.x``) get a suffix (``x_2``) so no value is lost.
    """
    columns = list(columns)
    names: list[str] = []
    for col in columns:
        name, n = col, 2
        while name in names:
            name, n = f"{col}_{n}", n + 1
        names.append(name)
    json_lower = {c.lower() for c in json_columns}
    out = []
    for row in rows:
        item: dict[str, Any] = {}
        for name, original, value in zip(names, columns, row, strict=True):
            safe = json_safe(value, max_chars=max_chars)
            item[name] = _maybe_json(safe) if original.lower() in json_lower else safe
        out.append(item)
    return tuple(out)

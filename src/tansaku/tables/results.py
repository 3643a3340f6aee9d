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
TRUNCATED_NOTICE = (
    "結果が大きすぎるため一部を省略しました(長い値・リストの要素・後ろの行)。"
    "列や行を絞るか、集計してから取り出してください"
)


@dataclass(frozen=True)
class SqlResults:
    results: tuple[dict[str, Any], ...]
    count: int
    message: str | None = None
    sql: str = field(default="", compare=False)
    """The SQL that ran (LIMIT enforced); for logs, not part of ``to_dict``."""
    truncated: bool = False
    """Values, list elements or rows were left out to keep the result small."""

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"results": [dict(r) for r in self.results], "count": self.count}
        if self.count == 0 and self.message:
            out["message"] = self.message
        if self.truncated:
            out["truncated"] = True
            out["notice"] = TRUNCATED_NOTICE
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


MAX_ITEMS = 100  # elements kept of one list/map value (range(0, 3000000) is one value)
MAX_RESULT_CHARS = 50_000  # about the serialized size of a whole result (an LLM's context)


class Budget:
    """What a whole result may still spend, in characters of its JSON: every value draws from
    it; once spent, text is cut, lists end and the caller stops adding rows. ``cut`` says
    whether anything was left out."""

    def __init__(self, chars: int = MAX_RESULT_CHARS, items: int = MAX_ITEMS) -> None:
        self.chars = chars
        self.items = items
        self.cut = False

    @property
    def spent(self) -> bool:
        return self.chars <= 0

    def take(self, n: int) -> None:
        self.chars -= n


def _text(value: str, max_chars: int, budget: Budget | None = None) -> str:
    limit = max_chars if budget is None else max(0, min(max_chars, budget.chars))
    if len(value) > limit:
        value = value[:limit] + TRUNCATED_MARK
        if budget is not None:
            budget.cut = True
    if budget is not None:
        budget.take(len(value) + 2)
    return value


def json_safe(value: Any, *, max_chars: int = 4000, budget: Budget | None = None) -> Any:
    """A JSON-serialisable copy of a DuckDB value: dates as ISO text, decimals as numbers,
    NaN/inf as null, bytes as base64, long text cut at ``max_chars``. With a ``budget``, lists
    and maps keep at most ``budget.items`` elements (then a 「…(N件省略)」 marker) and every
    value draws its size from it."""
    if value is None or isinstance(value, bool | int | float):
        if isinstance(value, float) and not math.isfinite(value):
            value = None
        if budget is not None:
            budget.take(len(str(value)) + 1)
        return value
    if isinstance(value, str):
        return _text(value, max_chars, budget)
    if isinstance(value, Decimal):
        if not value.is_finite():
            return None
        return json_safe(
            int(value) if value == value.to_integral_value() else float(value), budget=budget
        )
    if isinstance(value, dt.datetime | dt.date | dt.time):
        return _text(value.isoformat(), max_chars, budget)
    if isinstance(value, dt.timedelta | uuid.UUID):
        return _text(str(value), max_chars, budget)
    if isinstance(value, bytes | bytearray | memoryview):
        return _text(base64.b64encode(bytes(value)).decode("ascii"), max_chars, budget)
    if isinstance(value, Mapping):
        items = list(value.items())
        keep = _kept(len(items), budget)
        out = {str(k): json_safe(v, max_chars=max_chars, budget=budget) for k, v in items[:keep]}
        if keep < len(items):
            out[TRUNCATED_MARK] = f"{len(items) - keep}件省略"
        return out
    if isinstance(value, list | tuple | set | frozenset):
        seq = list(value)
        keep = _kept(len(seq), budget)
        kept = []
        for v in seq[:keep]:
            if budget is not None and budget.spent:
                break
            kept.append(json_safe(v, max_chars=max_chars, budget=budget))
        if len(kept) < len(seq):
            if budget is not None:
                budget.cut = True
            kept.append(f"…({len(seq) - len(kept)}件省略)")
        return kept
    return _text(str(value), max_chars, budget)


def _kept(n: int, budget: Budget | None) -> int:
    return n if budget is None else min(n, budget.items)


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
    budget: Budget | None = None,
) -> tuple[dict[str, Any], ...]:
    """Rows as dicts of JSON-safe values; JSON-typed columns parsed back into JSON. With a
    ``budget``, rows stop once it is spent (``budget.cut`` then says so).

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
        if budget is not None and budget.spent:
            budget.cut = True
            break
        item: dict[str, Any] = {}
        for name, original, value in zip(names, columns, row, strict=True):
            safe = json_safe(value, max_chars=max_chars, budget=budget)
            item[name] = _maybe_json(safe) if original.lower() in json_lower else safe
        out.append(item)
    return tuple(out)

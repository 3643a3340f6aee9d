"""Outcomes of a SQL tool call, and rows as the dicts the agent reads (capped by ``caps.py``).

Exactly three shapes reach the agent (``to_dict``):

- ``{"results": [...], "count": N}`` — plus ``"message"`` when N is 0 (the table's no-rows text);
- ``{"error": "SQLを実行できません: …"}`` — rejected before running (``SqlRejected``);
- ``{"error": "SQLの実行中にエラーが発生しました: …"}`` — DuckDB's own message (``SqlFailed``).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from tansaku.tables.caps import (
    MAX_COLUMNS,
    TRUNCATED_MARK,
    Budget,
    bounded_rows,
    column_names,
    json_safe,
    json_size,
)

__all__ = [
    "TRUNCATED_MARK",
    "TRUNCATED_NOTICE",
    "Budget",
    "SqlFailed",
    "SqlOutcome",
    "SqlRejected",
    "SqlResults",
    "json_safe",
    "rows_budget",
    "rows_to_dicts",
]

TRUNCATED_NOTICE = (
    "結果が大きすぎるため一部を省略しました(長い値・リストの要素・列・後ろの行)。"
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

# what a result takes besides its rows: {"results": [], "count": …, "truncated": …, "notice": …}
_ENVELOPE_BYTES = json_size(
    {"results": [], "count": 1000, "truncated": True, "notice": TRUNCATED_NOTICE}
)
# the markers written after the budget ran out (「…(N件省略)」 closing each list being cut, the
# nulls of the rest of a row) are paid from this
_MARKER_RESERVE_BYTES = 512


def rows_budget(max_result_bytes: int, max_items: int) -> Budget:
    """The budget of a tool's rows, so that the whole ``to_dict()`` stays within
    ``max_result_bytes``: the envelope (count, notice) and the closing markers are paid for
    first."""
    return Budget(max(0, max_result_bytes - _ENVELOPE_BYTES - _MARKER_RESERVE_BYTES), max_items)


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
    max_columns: int = MAX_COLUMNS,
) -> tuple[dict[str, Any], ...]:
    """Rows as dicts of JSON-safe values; JSON-typed columns parsed back into JSON. With a
    ``budget``, the result is capped as a whole (``caps.py``; ``budget.cut`` says so).

    Duplicate column names (``SELECT a.x, b.x``) get a suffix (``x_2``) so no value is lost.
    """
    originals = list(columns)[:max_columns]
    names = column_names(originals, max_columns)
    if budget is None:
        budget = Budget(max_bytes=2**62, items=2**62)
    safe = bounded_rows(
        originals, rows, max_chars=max_chars, budget=budget, max_columns=max_columns
    )
    json_lower = {c.lower() for c in json_columns}
    parse = [c.lower() in json_lower for c in originals]
    return tuple(
        {
            name: _maybe_json(value) if parsed else value
            for name, parsed, value in zip(names, parse, row, strict=True)
        }
        for row in safe
    )

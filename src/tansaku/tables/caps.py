"""Result caps: DuckDB values as JSON-safe ones, within a budget of serialized bytes.

A SQL tool's answer goes into an LLM's context, so its *serialized* size is what is bounded, not
the number of rows: ``SELECT range(0, 3000000)`` is one row with one cell and was 26 MB of JSON.
Three caps apply, all from ``[sandbox]``:

- ``max_cell_chars``: one text value (cut, then 「…(省略)」);
- ``max_items``: elements kept of one list, struct or map value (then 「…(N件省略)」), at every
  level of nesting;
- ``max_result_bytes``: UTF-8 bytes of the whole result as JSON (``ensure_ascii=False``), keys,
  escapes and separators included. Every value draws its exact serialized size from one
  :class:`Budget`; the value that overdraws it is cut to fit, later values of that row become
  ``null`` and later rows are left out.

``max_columns`` caps the cells of a row (``SELECT *`` over a cross join) and column names are
cut at :data:`MAX_NAME_CHARS`. Whatever is cut sets ``Budget.cut``, which the outcome reports as
``truncated`` with a Japanese notice. The worker applies these caps before anything crosses the
process boundary, so a huge value is never shipped; the tool applies them again to what it
returns.
"""

from __future__ import annotations

import base64
import datetime as dt
import json
import math
import re
import uuid
from collections.abc import Collection, Iterable, Mapping
from decimal import Decimal
from typing import Any

TRUNCATED_MARK = "…(省略)"
MAX_ITEMS = 100
MAX_RESULT_BYTES = 65_536
MAX_COLUMNS = 100
MAX_NAME_CHARS = 64
_ENVELOPE_BYTES = 2  # the braces or brackets around an object or a list
_SEPARATOR_BYTES = 2  # ", " between items, ": " between a key and its value


def json_size(value: Any) -> int:
    """Bytes of ``value`` as JSON text (``ensure_ascii=False``, UTF-8): what the agent receives."""
    return len(json.dumps(value, ensure_ascii=False).encode("utf-8"))


def omitted(n: int) -> str:
    return f"…({n}件省略)"


_OMITTED = re.compile(r"…\((\d+)件省略\)")


def _prior(marker: Any) -> int | None:
    """Elements an earlier pass left out, when ``marker`` is its 「…(N件省略)」 (capping a capped
    value again keeps the count instead of cutting the marker)."""
    match = _OMITTED.fullmatch(marker) if isinstance(marker, str) else None
    return int(match.group(1)) if match else None


class Budget:
    """What a result may still spend, in bytes of its JSON. ``cut`` says whether anything was
    left out; ``spent`` whether nothing more fits."""

    def __init__(self, max_bytes: int = MAX_RESULT_BYTES, items: int = MAX_ITEMS) -> None:
        self.left = max_bytes
        self.items = items
        self.cut = False

    @property
    def spent(self) -> bool:
        return self.left <= 0

    def take(self, n: int) -> None:
        self.left -= n

    def text(self, value: str, max_chars: int) -> str:
        """``value`` cut at ``max_chars`` and then to what the budget can still pay for."""
        if len(value) > max_chars:
            value = value[:max_chars] + TRUNCATED_MARK
            self.cut = True
        size = json_size(value) + _SEPARATOR_BYTES
        if size > self.left:
            value = _fit(value, self.left - _SEPARATOR_BYTES)
            size = json_size(value) + _SEPARATOR_BYTES
            self.cut = True
        self.take(size)
        return value


def _fit(value: str, room: int) -> str:
    """The longest prefix of ``value`` (plus the mark) whose JSON fits in ``room`` bytes."""
    value = value.removesuffix(TRUNCATED_MARK)
    lo, hi = 0, len(value)
    while lo < hi:  # the largest n with json_size(value[:n] + mark) <= room
        mid = (lo + hi + 1) // 2
        if json_size(value[:mid] + TRUNCATED_MARK) <= room:
            lo = mid
        else:
            hi = mid - 1
    return value[:lo] + TRUNCATED_MARK


def _scalar(value: Any) -> Any:
    """JSON-safe form of a non-container value (text stays text, to be cut by the caller)."""
    if value is None or isinstance(value, bool | int | str):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, Decimal):
        if not value.is_finite():
            return None
        return int(value) if value == value.to_integral_value() else float(value)
    if isinstance(value, dt.datetime | dt.date | dt.time):
        return value.isoformat()
    if isinstance(value, bytes | bytearray | memoryview):
        return base64.b64encode(bytes(value)).decode("ascii")
    if isinstance(value, dt.timedelta | uuid.UUID):
        return str(value)
    return str(value)


def json_safe(value: Any, *, max_chars: int = 4000, budget: Budget | None = None) -> Any:
    """A JSON-serialisable copy of a DuckDB value: dates as ISO text, decimals as numbers,
    NaN/inf as null, bytes as base64, long text cut at ``max_chars``. With a ``budget``, lists,
    structs and maps keep at most ``budget.items`` elements, every value pays its serialized
    size, and once the budget is spent values become ``null``."""
    if budget is None:
        budget = Budget(max_bytes=2**62, items=2**62)
    if budget.spent:
        budget.cut = True
        budget.take(len("null") + _SEPARATOR_BYTES)
        return None
    if isinstance(value, Mapping):
        return _mapping(value, max_chars, budget)
    if isinstance(value, list | tuple | set | frozenset):
        return _sequence(value, max_chars, budget)
    safe = _scalar(value)
    if isinstance(safe, str):
        return budget.text(safe, max_chars)
    budget.take(json_size(safe) + _SEPARATOR_BYTES)
    return safe


def _sequence(value: Iterable[Any], max_chars: int, budget: Budget) -> list[Any]:
    seq = list(value)
    prior = _prior(seq[-1]) if seq else None
    if prior is not None:
        seq.pop()
    budget.take(_ENVELOPE_BYTES + _SEPARATOR_BYTES)
    kept: list[Any] = []
    for item in seq[: budget.items]:
        if budget.spent:
            break
        kept.append(json_safe(item, max_chars=max_chars, budget=budget))
    left_out = len(seq) - len(kept) + (prior or 0)
    if len(kept) < len(seq):
        budget.cut = True
    if left_out:
        marker = omitted(left_out)
        budget.take(json_size(marker) + _SEPARATOR_BYTES)
        kept.append(marker)
    return kept


def _mapping(value: Mapping[Any, Any], max_chars: int, budget: Budget) -> dict[str, Any]:
    items = list(value.items())
    prior = _prior(items[-1][1]) if items and items[-1][0] == TRUNCATED_MARK else None
    if prior is not None:
        items.pop()
    budget.take(_ENVELOPE_BYTES + _SEPARATOR_BYTES)
    out: dict[str, Any] = {}
    for key, item in items[: budget.items]:
        if budget.spent:
            break
        name = budget.text(str(_scalar(key)), MAX_NAME_CHARS)  # map keys are data: cut too
        name = _unique(name, out)
        out[name] = json_safe(item, max_chars=max_chars, budget=budget)
    left_out = len(items) - len(out) + (prior or 0)
    if len(out) < len(items):
        budget.cut = True
    if left_out:
        marker = omitted(left_out)
        budget.take(json_size(TRUNCATED_MARK) + json_size(marker) + _SEPARATOR_BYTES)
        out[_unique(TRUNCATED_MARK, out)] = marker
    return out


def _unique(name: str, taken: Collection[str]) -> str:
    candidate, n = name, 2
    while candidate in taken:
        candidate, n = f"{name}_{n}", n + 1
    return candidate


def column_names(columns: Iterable[str], max_columns: int = MAX_COLUMNS) -> tuple[str, ...]:
    """Result keys: at most ``max_columns``, cut at :data:`MAX_NAME_CHARS`, made unique with a
    suffix (``SELECT a.x, b.x`` → ``x``, ``x_2``) so no value is lost."""
    names: list[str] = []
    for column in list(columns)[:max_columns]:
        name = column if len(column) <= MAX_NAME_CHARS else column[:MAX_NAME_CHARS] + "…"
        names.append(_unique(name, names))
    return tuple(names)


def bounded_rows(
    columns: Iterable[str],
    rows: Iterable[Iterable[Any]],
    *,
    max_chars: int,
    budget: Budget,
    max_columns: int = MAX_COLUMNS,
) -> list[tuple[Any, ...]]:
    """JSON-safe rows of at most ``max_columns`` cells, each row paying for its keys and values;
    rows after the budget is spent are left out (``budget.cut`` then says so)."""
    names = column_names(columns, max_columns)
    keys = _ENVELOPE_BYTES + sum(json_size(n) + 2 * _SEPARATOR_BYTES for n in names)
    budget.take(_ENVELOPE_BYTES)  # the list around the rows
    out: list[tuple[Any, ...]] = []
    for row in rows:
        if budget.spent or (out and keys > budget.left):
            budget.cut = True
            break
        budget.take(keys)
        cells = list(row)
        if len(cells) > len(names):
            budget.cut = True
        out.append(
            tuple(json_safe(v, max_chars=max_chars, budget=budget) for v in cells[: len(names)])
        )
    return out

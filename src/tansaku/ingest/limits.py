"""What one file may cost, for a whole workspace: the ``[ingest]`` table of ``<home>/tansaku.toml``.

Every key is optional and defaults to the built-in value of
:class:`~tansaku.ingest.loaders.settings.IngestLimits`; a collection's own ``[ingest]
max_file_mb`` / ``max_chunks_per_document`` (its config) still win for that collection. A key
out of its range, of the wrong type, or unknown is a :class:`~tansaku.errors.ConfigError` naming
the key and the range: a limit that silently fell back to its default would let through what an
administrator meant to refuse.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tansaku.errors import ConfigError
from tansaku.ingest.loaders.settings import MB, IngestLimits
from tansaku.workspace import settings_table


@dataclass(frozen=True)
class Key:
    """One key of the table: its range, whether it takes a fraction, and how it maps onto a
    field of :class:`IngestLimits` (``scale``: bytes per unit of the key)."""

    field: str
    low: float
    high: float
    integer: bool = True
    scale: int = 1


KEYS: dict[str, Key] = {
    "max_file_mb": Key("max_file_bytes", 0.001, 10_000, integer=False, scale=MB),
    "max_chunks_per_document": Key("max_chunks_per_document", 1, 1_000_000),
    "max_columns": Key("max_columns", 1, 10_000),
    "max_metadata_keys": Key("max_metadata_keys", 1, 10_000),
    "max_metadata_bytes": Key("max_metadata_bytes", 64, 10_000_000),
    "max_inflated_mb": Key("max_inflated_bytes", 1, 100_000, integer=False, scale=MB),
    "max_inflate_ratio": Key("max_inflate_ratio", 2, 100_000),
}


def _number(x: float) -> str:
    return f"{int(x):,}" if float(x).is_integer() else f"{x:g}"


def _value(name: str, key: Key, value: Any) -> int:
    kind = "整数" if key.integer else "数"
    ok = isinstance(value, int) if key.integer else isinstance(value, int | float)
    if isinstance(value, bool) or not ok or not key.low <= value <= key.high:
        raise ConfigError(
            f"tansaku.toml の [ingest] {name} は {_number(key.low)}〜{_number(key.high)} の"
            f"{kind}にしてください(指定: {value!r})"
        )
    return max(1, int(value * key.scale))


def limits_from(table: Mapping[str, Any]) -> IngestLimits:
    """The limits of a parsed ``[ingest]`` table (missing keys: the built-in defaults)."""
    if not isinstance(table, Mapping):
        raise ConfigError(f"tansaku.toml の [ingest] は表(テーブル)にしてください(指定: {table!r})")
    unknown = sorted(set(table) - set(KEYS))
    if unknown:
        raise ConfigError(
            f"tansaku.toml の [ingest] に不明なキーがあります: {unknown}。"
            f"使えるキー: {sorted(KEYS)}"
        )
    values = {
        key.field: _value(name, key, table[name]) for name, key in KEYS.items() if name in table
    }
    return IngestLimits(**values)


def workspace_limits(home: Path) -> IngestLimits:
    """The limits of the workspace at ``home`` (the defaults when it has no ``tansaku.toml`` or
    no ``[ingest]`` table); read at every call, so an edit applies to the next ingest."""
    return limits_from(settings_table(home, "ingest"))


__all__ = ["KEYS", "limits_from", "workspace_limits"]

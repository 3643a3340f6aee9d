"""Key paths into JSON objects: ``flavorText``, ``effects[]``, ``qa[].question``, ``a.b``.

A segment ending in ``[]`` expands a list. Missing keys under an expansion keep their place
(``None``), so ``qa[].question`` and ``qa[].answer`` stay aligned item by item.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def is_list_path(path: str) -> bool:
    return "[]" in path


def resolve(obj: Any, path: str) -> list[Any]:
    """Every value at ``path`` in ``obj``, in order (``None`` where an item lacks the key)."""
    values: list[Any] = [obj]
    for segment in path.split("."):
        expand = segment.endswith("[]")
        key = segment.removesuffix("[]")
        found: list[Any] = []
        for value in values:
            item = value.get(key) if isinstance(value, Mapping) else None
            if not expand:
                found.append(item)
            elif isinstance(item, list):
                found.extend(item)
            elif item is not None:
                found.append(item)
        values = found
    return values


def to_text(value: Any) -> str:
    """A JSON value as text: strings stripped, numbers printed, lists one item a line,
    objects as ``key: value`` lines; ``None`` and booleans give ``""``."""
    if value is None or isinstance(value, bool):
        return ""
    if isinstance(value, str):
        return value.strip()
    if isinstance(value, int | float):
        return str(value)
    if isinstance(value, list):
        return "\n".join(t for t in (to_text(v) for v in value) if t)
    if isinstance(value, Mapping):
        lines = (f"{k}: {to_text(v)}" for k, v in value.items() if to_text(v))
        return "\n".join(lines)
    return str(value)


def first_scalar(obj: Any, path: str) -> Any:
    """The first non-empty scalar at ``path`` (for ids and titles), else ``None``."""
    for value in resolve(obj, path):
        if isinstance(value, str | int | float) and not isinstance(value, bool) and value != "":
            return value
    return None


__all__ = ["first_scalar", "is_list_path", "resolve", "to_text"]

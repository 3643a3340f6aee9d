"""Rows as records: the frozen dataclasses the repositories hand out, filled from an ORM row's
columns of the same names. JSON values are copied (a list as a tuple, a dict as a new dict), so
a record never shares a mutable value with the session's row."""

from __future__ import annotations

from dataclasses import fields
from typing import Any, TypeVar, cast

R = TypeVar("R")


def record_of(cls: type[R], row: object, **values: Any) -> R:
    """``cls`` with each field from ``values`` or else from ``row``'s attribute of that name (a
    field the row does not have keeps its default)."""
    kwargs: dict[str, Any] = {}
    for f in fields(cast(Any, cls)):
        if not f.init:
            continue
        if f.name in values:
            kwargs[f.name] = values[f.name]
        elif hasattr(row, f.name):
            value = getattr(row, f.name)
            if isinstance(value, list):
                value = tuple(value)
            elif isinstance(value, dict):
                value = dict(value)
            kwargs[f.name] = value
    return cls(**kwargs)

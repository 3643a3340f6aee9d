"""Rows as records: the frozen dataclasses the repositories hand out, filled from an ORM row's
columns of the same names. JSON values are copied (a list as a tuple, a dict as a new dict), so
a record never shares a mutable value with the session's row. And what every repository is:
one kind of row of a team, reached through the database (``db.<name>``)."""

from __future__ import annotations

from dataclasses import fields
from datetime import datetime
from typing import TYPE_CHECKING, Any, TypeVar, cast

from tansaku.appdb.errors import NotFound

if TYPE_CHECKING:
    from sqlalchemy import Select
    from sqlalchemy.orm import Session

    from tansaku.appdb.db import AppDB

R = TypeVar("R")
M = TypeVar("M")


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


def record_dict(record: object) -> dict[str, Any]:
    """A record's fields in order as JSON values: times as ISO text, tuples as lists, dicts
    copied."""
    out: dict[str, Any] = {}
    for f in fields(cast(Any, record)):
        value = getattr(record, f.name)
        if isinstance(value, datetime):
            value = value.isoformat()
        elif isinstance(value, tuple):
            value = list(value)
        elif isinstance(value, dict):
            value = dict(value)
        out[f.name] = value
    return out


class Repo:
    """A repository over the application database ``db``."""

    def __init__(self, db: AppDB) -> None:
        self.db = db


def found(s: Session, stmt: Select[M], what: str, key: object) -> M:
    """The first row ``stmt`` selects; ``NotFound`` naming ``what`` and ``key`` when none (also
    when the row is another team's: the statements filter by team)."""
    row = s.scalars(stmt).first()
    if row is None:
        raise NotFound(what, str(key))
    return row

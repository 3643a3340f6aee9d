"""Rows as records: the frozen dataclasses the repositories hand out, filled from an ORM row's
columns of the same names. JSON values are copied (a list as a tuple, a dict as a new dict), so
a record never shares a mutable value with the session's row. And what every repository is:
one kind of row of a team, reached through the database (``db.<name>``), with how it finds a
team's row (:func:`owned`), and what a listing asks for: a half-open time range
(:class:`Period`) and a page of rows (:class:`Page`)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields
from datetime import datetime
from typing import TYPE_CHECKING, Any, TypeVar, cast

from sqlalchemy import select

from tansaku.appdb.errors import NotFound

if TYPE_CHECKING:
    from sqlalchemy import ColumnElement, Select
    from sqlalchemy.orm import InstrumentedAttribute, Session

    from tansaku.appdb.db import AppDB

R = TypeVar("R")
M = TypeVar("M")
S = TypeVar("S", bound="Select[*tuple[Any, ...]]")


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
    """A record's fields in order as JSON values: times as ISO text, tuples as lists, mappings
    (alone or in a tuple) copied as dicts."""
    out: dict[str, Any] = {}
    for f in fields(cast(Any, record)):
        value = getattr(record, f.name)
        if isinstance(value, datetime):
            value = value.isoformat()
        elif isinstance(value, tuple):
            value = [dict(v) if isinstance(v, Mapping) else v for v in value]
        elif isinstance(value, Mapping):
            value = dict(value)
        out[f.name] = value
    return out


class JsonRecord:
    """``to_dict()`` for a record dataclass: its fields as :func:`record_dict` writes them."""

    __slots__ = ()

    def to_dict(self) -> dict[str, Any]:
        return record_dict(self)


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


def owned(s: Session, model: type[M], team: str, ident: object, what: str, key: str = "id") -> M:
    """The team's row of ``model`` whose ``key`` column is ``ident``; ``NotFound`` naming
    ``what`` and ``ident`` when the team has none (another team's row is not found either)."""
    return found(s, select(model).filter_by(team=team, **{key: ident}), what, ident)


@dataclass(frozen=True, slots=True)
class Period:
    """The half-open time range ``start <= t < end`` (a bound that is ``None`` leaves that side
    open)."""

    start: datetime | None = None
    end: datetime | None = None

    def of(self, column: InstrumentedAttribute[datetime]) -> list[ColumnElement[bool]]:
        """The conditions that keep ``column`` in the range."""
        conditions = []
        if self.start is not None:
            conditions.append(column >= self.start)
        if self.end is not None:
            conditions.append(column < self.end)
        return conditions


#: No bound on either side: every row.
EVER = Period()


@dataclass(frozen=True, slots=True)
class Page:
    """The rows of a listing after the first ``offset``, at most ``limit`` of them (``None``:
    all)."""

    limit: int | None = None
    offset: int = 0

    def of(self, stmt: S) -> S:
        """``stmt`` limited to the page (after its ``order_by``)."""
        return stmt.limit(self.limit).offset(self.offset)


#: Every row of a listing.
ALL = Page()

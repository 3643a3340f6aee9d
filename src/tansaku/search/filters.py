"""Metadata conditions typed as the metadata is stored, and checked against what exists.

``cost=3`` must match cards whose ``cost`` is the integer 3, and ``store=新宿店`` reports whose
``store`` is that string: a condition is written as text (the CLI's ``--where``, the
``where`` of :class:`~tansaku.search.types.SearchRequest`) and typed here from a sample of the
stored values of its key (:meth:`~tansaku.store.edge.EdgeStore.metadata_sample`).

Syntax, one condition per expression (several expressions all apply)::

    key=value          equal                      store=新宿店, cost=3, pets=true
    key=v1,v2          any of                     store=新宿店,渋谷店, cost=1,2
    key<v  key<=v      ranges, numbers or dates   cost<=3, date>=2025-12-01
    key>v  key>=v

Full-width ``＝ ＜ ＞ ，`` and ``≦ ≧`` are accepted. A value is read as each type the key has
in the sample (int, float, bool ``true/false``, date ``YYYY-MM-DD``, text); a key stored as
both int and text matches either. Ranges need numbers or dates. Conditions on ``date`` become
the date filter (``date_from``/``date_to``), shown in ``plan.date_filter``. A key or a record
field that no record of the team has is an error naming the ones that exist, not 0 hits.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from datetime import date, timedelta
from enum import Enum
from typing import Any

from tansaku.collection import Collection
from tansaku.errors import InvalidRequest, UnknownName
from tansaku.store.base import Bound, Filter, MetaCondition, MetaValue

SAMPLE = 32  # stored values read per key to learn its type
KEY_SAMPLE = 200  # records read to list the keys that exist (for the error message)
DATE_KEY = "date"


class Op(Enum):
    EQ = "="
    LT = "<"
    LTE = "<="
    GT = ">"
    GTE = ">="


class Kind(Enum):
    """Types a metadata value is stored as, labelled for messages."""

    INT = "整数"
    FLOAT = "数値"
    BOOL = "真偽値(true/false)"
    DATE = "日付(YYYY-MM-DD)"
    STR = "文字列"


@dataclass(frozen=True, slots=True)
class WhereClause:
    """A parsed, not yet typed, condition: ``key``, operator and the values as written."""

    key: str
    op: Op
    values: tuple[str, ...]

    def __str__(self) -> str:
        return f"{self.key}{self.op.value}{','.join(self.values)}"


_BOUND_OF = {Op.LT: "lt", Op.LTE: "lte", Op.GT: "gt", Op.GTE: "gte"}
_SYMBOL_OF = {"lt": "<", "lte": "<=", "gt": ">", "gte": ">="}
_WIDE = str.maketrans({"＝": "=", "＜": "<", "＞": ">", "≦": "<=", "≧": ">=", "≤": "<=", "≥": ">="})
_WHERE_RE = re.compile(r"\s*(?P<key>[^<>=]+?)\s*(?P<op><=|>=|==|<|>|=)\s*(?P<value>.*?)\s*", re.S)
_BAD_KEY = re.compile(r'[.\[\]"]')
_ISO_DAY = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}(?:[T ].*)?", re.S)
_TRUE = {"true", "1", "yes", "はい"}
_FALSE = {"false", "0", "no", "いいえ"}
_EXAMPLE = "例: store=新宿店、store=新宿店,渋谷店、cost<=3、date>=2025-12-01"


def parse_where(expr: str) -> WhereClause:
    """``"cost<=3"`` → ``WhereClause("cost", Op.LTE, ("3",))``; raises InvalidRequest."""
    m = _WHERE_RE.fullmatch(expr.translate(_WIDE))
    if m is None or not m["value"]:
        raise InvalidRequest(
            f"メタデータ条件「{expr}」を読めません。キー=値、キー<=値 などの形で指定してください"
            f"({_EXAMPLE})"
        )
    key = m["key"]
    if _BAD_KEY.search(key):
        raise InvalidRequest(f'メタデータのキー「{key}」は使えません(. [ ] " を含まないキーのみ)')
    op = Op.EQ if m["op"] == "==" else Op(m["op"])
    values = tuple(v.strip() for v in m["value"].replace("，", ",").split(",") if v.strip())
    if not values:
        raise InvalidRequest(f"メタデータ条件「{expr}」に値がありません({_EXAMPLE})")
    if op is not Op.EQ and len(values) > 1:
        raise InvalidRequest(
            f"メタデータ条件「{expr}」: 範囲(<, <=, >, >=)には値を1つだけ指定してください"
        )
    return WhereClause(key, op, values)


def _kind(value: Any) -> Kind | None:
    if isinstance(value, bool):
        return Kind.BOOL
    if isinstance(value, int):
        return Kind.INT
    if isinstance(value, float):
        return Kind.FLOAT
    if isinstance(value, str):
        return Kind.DATE if _day(value) is not None else Kind.STR
    return None


def _day(text: str) -> date | None:
    if not _ISO_DAY.fullmatch(text):
        return None
    try:
        return date.fromisoformat(text[:10])
    except ValueError:
        return None


def kinds_of(values: Iterable[Any]) -> frozenset[Kind]:
    """The kinds of stored values (the items of lists too); ISO day strings are dates."""
    kinds: set[Kind] = set()
    for v in values:
        for item in v if isinstance(v, list) else (v,):
            kind = _kind(item)
            if kind is not None:
                kinds.add(kind)
    return frozenset(kinds)


def _label(kinds: frozenset[Kind]) -> str:
    return "・".join(k.value for k in Kind if k in kinds)


def _number(text: str, kinds: frozenset[Kind]) -> int | float | None:
    """The number ``text`` names, if the key stores numbers: ints stay ints unless the key
    also stores floats (then the float condition matches both)."""
    if Kind.INT in kinds and Kind.FLOAT not in kinds:
        try:
            return int(text)
        except ValueError:
            pass
    if kinds & {Kind.INT, Kind.FLOAT}:
        try:
            number = float(text)
        except ValueError:
            return None
        if math.isfinite(number):
            return int(number) if Kind.FLOAT not in kinds and number.is_integer() else number
    return None


def _values(key: str, raw: str, kinds: frozenset[Kind]) -> list[MetaValue]:
    text = unicodedata.normalize("NFKC", raw).strip()
    out: list[MetaValue] = []
    number = _number(text, kinds)
    if number is not None:
        out.append(number)
    if Kind.BOOL in kinds and text.lower() in _TRUE | _FALSE:
        out.append(text.lower() in _TRUE)
    day = _day(text) if Kind.DATE in kinds else None
    if day is not None:
        out.append(day)
    if Kind.STR in kinds:
        out.append(raw)
    if not out:
        raise InvalidRequest(
            f"メタデータ「{key}」は{_label(kinds)}の項目です。「{raw}」を{_label(kinds)}として"
            "読めません"
        )
    return out


def _bound(key: str, raw: str, kinds: frozenset[Kind]) -> Bound:
    text = unicodedata.normalize("NFKC", raw).strip()
    number = _number(text, kinds)
    if number is not None:
        return number
    day = _day(text) if Kind.DATE in kinds else None
    if day is not None:
        return day
    if not kinds & {Kind.INT, Kind.FLOAT, Kind.DATE}:
        raise InvalidRequest(
            f"メタデータ「{key}」は{_label(kinds)}の項目なので範囲(<, <=, >, >=)では"
            "絞り込めません。= で値を指定してください"
        )
    raise InvalidRequest(
        f"メタデータ「{key}」は{_label(kinds)}の項目です。「{raw}」を範囲の値として読めません"
    )


def typed_condition(clause: WhereClause, kinds: frozenset[Kind]) -> MetaCondition:
    """The condition with its values read as the key's stored ``kinds`` (empty: any kind)."""
    kinds = kinds or frozenset(Kind)
    if clause.op is Op.EQ:
        values = [v for raw in clause.values for v in _values(clause.key, raw, kinds)]
        return MetaCondition(key=clause.key, values=tuple(dict.fromkeys(values)))
    bound: dict[str, Any] = {_BOUND_OF[clause.op]: _bound(clause.key, clause.values[0], kinds)}
    return MetaCondition(key=clause.key, **bound)


def _check_fields(collection: Collection, tenant: str, fields: Sequence[str], scope: str) -> None:
    present = {f for f, st in collection.state.bm25.get(tenant, {}).items() if st.count > 0}
    if not present:  # the team has no records: nothing to check against (0 hits)
        return
    for name in fields:
        if name not in present:
            raise UnknownName("フィールド", name, sorted(present), scope)


def _fold_dates(flt: Filter, conditions: Iterable[MetaCondition]) -> Filter:
    """Conditions on ``date`` with single days or day bounds become ``date_from``/``date_to``
    (the indexed date filter, and what ``plan.date_filter`` shows)."""
    start, end = flt.date_from, flt.date_to
    rest: list[MetaCondition] = []
    for c in conditions:
        day = c.values[0] if len(c.values) == 1 else None
        bounds = {n: v for n, v in c.bounds.items() if isinstance(v, date)}
        if (
            c.key != DATE_KEY
            or (c.values and not isinstance(day, date))
            or len(bounds) != len(c.bounds)
        ):
            rest.append(c)
            continue
        lows: list[date] = [day] if isinstance(day, date) else []
        highs: list[date] = list(lows)
        lows += [bounds[n] + timedelta(days=int(n == "gt")) for n in ("gte", "gt") if n in bounds]
        highs += [bounds[n] - timedelta(days=int(n == "lt")) for n in ("lte", "lt") if n in bounds]
        if lows:
            start = max([start, *lows]) if start else max(lows)
        if highs:
            end = min([end, *highs]) if end else min(highs)
    if start and end and start > end:
        raise InvalidRequest(
            f"日付の条件が矛盾しています({start.isoformat()} 以降かつ {end.isoformat()} 以前)"
        )
    return replace(flt, date_from=start, date_to=end, where=tuple(rest))


def resolve_filter(
    collection: Collection, tenant: str, flt: Filter, where: Sequence[str] = ()
) -> Filter:
    """``flt`` plus the ``where`` expressions, typed as the team's metadata is stored.

    Raises :class:`~tansaku.errors.UnknownName` for a record field or a metadata key (of
    ``where``, ``flt.equals``, ``flt.any_of``, ``flt.where``) that no record of the team has,
    and :class:`~tansaku.errors.InvalidRequest` for a value its key's type cannot hold. String
    values of ``equals``/``any_of`` on keys stored as numbers or booleans are typed as well."""
    clauses = [parse_where(w) for w in where]
    scope = f"コレクション「{collection.name}」(チーム {tenant})"
    if flt.fields:
        _check_fields(collection, tenant, flt.fields, scope)
    keys = list(
        dict.fromkeys(
            [*(c.key for c in clauses), *flt.equals, *flt.any_of, *(c.key for c in flt.where)]
        )
    )
    if not keys:
        return flt
    store = collection.store
    samples = store.metadata_sample(tenant, keys, limit=SAMPLE)
    missing = [k for k in keys if k not in samples]
    if missing and store.count(tenant) > 0:
        available = sorted(store.metadata_sample(tenant, limit=KEY_SAMPLE))
        raise UnknownName("メタデータのキー", missing[0], available, scope)
    kinds = {k: kinds_of(samples.get(k, ())) for k in keys}
    opaque = {Kind.INT, Kind.FLOAT, Kind.BOOL}  # kinds a string value can never equal
    equals = {k: v for k, v in flt.equals.items() if not (isinstance(v, str) and kinds[k] & opaque)}
    any_of = {k: vs for k, vs in flt.any_of.items() if not kinds[k] & opaque}
    typed = [
        *(
            typed_condition(WhereClause(k, Op.EQ, (str(v),)), kinds[k])
            for k, v in flt.equals.items()
            if k not in equals
        ),
        *(
            typed_condition(WhereClause(k, Op.EQ, tuple(vs)), kinds[k])
            for k, vs in flt.any_of.items()
            if k not in any_of
        ),
        *(typed_condition(c, kinds[c.key]) for c in clauses),
    ]
    return _fold_dates(replace(flt, equals=equals, any_of=any_of), [*flt.where, *typed])


# -- the plan ----------------------------------------------------------------------------


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, date):
        return value.isoformat()
    return str(value)


def describe(cond: MetaCondition) -> list[str]:
    """``["cost=1,2"]``, ``["cost>=2", "cost<=4"]``: a condition as expressions."""
    if cond.values:
        return [f"{cond.key}={','.join(_text(v) for v in cond.values)}"]
    return [f"{cond.key}{_SYMBOL_OF[n]}{_text(v)}" for n, v in cond.bounds.items()]

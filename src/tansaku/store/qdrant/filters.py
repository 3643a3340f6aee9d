"""Engine-neutral filters (:class:`tansaku.store.base.Filter`, with the tenant) as
``qdrant_client`` filters, with the semantics of the embedded store's
(``tansaku.store.shard._conditions``): the record payload is the same
(:func:`tansaku.store.shard.filter_payload`), so every condition reads the same keys.

- ``fields``/``doc_ids``/``any_of``: match any; ``equals``: match the value (a bool matches a
  stored bool only; Qdrant's JSON keeps them apart).
- dates of ``Filter.date_from``/``date_to`` and ``date`` bounds compare the indexed
  ``date_int`` (``20251210``); date bounds on other keys compare the ISO strings as datetimes
  (a bound day covers all of that day).
- typed :class:`MetaCondition` values: ints and strings each a match, a float any number equal
  to it (a range), a ``date`` that whole day; several types are a ``should`` group.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import date, timedelta
from typing import Any

from tansaku.store.base import Bound, Filter, MetaCondition
from tansaku.store.qdrant.settings import import_qdrant_client
from tansaku.store.shard import filter_payload

import_qdrant_client()  # MissingExtra naming `tansaku[qdrant]` before the import below fails

from qdrant_client import models  # noqa: E402

__all__ = ["corpus_filter", "filter_payload", "records_of", "tenant_condition", "tenant_filter"]


def tenant_condition(tenant: str) -> models.FieldCondition:
    return models.FieldCondition(key="tenant", match=models.MatchValue(value=tenant))


def tenant_filter(tenant: str, flt: Filter | None = None) -> models.Filter:
    """The tenant's condition and the :class:`Filter`'s as one Qdrant filter: every read and
    every search goes through here, so no query can cross teams."""
    return models.Filter(must=conditions(tenant, flt))


def records_of(tenant: str, rids: Sequence[str]) -> models.Filter:
    """The tenant's points of the given record ids."""
    return models.Filter(
        must=[
            tenant_condition(tenant),
            models.FieldCondition(key="rid", match=models.MatchAny(any=list(rids))),
        ]
    )


def corpus_filter(tenant: str, fields: Sequence[str] = ()) -> models.Filter:
    """The IDF corpus of a BM25 search: the tenant's points (of ``fields``; empty: all), as
    ``EdgeStore._idf_params`` scopes it."""
    must: list[Any] = [tenant_condition(tenant)]
    if fields:
        must.append(models.FieldCondition(key="field", match=models.MatchAny(any=list(fields))))
    return models.Filter(must=must)


def idf_params(tenant: str, fields: Sequence[str] = ()) -> models.SearchParams:
    """Search parameters scoping ``Modifier.IDF`` to :func:`corpus_filter`."""
    return models.SearchParams(idf=models.IdfCorpusParams(corpus=corpus_filter(tenant, fields)))


def conditions(tenant: str, flt: Filter | None) -> list[Any]:
    must: list[Any] = [tenant_condition(tenant)]
    if flt is None:
        return must
    if flt.fields:
        must.append(models.FieldCondition(key="field", match=models.MatchAny(any=list(flt.fields))))
    if flt.doc_ids:
        must.append(
            models.FieldCondition(key="doc_id", match=models.MatchAny(any=list(flt.doc_ids)))
        )
    for key, value in flt.equals.items():
        must.append(models.FieldCondition(key=f"meta.{key}", match=models.MatchValue(value=value)))
    for key, values in flt.any_of.items():
        must.append(
            models.FieldCondition(key=f"meta.{key}", match=models.MatchAny(any=list(values)))
        )
    if flt.date_from or flt.date_to:
        rng = models.Range(
            gte=float(flt.date_from.strftime("%Y%m%d")) if flt.date_from else None,
            lte=float(flt.date_to.strftime("%Y%m%d")) if flt.date_to else None,
        )
        must.append(models.FieldCondition(key="date_int", range=rng))
    must.extend(meta_condition(cond) for cond in flt.where)
    return must


def meta_condition(cond: MetaCondition) -> models.FieldCondition | models.Filter:
    """The Qdrant condition of a typed metadata condition; values of several types (``cost``
    stored as an int in some records and as a string in others) become a ``should`` group."""
    if cond.bounds:
        return meta_range(cond.key, cond.bounds)
    key = f"meta.{cond.key}"
    groups: list[models.FieldCondition] = []
    ints = [v for v in cond.values if isinstance(v, int) and not isinstance(v, bool)]
    strs = [v for v in cond.values if isinstance(v, str)]
    for same in (ints, strs):
        if same:
            match: Any = (
                models.MatchValue(value=same[0]) if len(same) == 1 else models.MatchAny(any=same)
            )
            groups.append(models.FieldCondition(key=key, match=match))
    for v in cond.values:
        if isinstance(v, bool):
            groups.append(models.FieldCondition(key=key, match=models.MatchValue(value=v)))
        elif isinstance(v, float):  # any number equal to it, int or float
            groups.append(models.FieldCondition(key=key, range=models.Range(gte=v, lte=v)))
        elif isinstance(v, date):
            groups.append(meta_range(cond.key, {"gte": v, "lte": v}))
    if len(groups) == 1:
        return groups[0]
    return models.Filter(should=list[Any](groups))


def meta_range(key: str, bounds: Mapping[str, Bound]) -> models.FieldCondition:
    """Numbers compare as floats. Days compare on the indexed ``date_int`` for ``date``, and
    as datetimes of the ISO strings for other keys (a bound day covers all of that day)."""
    if not any(isinstance(v, date) for v in bounds.values()):
        nums = {name: float(v) for name, v in bounds.items() if not isinstance(v, date)}
        return models.FieldCondition(key=f"meta.{key}", range=models.Range(**nums))
    days = {name: v for name, v in bounds.items() if isinstance(v, date)}
    if key == "date":
        ints = {name: float(d.strftime("%Y%m%d")) for name, d in days.items()}
        return models.FieldCondition(key="date_int", range=models.Range(**ints))
    # a bound day covers the whole day: after d = from the start of d + 1, up to d = before it
    lower = [d + timedelta(days=int(n == "gt")) for n, d in days.items() if n in ("gte", "gt")]
    upper = [d + timedelta(days=int(n == "lte")) for n, d in days.items() if n in ("lte", "lt")]
    rng = models.DatetimeRange(
        gte=max(lower) if lower else None,
        lt=min(upper) if upper else None,
    )
    return models.FieldCondition(key=f"meta.{key}", range=rng)

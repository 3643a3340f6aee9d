"""The engine filters of searches are built once per meaning (fields, documents, dates) and
kept; filters with metadata conditions are built each time, as their values can be equal
across types (``1 == True``) and must never stand in for each other."""

from __future__ import annotations

from datetime import date

from tansaku.store import shard
from tansaku.store.base import Filter, MetaCondition


def test_a_plain_filter_is_built_once_per_meaning() -> None:
    october = Filter(fields=("body",), date_from=date(2025, 10, 1), date_to=date(2025, 10, 31))
    same = Filter(fields=("body",), date_from=date(2025, 10, 1), date_to=date(2025, 10, 31))
    first = shard.search_filter("営業部", october, sole=False)
    assert shard.search_filter("営業部", same, sole=False) is first
    assert shard.search_filter("営業部", october, sole=True) is not first  # no tenant condition
    assert shard.search_filter("開発部", october, sole=False) is not first  # another team
    assert shard.search_filter("営業部", None, sole=True) is None  # nothing to filter on
    docs = Filter(doc_ids=("DR-20251126-1", "BBS-20251004-1"))
    assert shard.search_filter("営業部", docs, sole=False) is not first


def test_metadata_conditions_are_never_taken_for_one_another() -> None:
    flag = Filter(equals={"urgent": True})
    one = Filter(equals={"urgent": 1})
    assert flag == one  # equal as Python values, different conditions for the engine
    assert shard.search_filter("営業部", flag, sole=False) is not shard.search_filter(
        "営業部", one, sole=False
    )
    typed = Filter(where=(MetaCondition(key="cost", values=(1,)),))
    assert shard.search_filter("営業部", typed, sole=False) is not shard.search_filter(
        "営業部", typed, sole=False
    )


def test_the_kept_filters_stay_bounded() -> None:
    for n in range(shard.PLAIN_FILTERS_KEPT + 10):
        shard.search_filter("営業部", Filter(doc_ids=(f"DR-{n}",)), sole=False)
    assert len(shard._PLAIN_FILTERS) <= shard.PLAIN_FILTERS_KEPT

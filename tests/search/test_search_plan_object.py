"""SearchPlan: frozen all the way down, its JSON a fresh dict each time, ``plan["key"]`` still
readable but deprecated. (The JSON of real searches is pinned in ``test_plan_json.py``.)"""

from __future__ import annotations

import dataclasses
import json
from datetime import date, datetime

import pytest

from tansaku.config import AxisMode, FusionConfig, FusionMethod, MergeMethod
from tansaku.search.classify import Classification, QueryLabel
from tansaku.search.plan import (
    AxisPlan,
    DateFilterPlan,
    FilterPlan,
    RerankPlan,
    SearchPlan,
    StagePlan,
    SynonymPlan,
    UnusedDatePlan,
)
from tansaku.search.types import SearchResult
from tansaku.store.base import Filter, MetaCondition
from tansaku.text.dates import TOKYO, DateRange

NOW = datetime(2025, 12, 11, 9, 30, 15, tzinfo=TOKYO)
YESTERDAY = DateRange(date(2025, 12, 10), date(2025, 12, 10), "昨日")


def _plan(**changes: object) -> SearchPlan:
    plan = SearchPlan(
        collection="reports",
        tenant="shinjuku",
        normalized_query="昨日の問題",
        classification=Classification(QueryLabel.VAGUE, 0.954, ("曖昧な語",)),
        now=NOW,
        date_range=YESTERDAY,
        stage=StagePlan(
            retry_stage=2,
            expanded_queries=("2025-12-10の問題", "2025-12-10のトラブル"),
            synonyms=(SynonymPlan("問題", ("トラブル", "クレーム")),),
            query_terms=("問題", "トラブル", "クレーム"),
            axes=(AxisPlan("keyword", AxisMode.BM25, ("body", "combined"), 0.5, 12),),
            min_score=-0.05,
            top_k=20,
            merge=MergeMethod.HITS,
        ),
        fusion=FusionConfig(method=FusionMethod.RRF, k=30),
        filter=FilterPlan(
            equals=(("store", "新宿店"),), date_from=date(2025, 12, 10), date_to=date(2025, 12, 10)
        ),
        candidates=40,
        rerank=RerankPlan(applied=False, reason="リランカーが設定されていません"),
    )
    return dataclasses.replace(plan, **changes)  # type: ignore[arg-type]


def test_every_part_is_frozen() -> None:
    plan = _plan()
    with pytest.raises(dataclasses.FrozenInstanceError):
        plan.tenant = "shibuya"  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        plan.stage.top_k = 1000  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        plan.filter.where = ("store=渋谷店",)  # type: ignore[misc]
    with pytest.raises(AttributeError):  # slots: no new attributes either
        object.__setattr__(plan, "extra", 1)
    assert hash(plan) == hash(_plan())  # tuples, enums and dates inside: hashable, comparable
    assert plan == _plan() and plan != _plan(tenant="shibuya")


def test_the_json_is_a_new_dict_each_time() -> None:
    plan = _plan()
    out = plan.to_dict()
    out["tenant"] = "shibuya"
    out["expanded_queries"].append("注入された検索")
    out["filter"]["equals"]["store"] = "渋谷店"
    again = plan.to_dict()
    assert again["tenant"] == "shinjuku" and len(again["expanded_queries"]) == 2
    assert again["filter"]["equals"] == {"store": "新宿店"}
    assert json.loads(json.dumps(again, ensure_ascii=False)) == again


def test_json_of_the_parts() -> None:
    out = _plan().to_dict()
    assert out["classification"] == {"label": "vague", "confidence": 0.95}  # no reasons
    assert out["now"] == "2025-12-11T09:30+09:00"
    assert out["date_filter"] == {
        "from": "2025-12-10",
        "to": "2025-12-10",
        "source": "query",
        "expression": "昨日",
    }
    assert out["synonyms"] == {"問題": ["トラブル", "クレーム"]}
    assert out["axes"] == [
        {
            "name": "keyword",
            "mode": "bm25",
            "fields": ["body", "combined"],
            "weight": 0.5,
            "candidates": 12,
        }
    ]
    assert out["fusion"] == {"method": "rrf", "k": 30} and out["merge"] == "hits"
    assert out["rerank"] == {"applied": False, "reason": "リランカーが設定されていません"}
    linear = _plan(fusion=FusionConfig(), rerank=None, stage=StagePlan()).to_dict()
    assert linear["fusion"] == {
        "method": "linear",
        "normalization": "zscore",
        "dense_gate": 3.0,
        "dense_length": 83.0,
    }
    assert linear["rerank"] is None and linear["merge"] is None
    assert linear["expanded_queries"] == [] and linear["synonyms"] == {}


def test_the_date_filter_follows_the_query_or_the_filter() -> None:
    from_filter = _plan(date_range=None, filter=FilterPlan(date_from=date(2025, 12, 8)))
    assert from_filter.date_filter == DateFilterPlan(date(2025, 12, 8), None, "filter")
    assert from_filter.to_dict()["date_filter"] == {
        "from": "2025-12-08",
        "to": None,
        "source": "filter",
    }
    assert _plan(date_range=None, filter=FilterPlan()).date_filter is None
    unused = _plan(date_range=None, date_unused=UnusedDatePlan(YESTERDAY, "no_dates"))
    assert unused.to_dict()["date_unused"] == {
        "from": "2025-12-10",
        "to": "2025-12-10",
        "expression": "昨日",
        "reason": "no_dates",
    }


def test_filter_plan_of_a_filter_describes_conditions() -> None:
    flt = Filter(
        fields=("body",),
        equals={"claim": True},
        any_of={"store": ("新宿店", "渋谷店")},
        where=(MetaCondition(key="cost", gte=2, lte=4),),
        doc_ids=("r-001",),
    )
    plan = FilterPlan.of(flt)
    assert plan.where == ("cost>=2", "cost<=4")
    assert plan.to_dict() == {
        "fields": ["body"],
        "equals": {"claim": True},
        "any_of": {"store": ["新宿店", "渋谷店"]},
        "where": ["cost>=2", "cost<=4"],
        "doc_ids": ["r-001"],
    }


def test_item_access_is_deprecated_but_reads_the_json() -> None:
    plan = _plan()
    with pytest.deprecated_call(match="plan"):
        assert plan["expanded_queries"] == ["2025-12-10の問題", "2025-12-10のトラブル"]
    with pytest.deprecated_call(), pytest.raises(KeyError):
        plan["存在しないキー"]
    with pytest.raises(TypeError):  # neither a mapping nor a sequence
        list(plan)


def test_a_result_serialises_its_plan() -> None:
    result = SearchResult(
        query_id="q1", query="昨日の問題", hits=(), plan=_plan(), timings_ms={"total": 1.23456}
    )
    data = result.to_dict()
    assert data["plan"] == _plan().to_dict() and data["timings_ms"] == {"total": 1.235}

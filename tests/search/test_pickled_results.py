"""A search result crosses from a search process to the server pickled: every field of its hits,
their records and axis scores comes back (the value types pickle by their fields)."""

from __future__ import annotations

import dataclasses
import pickle

import pytest

from tansaku.records import Record
from tansaku.search.types import AxisScore, Hit

RECORD = Record(
    id="r-0042:body",
    doc_id="r-0042",
    field="body",
    text="新宿店のウォークイン冷蔵庫が 8℃ まで上がった。扉のパッキンを交換して復旧。",
    metadata={"title": "冷蔵庫の温度異常", "date": "2025-11-20", "store": "新宿店"},
)
HIT = Hit(
    doc_id="r-0042",
    score=0.8125,
    record=RECORD,
    axes={"bm25": AxisScore(rank=1, score=12.5), "dense": AxisScore(rank=3, score=0.88)},
    matched_queries=("冷蔵庫 故障", "冷蔵庫の温度が上がらない"),
    max_similarity=0.91,
    avg_similarity=0.87,
    rerank_score=0.66,
)


@pytest.mark.parametrize("value", [RECORD, HIT, AxisScore(rank=2, score=0.5)], ids=type)
def test_every_field_comes_back(value) -> None:
    back = pickle.loads(pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL))
    assert back == value and type(back) is type(value)
    for f in dataclasses.fields(value):  # none left at its default by a forgotten field
        assert getattr(back, f.name) == getattr(value, f.name), f.name
    assert len(value.__reduce__()[1]) == len(dataclasses.fields(value))

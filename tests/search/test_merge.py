from __future__ import annotations

import pytest

from tansaku.records import Record
from tansaku.search.merge import (
    QueryHits,
    enhance_with_metadata,
    filter_by_threshold,
    group_by_source_type,
    merge_hits,
    merge_rrf,
    merge_simple,
    rerank_with_weights,
)
from tansaku.search.types import Hit


def hit(doc: str, score: float, st: str = "daily_report") -> Hit:
    rec = Record(
        id=f"{doc}:body",
        doc_id=doc,
        field="body",
        text=f"{doc}の本文です",
        metadata={"source_type": st, "date": "2025-12-10", "store": "新宿店"},
    )
    return Hit(doc_id=doc, score=score, record=rec, axes={})


def test_merge_hits_matches_the_design_example():
    runs = [
        QueryHits("q1", [hit("123", 0.85), hit("456", 0.75)]),
        QueryHits("q2", [hit("123", 0.82), hit("789", 0.80, "bbs_post")]),
        QueryHits("q3", [hit("123", 0.78)]),
    ]
    merged = merge_hits(runs)
    assert [h.doc_id for h in merged] == ["123", "789", "456"]
    top = merged[0]
    assert top.score == pytest.approx(3 * 10 + 0.85)
    assert top.matched_queries == ("q1", "q2", "q3")
    assert top.max_similarity == pytest.approx(0.85)
    assert top.avg_similarity == pytest.approx((0.85 + 0.82 + 0.78) / 3)
    assert merged[1].score == pytest.approx(10.80)


def test_merge_groups_by_source_type_and_doc():
    runs = [QueryHits("q1", [hit("1", 0.5, "bbs_post")]), QueryHits("q2", [hit("1", 0.4)])]
    assert len(merge_hits(runs)) == 2


def test_merge_rrf_one_based():
    runs = [QueryHits("a", [hit("x", 0.9), hit("y", 0.8)]), QueryHits("b", [hit("y", 0.7)])]
    merged = {h.doc_id: h.score for h in merge_rrf(runs, k=60)}
    assert merged["x"] == pytest.approx(1 / 61)
    assert merged["y"] == pytest.approx(1 / 62 + 1 / 61)


def test_utilities():
    hits = [hit("a", 0.9), hit("b", 0.5, "bbs_post"), hit("c", 0.2, "bbs_comment")]
    assert [h.doc_id for h in filter_by_threshold(hits, 0.3)] == ["a", "b"]
    groups = group_by_source_type(hits)
    assert set(groups) == {"daily_report", "bbs_post", "bbs_comment"}
    weighted = rerank_with_weights(
        [hit("a", 0.5), hit("b", 0.6, "bbs_post")], {"daily_report": 1.0, "bbs_post": 0.8}
    )
    assert [(h.doc_id, round(h.score, 2)) for h in weighted] == [("a", 0.5), ("b", 0.48)]
    rows = enhance_with_metadata(hits[:1])
    assert rows[0]["source"] == "日報" and rows[0]["similarity"] == "90.00%"
    assert rows[0]["preview"] == "aの本文です"


def test_merge_simple_removes_duplicates_without_scoring():
    runs = [
        QueryHits("冷蔵庫 故障", [hit("123", 0.55), hit("456", 0.75)]),
        QueryHits(
            "冷蔵庫 壊れた", [hit("456", 0.90), hit("789", 0.10), hit("123", 0.20, "bbs_post")]
        ),
    ]
    merged = merge_simple(runs)
    assert [(h.doc_id, h.score) for h in merged] == [
        ("123", 0.55),
        ("456", 0.75),
        ("789", 0.10),
        ("123", 0.20),  # the same document as a bulletin-board post is another result
    ]
    assert merged[2].matched_queries == ("冷蔵庫 壊れた",)
    assert [h.doc_id for h in merge_simple(runs, top_k=2)] == ["123", "456"]
    assert merge_simple([]) == []
    with pytest.raises(ValueError, match="top_k"):
        merge_simple(runs, top_k=0)

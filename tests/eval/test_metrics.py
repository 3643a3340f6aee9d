"""Metric plumbing against hand-computed numbers (ranx underneath, our ranks on top)."""

from __future__ import annotations

import math

import pytest

from tansaku.eval.metrics import METRIC_KEYS, percentile, score_run

L2 = math.log2


def test_metric_keys_are_the_json_keys() -> None:
    assert METRIC_KEYS == (
        "ndcg@10",
        "recall@10",
        "recall@100",
        "mrr@10",
        "p@10",
        "r@1",
        "zero_hit_rate",
        "latency_ms_p50",
        "latency_ms_p95",
    )


def test_hand_computed_binary_case() -> None:
    qrels = {"q1": {"d1": 1, "d2": 1}, "q2": {"d3": 1}, "q3": {"d9": 1}}
    run = {"q1": ["d1", "dx", "d2"], "q2": ["dy", "d3"], "q3": []}
    means, per = score_run(qrels, run)
    q1_ndcg = (1 / L2(2) + 1 / L2(4)) / (1 / L2(2) + 1 / L2(3))
    q2_ndcg = (1 / L2(3)) / 1
    assert per["q1"] == pytest.approx(
        {
            "ndcg@10": q1_ndcg,
            "recall@10": 1.0,
            "recall@100": 1.0,
            "mrr@10": 1.0,
            "p@10": 0.2,
            "r@1": 0.5,
        }
    )
    assert per["q2"] == pytest.approx(
        {
            "ndcg@10": q2_ndcg,
            "recall@10": 1.0,
            "recall@100": 1.0,
            "mrr@10": 0.5,
            "p@10": 0.1,
            "r@1": 0.0,
        }
    )
    assert per["q3"] == pytest.approx(dict.fromkeys(per["q3"], 0.0))
    assert means["ndcg@10"] == pytest.approx((q1_ndcg + q2_ndcg) / 3)
    assert means["mrr@10"] == pytest.approx(1.5 / 3)
    assert means["p@10"] == pytest.approx(0.3 / 3)
    assert means["r@1"] == pytest.approx(0.5 / 3)


def test_our_order_is_kept_not_re_sorted_by_id() -> None:
    # "d1" sorts before "dx"; the run says dx is first, so the first relevant is at rank 2.
    means, _ = score_run({"q": {"d1": 1}}, {"q": ["dx", "d1"]})
    assert means["mrr@10"] == pytest.approx(0.5)
    assert means["r@1"] == 0.0


def test_cutoffs_at_10_and_100() -> None:
    ranked = [f"n{i}" for i in range(10)] + ["rel"]  # relevant at rank 11
    means, _ = score_run({"q": {"rel": 1}}, {"q": ranked})
    assert means["recall@10"] == 0.0 and means["mrr@10"] == 0.0 and means["ndcg@10"] == 0.0
    assert means["recall@100"] == 1.0


def test_graded_relevance_uses_linear_gains() -> None:
    means, _ = score_run({"q": {"a": 2, "b": 1}}, {"q": ["b", "a"]})
    dcg = 1 / L2(2) + 2 / L2(3)
    idcg = 2 / L2(2) + 1 / L2(3)
    assert means["ndcg@10"] == pytest.approx(dcg / idcg)


def test_duplicates_count_once_and_unjudged_queries_are_ignored() -> None:
    qrels = {"q10": {"a": 1}, "q2": {"b": 1}, "q_none": {"z": 0}}
    run = {"q10": ["a", "a", "x"], "q2": ["x", "y", "b"], "extra": ["a"]}
    means, per = score_run(qrels, run)
    assert set(per) == {"q10", "q2"}
    assert per["q10"]["mrr@10"] == 1.0 and per["q10"]["p@10"] == pytest.approx(0.1)
    assert per["q2"]["mrr@10"] == pytest.approx(1 / 3)
    assert means["mrr@10"] == pytest.approx((1 + 1 / 3) / 2)


def test_a_run_that_found_nothing_scores_zero_for_every_query() -> None:
    """A config whose axes match no record (a dense leg over a field the corpus leaves empty)
    scores 0, not a crash of the whole evaluation."""
    means, per = score_run({"q1": {"d1": 1}, "q2": {"d2": 2}}, {"q1": [], "q2": []})
    assert set(per) == {"q1", "q2"}
    assert means["ndcg@10"] == 0.0 and means["recall@100"] == 0.0
    assert all(v == 0.0 for row in per.values() for v in row.values())
    assert score_run({"q1": {"d1": 1}}, {})[0]["mrr@10"] == 0.0


def test_no_judged_query_is_an_error() -> None:
    with pytest.raises(ValueError):
        score_run({"q": {"a": 0}}, {"q": ["a"]})


def test_percentile() -> None:
    assert percentile([], 50) == 0.0
    assert percentile([3.0, 1.0, 2.0], 50) == 2.0
    assert percentile([1.0, 2.0, 3.0, 4.0], 50) == 2.5
    assert percentile([float(i) for i in range(1, 101)], 95) == pytest.approx(95.05)

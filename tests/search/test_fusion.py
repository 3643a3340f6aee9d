from __future__ import annotations

import pytest

from tansaku.search.fusion import linear_fusion, maxnorm, minmax, rrf_fusion, zscore


def test_minmax_hand_computed():
    assert minmax([("a", 10.0), ("b", 6.0), ("c", 2.0)]) == {"a": 1.0, "b": 0.5, "c": 0.0}


def test_minmax_single_and_ties_map_to_one():
    assert minmax([("a", 3.2)]) == {"a": 1.0}
    assert minmax([("a", 0.7), ("b", 0.7)]) == {"a": 1.0, "b": 1.0}
    assert minmax([]) == {}


def test_linear_fusion_hand_computed():
    runs = {
        "bm25": [("d1", 12.0), ("d2", 8.0), ("d3", 4.0)],
        "dense": [("d2", 0.9), ("d3", 0.8), ("d4", 0.5)],
    }
    fused = linear_fusion(runs, {"bm25": 0.5, "dense": 0.5}, normalization="minmax")
    # bm25 minmax: d1 1, d2 .5, d3 0 ; dense minmax: d2 1, d3 .75, d4 0
    assert fused["d1"] == pytest.approx(0.5 * 1.0)
    assert fused["d2"] == pytest.approx(0.5 * 0.5 + 0.5 * 1.0)
    assert fused["d3"] == pytest.approx(0.5 * 0.0 + 0.5 * 0.75)
    assert fused["d4"] == pytest.approx(0.0)


def test_linear_fusion_weights_apply():
    runs = {"a": [("x", 1.0), ("y", 0.0)], "b": [("y", 1.0), ("x", 0.0)]}
    fused = linear_fusion(runs, {"a": 0.8, "b": 0.2}, normalization="minmax")
    assert fused == {"x": pytest.approx(0.8), "y": pytest.approx(0.2)}


def test_rrf_one_based_ranks_hand_computed():
    runs = {"bm25": [("d1", 9.0), ("d2", 5.0)], "dense": [("d2", 0.9), ("d3", 0.1)]}
    fused = rrf_fusion(runs, {"bm25": 1.0, "dense": 1.0}, k=60)
    assert fused["d1"] == 1 / (60 + 1)
    assert fused["d2"] == 1 / (60 + 2) + 1 / (60 + 1)
    assert fused["d3"] == 1 / (60 + 2)


def test_rrf_weights_and_small_k():
    runs = {"a": [("x", 1.0)], "b": [("y", 1.0), ("x", 0.5)]}
    fused = rrf_fusion(runs, {"a": 3.0, "b": 1.0}, k=2)
    assert fused["x"] == pytest.approx(3.0 / 3 + 1.0 / 4)
    assert fused["y"] == pytest.approx(1.0 / 3)


def test_rrf_rejects_bad_k():
    with pytest.raises(ValueError, match="k must be greater than 0"):
        rrf_fusion({}, {}, k=0)


def test_maxnorm_hand_computed_and_depth_independent():
    assert maxnorm([("a", 8.0), ("b", 6.0), ("c", 2.0)]) == {"a": 1.0, "b": 0.75, "c": 0.25}
    assert maxnorm([("a", 8.0), ("b", 6.0)]) == {"a": 1.0, "b": 0.75}
    assert maxnorm([("a", 0.0), ("b", -1.0)]) == {"a": 1.0, "b": 0.0}


def test_linear_fusion_max_normalization_is_default():
    runs = {"bm25": [("d1", 12.0), ("d2", 6.0)], "dense": [("d2", 0.9), ("d3", 0.6)]}
    fused = linear_fusion(runs, {"bm25": 0.5, "dense": 0.5})
    assert fused["d1"] == pytest.approx(0.5)
    assert fused["d2"] == pytest.approx(0.5 * 0.5 + 0.5 * 1.0)
    assert fused["d3"] == pytest.approx(0.5 * 0.6 / 0.9)


def test_linear_fusion_rejects_unknown_normalization():
    with pytest.raises(ValueError, match="normalization"):
        linear_fusion({}, {}, normalization="softmax")


def test_zscore_hand_computed_floored_at_zero_a_tenth_with_a_tail():
    # mean 6, population std sqrt(32/3); at or below the mean only the tail 1e-4 · s / max
    z = zscore([("a", 10.0), ("b", 6.0), ("c", 2.0)])
    assert z["a"] == pytest.approx(4 / (32 / 3) ** 0.5 / 10 + 1e-4)
    assert z["b"] == pytest.approx(1e-4 * 0.6) and z["c"] == pytest.approx(1e-4 * 0.2)
    assert z["a"] > z["b"] > z["c"] > 0  # every candidate kept, in its leg's order
    assert zscore([("a", 0.7), ("b", 0.7)]) == pytest.approx({"a": 0.1001, "b": 0.1001})
    assert zscore([]) == {}


def test_zscore_stays_below_one_at_the_default_depth():
    # the most a run of 100 can stand out: one score far above 99 equal ones (sqrt(99) sd)
    run = [("top", 1000.0)] + [(f"d{i}", 1.0) for i in range(99)]
    assert max(zscore(run).values()) < 1.0
    fused = linear_fusion(
        {"bm25": run, "dense": run}, {"bm25": 0.5, "dense": 0.5}, normalization="zscore"
    )
    assert max(fused.values()) < 1.0


def test_zscore_counts_the_leg_with_a_clear_winner_more():
    sure = [("d1", 10.0)] + [(f"s{i}", 1.0) for i in range(9)]  # one result stands out
    unsure = [("d2", 0.9)] + [(f"u{i}", 0.9 - 0.01 * i) for i in range(1, 10)]  # a slope
    fused = linear_fusion({"bm25": sure, "dense": unsure}, {}, normalization="zscore")
    assert fused["d1"] == pytest.approx(0.3, abs=1e-3)  # (10 - 1.9) / 2.7 / 10
    assert fused["d2"] < 0.2

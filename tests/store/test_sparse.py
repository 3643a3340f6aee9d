from __future__ import annotations

import pytest

from tansaku.store.sparse import bigram_scale, doc_vector, query_vector, term_id


def test_term_id_is_stable_and_31_bit():
    assert term_id("クレーム") == term_id("クレーム")
    assert term_id("クレーム") != term_id("苦情")
    assert 0 <= term_id("str-0001") < 2**31


def test_doc_vector_is_bm25_tf_part():
    k1, b, avgdl = 0.9, 0.4, 4.0
    vec = doc_vector(["料理", "温度", "料理"], k1=k1, b=b, avgdl=avgdl)
    values = dict(zip(vec.indices, vec.values, strict=True))
    norm = k1 * (1 - b + b * 3 / avgdl)
    assert values[term_id("料理")] == pytest.approx(2 * (k1 + 1) / (2 + norm))
    assert values[term_id("温度")] == pytest.approx(1 * (k1 + 1) / (1 + norm))
    assert list(vec.indices) == sorted(vec.indices)


def test_empty_inputs():
    assert len(doc_vector([], k1=0.9, b=0.4, avgdl=1.0)) == 0
    assert len(query_vector([])) == 0


def test_query_vector_dedupes_terms():
    vec = query_vector(["料理", "料理", "温度"])
    assert len(vec) == 2
    assert set(vec.values) == {1.0}


def test_query_vector_weights_listed_terms_only():
    vec = query_vector(["転入", "届け", "どこ", "行く", "どこ"], {"どこ": 0.3, "行く": 0.3})
    values = dict(zip(vec.indices, vec.values, strict=True))
    assert values[term_id("転入")] == values[term_id("届け")] == 1.0
    assert values[term_id("どこ")] == values[term_id("行く")] == 0.3
    assert len(vec) == 4


def test_bigram_scale_keeps_the_larger_weight_of_a_repeated_bigram():
    scale = bigram_scale(["どこ", "転入", "どこ"], {"どこ": 0.3})
    assert scale == {term_id("どこ"): 0.3, term_id("転入"): 1.0}
    assert bigram_scale(["どこ"], None) == {}

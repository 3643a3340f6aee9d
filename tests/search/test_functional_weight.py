"""Content terms over functional phrasing: a colloquial question against a FAQ of questions.

The municipal-FAQ miss: 「転入届を出したいのですが、どこに行けばいいですか」 ranked another
procedure's entry ending 「…どこにいけばいいですか。」 first, because どこ/行く/良い/出す match
every entry asked that way and together outweigh 転入 in BM25 and in the bigrams.
"""

from __future__ import annotations

import pytest

import tansaku
from tansaku.config import Axis, AxisMode, CollectionConfig, QueryConfig, config_from_dict
from tansaku.errors import ConfigError, InvalidRequest
from tansaku.records import Record
from tansaku.testing import HashEmbedder

FAQ = [
    (
        "tennyu",
        "転入の手続き",
        "他の市区町村から引っ越してきた方は、転入届を住み始めた日から14日以内に市民課へ"
        "提出してください。転出証明書と本人確認書類が必要です。",
    ),
    (
        "tenshutsu",
        "転出届を出したいのですが、どこにいけばいいですか。",
        "市民課または各支所の窓口で受け付けます。郵送でも手続きできます。",
    ),
    (
        "konin",
        "婚姻届を出したいのですが、どこにいけばいいですか。",
        "本籍地または住所地の市区町村役場の戸籍係に提出してください。夜間や休日は守衛室で"
        "預かります。",
    ),
    (
        "inkan",
        "印鑑登録をしたいのですが、どうすればいいですか。",
        "登録する印鑑と本人確認書類を持って市民課の窓口へお越しください。",
    ),
    (
        "sodai",
        "粗大ごみを出したいのですが、どうすればいいですか。",
        "粗大ごみ受付センターに電話かインターネットで申し込んでください。",
    ),
    ("juminhyo", "住民票の写しはどこでとれますか。", "市民課、各支所、コンビニで取得できます。"),
    ("passport", "パスポートの申請はどこに行けばいいですか。", "県の旅券センターで申請します。"),
]
QUESTION = "転入届を出したいのですが、どこに行けばいいですか"
BM25 = (Axis(name="bm25", mode=AxisMode.BM25),)
BIGRAM = (Axis(name="bigram", mode=AxisMode.BIGRAM),)


def _records() -> list[Record]:
    return [
        Record(id=f"{d}:body", doc_id=d, field="body", text=f"{t}\n{x}", metadata={"title": t})
        for d, t, x in FAQ
    ]


@pytest.fixture
def ts(tmp_path):
    with tansaku.connect(tmp_path / "home", embedder=HashEmbedder(32)) as client:
        client.ingest_records(_records(), collection="faq", config=CollectionConfig(name="faq"))
        client.ingest_records(
            _records(),
            collection="faq-weighted",
            config=CollectionConfig(name="faq-weighted", query=QueryConfig(functional_weight=0.3)),
        )
        yield client


def _first(ts, collection: str = "faq", **options) -> str:
    return ts.search(QUESTION, collection=collection, top_k=3, **options).hits[0].doc_id


@pytest.mark.parametrize("axes", [BM25, BIGRAM], ids=["bm25", "bigram"])
def test_each_lexical_leg_ranks_the_procedure_named_first(ts, axes) -> None:
    assert _first(ts, axes=axes, functional_weight=1.0) == "tenshutsu"  # the miss, unweighted
    assert _first(ts, axes=axes, functional_weight=0.3) == "tennyu"


def test_the_fused_default_ranks_the_procedure_named_first(ts) -> None:
    assert _first(ts, functional_weight=1.0) != "tennyu"
    assert _first(ts, functional_weight=0.3) == "tennyu"


def test_the_default_weighs_the_frame_down(ts) -> None:
    assert CollectionConfig(name="x").query.functional_weight == 0.5
    assert _first(ts) == "tennyu"


def test_the_collection_setting_applies_and_a_request_overrides_it(ts) -> None:
    assert _first(ts, "faq-weighted") == "tennyu"
    assert _first(ts, "faq-weighted", functional_weight=1.0) != "tennyu"


def test_keyword_queries_rank_the_same_either_way(ts) -> None:
    for query in ("転入届", "粗大ごみ 申し込み", "パスポート 申請"):
        plain = ts.search(query, collection="faq", functional_weight=1.0)
        weighted = ts.search(query, collection="faq", functional_weight=0.3)
        assert [h.doc_id for h in plain.hits] == [h.doc_id for h in weighted.hits]
        assert [h.score for h in plain.hits] == pytest.approx([h.score for h in weighted.hits])


def test_bad_weights_are_refused_in_japanese(ts) -> None:
    with pytest.raises(InvalidRequest, match="functional_weight"):
        ts.search(QUESTION, collection="faq", functional_weight=1.5)
    with pytest.raises(ConfigError, match="functional_weight は 0〜1"):
        config_from_dict({"name": "faq", "query": {"functional_weight": -0.1}})
    cfg = config_from_dict({"name": "faq", "query": {"functional_weight": 0.4}})
    assert cfg.query.functional_weight == 0.4
    assert config_from_dict(cfg.to_dict()).query.functional_weight == 0.4


def test_a_search_analyses_its_question_once(ts) -> None:
    """Synonyms, BM25 terms and functional weights read one analysis of the question (they
    analysed it three times), and the same question asked again is not analysed anew."""
    from tansaku.text import get_analyzer

    analyzer = get_analyzer()
    question = "婚姻届を出したいのですが、土曜日でも受け付けていますか"
    terms, tagged = analyzer._query_terms, analyzer._query_tagged
    before = terms.cache_info().misses, tagged.cache_info().misses
    first = ts.search(question, collection="faq", top_k=3)
    assert first.hits
    assert (terms.cache_info().misses, tagged.cache_info().misses) == (before[0] + 1, before[1] + 1)
    again = ts.search(question, collection="faq", top_k=3)
    assert [h.doc_id for h in again.hits] == [h.doc_id for h in first.hits]
    assert (terms.cache_info().misses, tagged.cache_info().misses) == (before[0] + 1, before[1] + 1)

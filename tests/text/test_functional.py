"""Query-side weights of functional phrasing (question endings, request phrases)."""

from __future__ import annotations

import pytest

from tansaku.text import get_analyzer
from tansaku.text.functional import query_weights
from tansaku.text.ngram import bigrams


def test_question_frame_words_weigh_less_and_content_terms_keep_their_weight() -> None:
    a = get_analyzer()
    w = query_weights("転入届を出したいのですが、どこに行けばいいですか", a, 0.3)
    assert dict(w.terms) == {"出す": 0.3, "どこ": 0.3, "行く": 0.3, "良い": 0.3}
    assert w.term("転入") == 1.0 and w.term("届け") == 1.0
    assert w.grams["転入"] == w.grams["入届"] == 1.0
    # a bigram weighs the product of its characters' weights: content meeting the frame
    # weighs the weight once, the frame itself twice
    assert w.grams["届を"] == pytest.approx(0.3)
    assert w.grams["どこ"] == w.grams["いい"] == w.grams["すか"] == pytest.approx(0.09)
    assert set(w.grams) == set(bigrams("転入届を出したいのですが、どこに行けばいいですか"))


@pytest.mark.parametrize(
    ("query", "functional", "content"),
    [
        ("住民票について教えてください", {"つく", "教える", "下さる"}, {"住民", "票"}),
        ("パスポートの申請方法を知りたい", {"知る"}, {"パスポート", "申請", "方法"}),
        ("粗大ごみの出し方はどうすればよろしいでしょうか", {"為る", "宜しい"}, {"粗大", "ごみ"}),
        ("必要なものは何ですか", {"物", "何"}, {"必要"}),
    ],
)
def test_request_phrases_and_formal_nouns(
    query: str, functional: set[str], content: set[str]
) -> None:
    w = query_weights(query, get_analyzer(), 0.5)
    assert functional <= set(w.terms)
    assert not content & set(w.terms)


def test_keyword_queries_and_weight_one_are_left_alone() -> None:
    a = get_analyzer()
    assert not query_weights("豆腐 原料", a, 0.3)
    assert not query_weights("転入届を出したいのですが", a, 1.0)
    # a query that is all frame has nothing to weigh against: unweighted
    assert not query_weights("どこに行けばいいですか", a, 0.3)


def test_weight_out_of_range_is_an_error() -> None:
    with pytest.raises(ValueError, match="functional weight"):
        query_weights("転入届", get_analyzer(), 1.5)

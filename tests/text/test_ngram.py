"""Sentence units and character bigrams of the ``bigram`` axis."""

from __future__ import annotations

from tansaku.text.ngram import MAX_UNIT_CHARS, bigrams, sentences, unit_texts

PASSAGE = (
    "梅雨\n梅雨は、北海道と小笠原諸島を除く日本で見られる。"
    "梅雨前線が停滞し、雨の多い期間が続く！\n沖縄では5月に始まる？"
)


def test_sentences_split_after_terminators_and_at_line_breaks() -> None:
    assert sentences(PASSAGE) == [
        "梅雨",
        "梅雨は、北海道と小笠原諸島を除く日本で見られる。",
        "梅雨前線が停滞し、雨の多い期間が続く！",
        "沖縄では5月に始まる？",
    ]


def test_long_sentences_are_windowed_and_tiny_ones_dropped() -> None:
    long = "あ" * (MAX_UNIT_CHARS * 2 + 10)
    assert [len(s) for s in sentences(long + "。")] == [MAX_UNIT_CHARS, MAX_UNIT_CHARS, 11]
    assert sentences("。\n、\n") == []


def test_units_carry_the_title_and_skip_the_title_line() -> None:
    units = unit_texts(PASSAGE, {"title": "梅雨"})
    assert units == [
        "梅雨\n梅雨は、北海道と小笠原諸島を除く日本で見られる。",
        "梅雨\n梅雨前線が停滞し、雨の多い期間が続く！",
        "梅雨\n沖縄では5月に始まる？",
    ]


def test_units_without_title_or_sentences() -> None:
    card = "守護を持つフォロワーを1体破壊する。"
    assert unit_texts(card) == [card]
    assert unit_texts("梅雨", {"title": "梅雨"}) == ["梅雨"]  # only the title: one unit
    assert unit_texts("", {}) == []


def test_bigrams_are_normalised_and_ignore_whitespace() -> None:
    # NFKC: full-width letters and digits become ASCII, then lower-cased
    assert bigrams("ＬＰ－０７ 培養") == ["lp", "p-", "-0", "07", "7培", "培養"]
    assert bigrams("梅") == ["梅"]
    assert bigrams("  ") == []

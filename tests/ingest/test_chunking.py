from __future__ import annotations

import itertools

import pytest

from tansaku.ingest.chunking import chunk_spans, chunk_text

MANUAL = (
    "調理の前には必ず手を洗います。"
    "石けんで三十秒以上洗い、流水で十分にすすぎます。"
    "使い捨てのペーパータオルで手を拭きます。"
    "爪ブラシで爪の間も洗いましょう。"
    "手荒れがある場合は店長に報告してください。"
    "傷がある場合は手袋を着用します。"
)
SENTENCES = [s + "。" for s in MANUAL.split("。") if s]


def test_short_text_is_one_chunk_stripped() -> None:
    assert chunk_text("今日は晴れです。", size=100, overlap=10) == ["今日は晴れです。"]
    assert chunk_text("  \n今日は晴れです。\n ", size=100, overlap=10) == ["今日は晴れです。"]


def test_blank_text_gives_no_chunks() -> None:
    assert chunk_text("", size=10, overlap=0) == []
    assert chunk_text(" \n\u3000\n", size=10, overlap=0) == []


def test_cuts_at_sentence_ends_within_size() -> None:
    chunks = chunk_text(MANUAL, size=50, overlap=0)
    assert len(chunks) > 1
    for chunk in chunks:
        assert len(chunk) <= 50
        assert chunk.endswith("。")
    # no overlap: the chunks are the sentences regrouped, in order
    assert "".join(chunks) == MANUAL


def test_overlap_repeats_whole_last_sentences() -> None:
    chunks = chunk_text(MANUAL, size=60, overlap=25)
    assert len(chunks) >= 3
    for prev, nxt in itertools.pairwise(chunks):
        assert len(prev) <= 60
        # the next chunk starts with a whole sentence that ended the previous chunk
        first_sentence = nxt.split("。")[0] + "。"
        assert first_sentence in SENTENCES
        assert prev.endswith(first_sentence)
        assert len(first_sentence) <= 25
    assert chunks[-1].endswith("傷がある場合は手袋を着用します。")


def test_overlap_is_about_overlap_chars() -> None:
    text = "あいうえお。" * 40  # 6-character sentences
    spans = chunk_spans(text, size=60, overlap=20)
    for (_, prev_end), (next_start, _) in itertools.pairwise(spans):
        shared = prev_end - next_start
        assert 12 < shared <= 20  # whole 6-character sentences, never more than overlap


def test_newline_is_a_sentence_end() -> None:
    text = "材料\n鶏むね肉 2kg\n塩 20g\n砂糖 10g\n方法\n筋切りして塩をすり込む"
    chunks = chunk_text(text, size=20, overlap=0)
    assert chunks[0] == "材料\n鶏むね肉 2kg\n塩 20g"
    assert all(len(c) <= 20 for c in chunks)


def test_prefers_paragraph_break() -> None:
    text = "第1章 手洗い\n調理の前に手を洗う。\n\n第2章 加熱\n中心温度75℃で1分以上加熱する。"
    chunks = chunk_text(text, size=40, overlap=0)
    assert chunks[0] == "第1章 手洗い\n調理の前に手を洗う。"
    assert chunks[1].startswith("第2章 加熱")


def test_falls_back_to_touten_in_a_long_sentence() -> None:
    sentence = (
        "鶏むね肉を筋切りし、塩と砂糖をすり込み、真空パックに入れ、二度で七十二時間熟成させ、"
        "低温調理器で六十三度に保ち、一時間加熱したのちに急冷する。"
    )
    chunks = chunk_text(sentence, size=30, overlap=0)
    assert len(chunks) > 1
    for chunk in chunks[:-1]:
        assert chunk.endswith("、")
        assert len(chunk) <= 30
    assert "".join(chunks) == sentence


def test_hard_cut_when_no_boundary() -> None:
    text = "あ" * 25
    assert chunk_text(text, size=10, overlap=0) == ["あ" * 10, "あ" * 10, "あ" * 5]
    spans = chunk_spans(text, size=10, overlap=3)
    assert spans == [(0, 10), (7, 17), (14, 24), (21, 25)]


def test_long_sentence_after_short_one_is_filled() -> None:
    text = "短い文。" + "長い文が続きます、" * 10 + "終わり。"
    chunks = chunk_text(text, size=40, overlap=0)
    assert all(len(c) <= 40 for c in chunks)
    assert len(chunks[0]) > 20  # the 4-character sentence did not become a chunk of its own


def test_closing_brackets_stay_with_their_sentence() -> None:
    text = "店長は「手を洗いましょう。」と言った。次に厨房へ移動した。最後に記録した。"
    chunks = chunk_text(text, size=16, overlap=0)
    assert chunks[0] == "店長は「手を洗いましょう。」"


def test_numbering_is_not_a_sentence_end_but_english_period_is() -> None:
    text = "2. 材料の準備をする手順について\nThe oven is hot. Wear gloves now."
    chunks = chunk_text(text, size=24, overlap=0)
    assert chunks[0] == "2. 材料の準備をする手順について"
    assert "The oven is hot." in chunks


def test_spans_index_the_text_and_cover_it() -> None:
    text = "\n" + MANUAL * 3 + "\n"
    spans = chunk_spans(text, size=45, overlap=15)
    assert spans[0][0] == 1
    assert spans[-1][1] == len(text) - 1
    for (s1, e1), (s2, _) in itertools.pairwise(spans):
        assert s2 <= e1  # no gap
        assert s1 < s2  # progress
    assert chunk_text(text, size=45, overlap=15) == [text[s:e] for s, e in spans]


@pytest.mark.parametrize("size,overlap", [(20, 0), (20, 5), (33, 10), (100, 99), (7, 6)])
def test_no_empty_chunks_and_size_bound(size: int, overlap: int) -> None:
    text = (MANUAL + "\n\n" + "句読点のない長い行" * 9 + "\n") * 2
    chunks = chunk_text(text, size=size, overlap=overlap)
    assert chunks
    assert all(c.strip() == c and c for c in chunks)
    assert all(len(c) <= size for c in chunks)


def test_deterministic() -> None:
    assert chunk_text(MANUAL * 5, 70, 20) == chunk_text(MANUAL * 5, 70, 20)


@pytest.mark.parametrize(
    "size,overlap,needle",
    [
        (0, 0, "the size is 0"),
        (-5, 0, "the size is -5"),
        (10, -1, "the overlap is -1"),
        (10, 10, "the overlap is 10"),
        (10, 12, "the overlap is 12"),
    ],
)
def test_validation(size: int, overlap: int, needle: str) -> None:
    with pytest.raises(ValueError, match=needle):
        chunk_text("テキスト", size=size, overlap=overlap)

"""The storage order of the ONNX graph's word-embedding rows (``onnx_build.row_order``)."""

from __future__ import annotations

import numpy as np

from tansaku.embed.e5_tokenizer import E5Tokenizer
from tansaku.embed.e5_weights import E5Weights
from tansaku.embed.onnx_build import row_order

PIECES = [
    b"<s>",
    b"<pad>",
    b"</s>",
    b"<unk>",
    "▁Москва".encode(),  # 4: another script
    b"\xe2\x96\x81the",  # 5: ASCII (with the word-start mark)
    "冷蔵庫".encode(),  # 6: kanji
    "ます".encode(),  # 7: kana, more probable than 6
    "ＡＢ".encode(),  # 8: full-width
    b"ing",  # 9: ASCII, more probable than 5
    "é".encode(),  # 10: Latin-1, not ASCII
]
SCORES = np.array([0, 0, 0, 0, -9.0, -8.0, -12.0, -5.0, -11.0, -3.0, -7.0], dtype=np.float32)


def test_specials_then_japanese_then_ascii_then_the_rest_each_most_probable_first() -> None:
    order = row_order(PIECES, SCORES, len(PIECES))
    assert order.tolist() == [0, 1, 2, 3, 7, 8, 6, 9, 5, 10, 4]


def test_rows_beyond_the_vocabulary_come_last() -> None:
    order = row_order(PIECES, SCORES, len(PIECES) + 2)
    assert sorted(order.tolist()) == list(range(len(PIECES) + 2))
    assert order[-2:].tolist() == [11, 12]


def test_japanese_text_reads_few_pages_of_the_bundled_table() -> None:
    weights = E5Weights()
    vocab = weights.vocabulary
    order = row_order(vocab.pieces, vocab.scores, weights.vocab_rows)
    assert sorted(order.tolist()) == list(range(weights.vocab_rows))  # a permutation
    row_of = np.empty_like(order)
    row_of[order] = np.arange(len(order))
    tok = E5Tokenizer(vocab, max_positions=weights.max_positions)
    texts = [
        "query: 新宿店の冷蔵庫が壊れたときの連絡先を教えてください",
        "passage: 2025年12月3日 晴れ。開店前に製氷機の異音を確認し、業者へ修理を依頼した。",
        "query: レジ締めの手順と過不足が出たときの報告方法",
    ]
    ids = np.unique(np.concatenate([np.asarray(tok.content_ids(t)) for t in texts]))
    row_bytes = 192  # 384 dimensions at 4 bits

    def pages(rows: np.ndarray) -> int:
        return len(set((rows * row_bytes // 4096).tolist()))

    assert pages(row_of[ids]) < pages(ids)
    assert (row_of[ids] < 25_000).mean() > 0.9  # the Japanese block is ~21,000 rows

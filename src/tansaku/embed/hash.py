"""A real, deterministic :class:`~tansaku.embed.base.Embedder` for tests and CI (embedder
``provider = "hash"``): hashed char n-grams.

It is not a language model, but texts sharing characters get similar vectors, which is enough
to exercise every code path that handles vectors without loading a model.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

import numpy as np

from tansaku.embed.base import l2_normalize


class HashEmbedder:
    def __init__(self, dim: int = 64) -> None:
        self._dim = dim
        self.calls = 0
        self.texts_embedded = 0

    @property
    def name(self) -> str:
        return f"hash-ngram-{self._dim}"

    @property
    def dim(self) -> int:
        return self._dim

    def _vec(self, text: str) -> np.ndarray:
        v = np.zeros(self._dim, dtype=np.float32)
        t = "".join(text.split())
        grams = [t[i : i + 2] for i in range(max(len(t) - 1, 1))] + list(t)
        for g in grams:
            h = int.from_bytes(hashlib.md5(g.encode("utf-8")).digest()[:4], "little")
            v[h % self._dim] += 1.0 if (h >> 31) & 1 else -1.0
        return v

    def _embed(self, texts: Sequence[str]) -> np.ndarray:
        self.calls += 1
        self.texts_embedded += len(texts)
        if not texts:
            return np.zeros((0, self._dim), dtype=np.float32)
        return l2_normalize(np.stack([self._vec(t) for t in texts]))

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        return self._embed(texts)

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        return self._embed(texts)

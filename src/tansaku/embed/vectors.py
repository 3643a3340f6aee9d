"""Vectors that carry the name of the model that made them.

:class:`~tansaku.embed.cache.CachedEmbedder` returns query vectors as :class:`ModelVectors`
(a plain ``ndarray`` subclass, rows included): the search side learns the model without another
argument, and the embedding-model guard (:mod:`tansaku.collection.guard`) compares it with the
model a collection's vectors came from.
"""

from __future__ import annotations

from typing import Any

import numpy as np


class ModelVectors(np.ndarray):
    """Vectors tagged with the name of the model that made them; slicing and iterating keep
    the tag (``list(arr)`` yields tagged rows)."""

    model: str | None

    def __array_finalize__(self, obj: Any) -> None:
        self.model = getattr(obj, "model", None)


def tag_model(vectors: np.ndarray, model: str) -> ModelVectors:
    """``vectors`` (not copied) as :class:`ModelVectors` of ``model``."""
    tagged = np.asarray(vectors).view(ModelVectors)
    tagged.model = model
    return tagged


def model_of(vector: Any) -> str | None:
    """The model a vector was tagged with (:func:`tag_model`), ``None`` if untagged."""
    model = getattr(vector, "model", None)
    return model if isinstance(model, str) else None

"""Calibrated relevance: the probability that a candidate answers the question, from its
features (``candidates.py``) through a logistic model fitted on public question sets with
off-topic negatives (``bench/fit_answerability.py`` writes ``calibration.json``).

Two variants: ``dense`` for the embedding model the fit was made with (its cosine is a
feature) and ``lexical`` for any other embedder (a remote model's, the tests' hash embedder),
whose cosines mean something else. The same probability ranks hits of different collections
against each other and decides whether the question is answerable at all.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from functools import cache
from importlib import resources

from tansaku.agent.answer.candidates import Candidate, Features

FEATURES = ("dense", "coverage", "plain", "oov", "inv_rank", "relative", "top_axes", "gap")


def vector(f: Features, *, dense: bool) -> list[float]:
    """The model's inputs, in :data:`FEATURES` order (without ``dense`` for the lexical one)."""
    row = [
        f.dense or 0.0,
        f.coverage,
        f.plain,
        f.oov,
        1.0 / f.rank,
        f.relative,
        f.top_axes,
        f.gap,
    ]
    return row if dense else row[1:]


@dataclass(frozen=True)
class Model:
    """A standardised logistic model: ``p = σ(b + Σ w_i (x_i - μ_i) / σ_i)``."""

    names: tuple[str, ...]
    weights: tuple[float, ...]
    bias: float
    mean: tuple[float, ...]
    scale: tuple[float, ...]
    threshold: float
    """The answerability cut: the best candidate must reach it."""

    def probability(self, x: Sequence[float]) -> float:
        z = self.bias + sum(
            w * (v - m) / (s or 1.0)
            for w, v, m, s in zip(self.weights, x, self.mean, self.scale, strict=True)
        )
        return 1.0 / (1.0 + math.exp(-max(-40.0, min(40.0, z))))


@dataclass(frozen=True)
class Calibration:
    embedders: tuple[str, ...]
    """Embedder names the ``dense`` variant was fitted for."""
    dense: Model
    lexical: Model
    fitted_on: str = ""

    def model_for(self, embedder: str) -> tuple[Model, bool]:
        """The variant for an embedder name, and whether it reads the dense cosine."""
        if any(embedder == e or embedder.startswith(e) for e in self.embedders):
            return self.dense, True
        return self.lexical, False


def _model(data: dict[str, object]) -> Model:
    return Model(
        names=tuple(data["names"]),  # type: ignore[arg-type]
        weights=tuple(data["weights"]),  # type: ignore[arg-type]
        bias=float(data["bias"]),  # type: ignore[arg-type]
        mean=tuple(data["mean"]),  # type: ignore[arg-type]
        scale=tuple(data["scale"]),  # type: ignore[arg-type]
        threshold=float(data["threshold"]),  # type: ignore[arg-type]
    )


@cache
def load() -> Calibration:
    """The shipped calibration (``calibration.json`` beside this module)."""
    text = resources.files(__package__).joinpath("calibration.json").read_text("utf-8")
    data = json.loads(text)
    return Calibration(
        embedders=tuple(data["embedders"]),
        dense=_model(data["dense"]),
        lexical=_model(data["lexical"]),
        fitted_on=str(data.get("fitted_on", "")),
    )


def calibrate(
    candidates: Sequence[Candidate],
    embedders: Mapping[str, str],
    calibration: Calibration | None = None,
) -> tuple[list[Candidate], float]:
    """The candidates with their probability, best first (ties keep the collections' order),
    and the answerability threshold: the strictest of the variants used. ``embedders``:
    collection → the embedder its vectors were made with."""
    chosen = calibration or load()
    scored = []
    threshold = 0.0
    for c in candidates:
        model, dense = chosen.model_for(embedders.get(c.collection, ""))
        threshold = max(threshold, model.threshold)
        scored.append(replace(c, probability=model.probability(vector(c.features, dense=dense))))
    scored.sort(key=lambda c: -c.probability)
    return scored, threshold or chosen.lexical.threshold

"""Calibrated relevance: the probability that a candidate answers the question, from its
features (``candidates.py``) through a logistic model fitted on public question sets with
off-topic negatives (``bench/fit_answerability.py`` writes ``calibration.json``).

Two variants: ``dense`` for the embedding model the fit was made with (its cosine is a
feature) and ``lexical`` for any other embedder (a remote model's, the tests' hash embedder),
whose cosines mean something else. The same probability ranks hits of different collections
against each other and decides whether the question is answerable at all.

The features read the fused ranking, so each fusion family has its fit: the file's top level
for ``zscore`` (the default of new collections, with ``dense_gate``), ``fusions.max`` for
collections fused under ``max`` (and ``minmax``, ``rrf``), as collections made before
``zscore`` became the default still are (:func:`fusion_family`).
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import cache
from importlib import resources
from typing import Any

from tansaku.config import FusionConfig, FusionMethod
from tansaku.tools.scope.candidates import Candidate, Features, Retrieved

# ``oov`` and ``n_terms`` are described on every candidate but are no inputs: fitted on
# encyclopedia questions they learn that short questions are off-topic, which a team's short
# keyword questions (「継続ダメージ」「全体強化」) are not.
FEATURES = (
    "spread",
    "coverage",
    "plain",
    "inv_rank",
    "relative",
    "top_axes",
    "gap",
    "missing_top",
    "bigram",
)
DENSE_ONLY = 1
"""The first feature reads the cosine: the lexical variant leaves it out. The cosine itself is
no feature: its level depends on the corpus (short card texts sit near 0.85 for any question),
only its lead over the collection's other candidates carries from one corpus to another."""


def vector(f: Features, *, dense: bool) -> list[float]:
    """The model's inputs, in :data:`FEATURES` order (without ``dense`` for the lexical one)."""
    row = [
        f.spread,
        f.coverage,
        f.plain,
        1.0 / f.rank,
        f.relative,
        f.top_axes,
        f.gap,
        f.missing_top,
        f.bigram,
    ]
    return row if dense else row[DENSE_ONLY:]


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
class Variant:
    rank: Model
    """P(this candidate answers the question): ranks candidates of every collection."""
    answerable: Model
    """P(the question is answerable here), from the best candidate's features, its rank
    probability and its margin over the second: compared with ``answerable.threshold``."""


@dataclass(frozen=True)
class Calibration:
    embedders: tuple[str, ...]
    """Embedder names the ``dense`` variant was fitted for."""
    dense: Variant
    lexical: Variant
    fitted_on: str = ""
    fusions: Mapping[str, Calibration] = field(default_factory=dict)
    """The fits of the other fusion families (``max``), by :func:`fusion_family`."""

    def for_fusion(self, family: str) -> Calibration:
        """The fit of a fusion family: its own where there is one, else this one."""
        return self.fusions.get(family, self)

    def model_for(self, embedder: str) -> tuple[Variant, bool]:
        """The variant for an embedder name, and whether it reads the dense cosine."""
        if any(embedder == e or embedder.startswith(e) for e in self.embedders):
            return self.dense, True
        return self.lexical, False


DEFAULT_FAMILY = "zscore"


def fusion_family(fusion: FusionConfig | None) -> str:
    """``zscore`` for linear fusion of standard scores (the fit at the file's top level) and
    when unknown (``None``), ``max`` for every other fusion."""
    if fusion is None or (
        fusion.method is FusionMethod.LINEAR and fusion.normalization == "zscore"
    ):
        return DEFAULT_FAMILY
    return "max"


def _variant(data: dict[str, dict[str, object]]) -> Variant:
    return Variant(rank=_model(data["rank"]), answerable=_model(data["answerable"]))


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
    return parse(json.loads(text))


def parse(data: dict[str, Any]) -> Calibration:
    """A calibration from its JSON form (``calibration.json``)."""
    return Calibration(
        embedders=tuple(data["embedders"]),
        dense=_variant(data["dense"]),
        lexical=_variant(data["lexical"]),
        fitted_on=str(data.get("fitted_on", "")),
        fusions={str(k): parse(v) for k, v in data.get("fusions", {}).items()},
    )


def calibrate(
    candidates: Sequence[Candidate],
    embedders: Mapping[str, str],
    calibration: Calibration | None = None,
    *,
    fusions: Mapping[str, FusionConfig] | None = None,
) -> tuple[list[Candidate], float]:
    """The candidates with their probability, best first (ties keep the collections' order),
    and the probability that the question is answerable from the best of them.
    ``embedders``: collection → the embedder its vectors were made with; ``fusions``:
    collection → its fusion (default: the default family's)."""
    base = calibration or load()
    fusions = fusions or {}

    def model(collection: str) -> tuple[Variant, bool]:
        fit = base.for_fusion(fusion_family(fusions.get(collection)))
        return fit.model_for(embedders.get(collection, ""))

    scored = []
    for c in candidates:
        variant, dense = model(c.collection)
        p = variant.rank.probability(vector(c.features, dense=dense))
        scored.append(replace(c, probability=p))
    scored.sort(key=lambda c: -c.probability)
    if not scored:
        return scored, 0.0
    top = scored[0]
    variant, dense = model(top.collection)
    margin = top.probability - (scored[1].probability if len(scored) > 1 else 0.0)
    x = [*vector(top.features, dense=dense), top.probability, margin]
    return scored, variant.answerable.probability(x)


def threshold_for(
    embedder: str, calibration: Calibration | None = None, *, fusion: FusionConfig | None = None
) -> float:
    """The answerability cut of the variant an embedder gets under a fusion."""
    variant, _ = (calibration or load()).for_fusion(fusion_family(fusion)).model_for(embedder)
    return variant.answerable.threshold


def threshold_of(found: Retrieved, collection: str) -> float:
    """The answerability cut for ``collection``'s best candidate in a scope search."""
    return threshold_for(found.embedders.get(collection, ""), fusion=found.fusions.get(collection))

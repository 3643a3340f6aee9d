"""Score fusion across retrieval legs (axes). Pure functions over ranked lists.

A *run* is a ranked list of ``(key, score)`` pairs, best first. Keys are document ids when
results are grouped by document, record ids otherwise.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Hashable, Iterable, Mapping, Sequence

Run = Sequence[tuple[Hashable, float]]


def minmax(run: Run) -> dict[Hashable, float]:
    """Scale a run's scores to [0, 1]: ``(s - min) / (max - min)``.

    A run whose scores are all equal maps every key to 1.0 (each is the best the leg found).
    """
    if not run:
        return {}
    scores = [s for _, s in run]
    lo, hi = min(scores), max(scores)
    if hi - lo <= 1e-12:
        return {k: 1.0 for k, _ in run}
    return {k: (s - lo) / (hi - lo) for k, s in run}


def maxnorm(run: Run) -> dict[Hashable, float]:
    """Divide a run's scores by its best score: ``s / max``.

    Unlike min-max, the result does not depend on how deep the run was fetched (the minimum of a
    top-100 list moves with the depth; the maximum does not). A run whose best score is not
    positive falls back to :func:`minmax`.
    """
    if not run:
        return {}
    hi = max(s for _, s in run)
    if hi <= 1e-12:
        return minmax(run)
    return {k: s / hi for k, s in run}


Z_SCALE = 10.0
"""Standard scores are divided by this: a run of ``n`` scores has none above ``sqrt(n - 1)``,
so at the default depth (100 candidates per axis) every normalised score stays below 1 and the
fused score, with weights that sum to 1, does too (``min_score``, the multi-query merge's
``hit_count × 10 + score`` and the displays read it on the scale they always had)."""
Z_TAIL = 1e-4
"""Candidates at or below their run's mean keep ``Z_TAIL × s / max``: ordered by their own
score after every candidate above the mean, and never dropped (a fused score of 0 is)."""


def zscore(run: Run) -> dict[Hashable, float]:
    """Standard scores over the run, floored at 0, a tenth: ``max(0, (s - mean) / std) / 10``,
    plus a tail of ``1e-4 · s / max`` that keeps every candidate positive.

    Each leg is measured against its own list: a result far above the rest of its candidates
    scores high (0.5 or more: five standard deviations), while a leg whose best results do not
    stand out from the rest (a weak leg for this query: no clear winner) gives its best ones
    0.2 or so, so the leg that is sure of something counts more. A run of equal scores (or of
    one key) maps every key to one standard deviation (0.1) plus the tail.
    """
    if not run:
        return {}
    scores = [s for _, s in run]
    n = len(scores)
    mean = sum(scores) / n
    std = (sum((s - mean) ** 2 for s in scores) / n) ** 0.5
    hi = max(scores)
    lo = min(scores)
    if hi > 1e-12:  # the tail: s / max, or (s - min) / (max - min) when no score is positive
        tail, base = Z_TAIL / hi, 0.0
    else:
        tail, base = Z_TAIL / max(hi - lo, 1e-12), lo
    if std <= 1e-12:
        return {k: 1.0 / Z_SCALE + max(0.0, (s - base) * tail) for k, s in run}
    inv = 1.0 / (std * Z_SCALE)
    return {k: max(0.0, (s - mean) * inv) + max(0.0, (s - base) * tail) for k, s in run}


NORMALIZERS = {"minmax": minmax, "max": maxnorm, "zscore": zscore}


def linear_fusion(
    runs: Mapping[str, Run],
    weights: Mapping[str, float],
    *,
    normalization: str = "max",
    scales: Mapping[str, Mapping[Hashable, float]] | None = None,
) -> dict[Hashable, float]:
    """Weighted sum of normalised scores; a key missing from a run scores 0 there.

    ``score(d) = Σ_axis w_axis · f_axis(d) · norm_axis(d)`` with ``norm`` = ``max``
    (``s / max``), ``minmax`` (``(s - min) / (max - min)``) or ``zscore`` (``max(0, (s -
    mean) / std) / 10`` and a small tail, :func:`zscore`); ``f_axis(d)`` is
    ``scales[axis][d]`` (the length weight of a dense axis, ``[fusion] dense_length``), else 1.
    """
    try:
        norm = NORMALIZERS[normalization]
    except KeyError:
        raise ValueError(
            f"normalization must be one of {sorted(NORMALIZERS)}. Currently, it is "
            f"{normalization!r}"
        ) from None
    fused: dict[Hashable, float] = {}
    for axis, run in runs.items():
        w = weights.get(axis, 1.0)
        scale = (scales or {}).get(axis)
        if scale is None:
            for key, s in norm(run).items():
                fused[key] = fused.get(key, 0.0) + w * s
        else:
            for key, s in norm(run).items():
                fused[key] = fused.get(key, 0.0) + w * scale.get(key, 1.0) * s
    return fused


def length_scales(
    dense: Mapping[str, Iterable[tuple[Hashable, int]]],
    legs: int,
    factor: Callable[[int], float],
) -> dict[str, dict[Hashable, float]] | None:
    """The length weight (``[fusion] dense_length``) as :func:`linear_fusion`'s ``scales``:
    per dense axis, each key's ``factor`` of the length of the record that stands for it
    (keys at × 1 left out). None with fewer than two legs: the weight is between legs, so a
    dense axis alone keeps its own ranking."""
    if legs < 2:
        return None
    return {
        axis: {key: f for key, n in pairs if (f := factor(n)) != 1.0}
        for axis, pairs in dense.items()
    }


def gated_weights(
    weights: Mapping[str, float], dense: Collection[str], gate: float, coverage: float
) -> dict[str, float]:
    """The lexical-coverage gate (``[fusion] dense_gate``): the ``dense`` axes' weights times
    ``1 + gate × (1 − coverage)``, the others as they are; ``coverage`` is the share of the
    query's content terms in the best BM25 hit (1: nothing changes)."""
    boost = 1.0 + gate * (1.0 - coverage)
    return {axis: w * boost if axis in dense else w for axis, w in weights.items()}


def rrf_fusion(
    runs: Mapping[str, Run], weights: Mapping[str, float], *, k: int = 60
) -> dict[Hashable, float]:
    """Reciprocal rank fusion with 1-based ranks: ``score(d) = Σ_axis w_axis / (k + rank)``."""
    if k <= 0:
        raise ValueError(f"k must be greater than 0. Currently, k is {k}")
    fused: dict[Hashable, float] = {}
    for axis, run in runs.items():
        w = weights.get(axis, 1.0)
        for rank, (key, _) in enumerate(run, start=1):
            fused[key] = fused.get(key, 0.0) + w / (k + rank)
    return fused

"""Ranking metrics through ranx, over ranked lists of document ids.

Names in our reports and the ranx measure behind each (binary or graded ``qrels``; ``rel`` is the
grade, ``|R|`` the number of relevant documents of the query, ranks are 1-based)::

    ndcg@10      Σ_{i≤10} rel_i / log2(i+1), divided by the same sum for the ideal ranking
    recall@10    |relevant in top 10| / |R|          recall@100  likewise over the top 100
    mrr@10       1 / rank of the first relevant document in the top 10 (0 if none)
    p@10         |relevant in top 10| / 10           r@1         |relevant at rank 1| / |R|

Each metric is averaged over every query of the qrels; a query with no hits scores 0.
``zero_hit_rate`` and latencies are computed by the runner, not here.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence

import numpy as np

from tansaku.errors import MissingExtra

RANX_MEASURES: dict[str, str] = {
    "ndcg@10": "ndcg@10",
    "recall@10": "recall@10",
    "recall@100": "recall@100",
    "mrr@10": "mrr@10",
    "p@10": "precision@10",
    "r@1": "recall@1",
}
METRIC_KEYS: tuple[str, ...] = (
    *RANX_MEASURES,
    "zero_hit_rate",
    "latency_ms_p50",
    "latency_ms_p95",
)

RankedRun = Mapping[str, Sequence[str]]  # query id -> doc ids, best first
Qrels = Mapping[str, Mapping[str, int]]


def _ranx():  # type: ignore[no-untyped-def]
    try:
        import ranx
    except ImportError:  # pragma: no cover - ranx is a dependency of the eval extra
        raise MissingExtra("ranx", "eval", "評価指標の計算") from None
    return ranx


def _ranx_run(run: RankedRun, qids: Sequence[str]) -> dict[str, dict[str, float]]:
    """Rank -> score ``n - i`` so that ranx keeps our order exactly (no ties to re-break)."""
    out: dict[str, dict[str, float]] = {}
    for q in qids:
        docs = list(dict.fromkeys(run.get(q, ())))  # first occurrence wins
        n = len(docs)
        out[q] = {d: float(n - i) for i, d in enumerate(docs)}
    return out


def score_run(qrels: Qrels, run: RankedRun) -> tuple[dict[str, float], dict[str, dict[str, float]]]:
    """Mean and per-query metrics (keys of :data:`RANX_MEASURES`) of ``run`` against ``qrels``.

    Queries without judgements are ignored; judged queries missing from ``run`` score 0.
    """
    ranx = _ranx()
    qids = [q for q, rel in qrels.items() if any(g > 0 for g in rel.values())]
    if not qids:
        raise ValueError("qrels has no query with a relevant document")
    ranked = _ranx_run(run, qids)
    if not any(ranked.values()):  # nothing found for any query (ranx refuses an empty run)
        zero = dict.fromkeys(RANX_MEASURES, 0.0)
        return dict(zero), {q: dict(zero) for q in qids}
    rq = ranx.Qrels({q: {d: int(g) for d, g in qrels[q].items() if g > 0} for q in qids})
    rr = ranx.Run(ranked)
    measures = list(RANX_MEASURES.values())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # numba's uint64 -> int64 cast notice
        per = ranx.evaluate(rq, rr, measures, return_mean=False, make_comparable=True)
    if len(measures) == 1:  # pragma: no cover - ranx returns a bare array for one measure
        per = {measures[0]: per}
    order = list(rq.keys())  # ranx's query order for the per-query arrays
    per_query: dict[str, dict[str, float]] = {q: {} for q in order}
    means: dict[str, float] = {}
    for ours, theirs in RANX_MEASURES.items():
        values = np.asarray(per[theirs], dtype=float)
        means[ours] = float(values.mean())
        for q, v in zip(order, values, strict=True):
            per_query[q][ours] = float(v)
    return means, per_query


def percentile(values: Sequence[float], p: float) -> float:
    """The ``p``-th percentile (linear interpolation, numpy's default); 0.0 for no values."""
    if not values:
        return 0.0
    return float(np.percentile(np.asarray(values, dtype=float), p))


__all__ = ["METRIC_KEYS", "RANX_MEASURES", "percentile", "score_run"]

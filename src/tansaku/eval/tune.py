"""``tansaku tune``: fit a collection's fusion (axis weights and the way scores are combined)
on the team's own judged queries, and change the config only when the fit is better than the
current config beyond noise.

Each judged query is searched once per axis alone (the engine's own axes, synonyms and dates;
no expansion and no retry, so a leg is the leg); the legs are then fused again in memory for
every candidate setting, as the engine fuses them (``tansaku.search.fusion``). The estimate is
k-fold cross-validated — the setting is chosen on the other folds' queries and scored on the
held-out ones — and compared query by query with the current config on the same queries; a
bootstrap of the paired differences gives the 95% interval. "Better beyond noise" means the
whole interval is above zero.
"""

from __future__ import annotations

import hashlib
import itertools
import math
import random
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, replace
from functools import cached_property
from typing import Any

from tansaku.config import (
    DEFAULT_DENSE_GATE,
    DEFAULT_DENSE_LENGTH,
    DEFAULT_DENSE_LENGTH_MAX,
    DEFAULT_DENSE_LENGTH_POWER,
    Axis,
    AxisMode,
    CollectionConfig,
    FusionConfig,
    FusionMethod,
)
from tansaku.errors import InvalidRequest
from tansaku.search.fusion import gated_weights, length_scales, linear_fusion, rrf_fusion

DEPTH = 100
"""Documents each axis returns per query (the pool the fusion ranks)."""
AT = 10
BOOTSTRAP = 2000
SEED = 20251211
Runs = Mapping[str, Sequence[tuple[Hashable, float]]]
Lengths = Mapping[str, Mapping[Hashable, int]]
"""Axis → document → the BM25 length of the record the axis found (``[fusion] dense_length``)."""


@dataclass(frozen=True)
class Setting:
    """A fusion to try: the method, its normalisation or k, and one weight per axis."""

    method: FusionMethod
    normalization: str
    k: int
    weights: tuple[tuple[str, float], ...]
    dense_gate: float = 0.0
    dense: tuple[str, ...] = ()
    """The dense axes, which ``dense_gate`` weighs up where the query's coverage is low."""
    dense_length: float = 0.0
    dense_length_power: float = DEFAULT_DENSE_LENGTH_POWER
    dense_length_max: float = DEFAULT_DENSE_LENGTH_MAX

    def label(self) -> str:
        rrf = self.method is FusionMethod.RRF
        how = f"rrf k={self.k}" if rrf else f"linear {self.normalization}"
        if not rrf and self.dense_gate > 0:
            how += f" gate={self.dense_gate:g}"
        if not rrf and self.dense_length > 0:
            how += f" length={self.dense_length:g}"
        weights = " ".join(f"{n}={w:g}" for n, w in self.weights)
        return f"{how} / {weights}"

    @cached_property
    def fusion(self) -> FusionConfig:
        """The setting as a collection's ``[fusion]`` (built once: :meth:`fuse` runs per query)."""
        return FusionConfig(
            method=self.method,
            k=self.k,
            normalization=self.normalization,
            dense_gate=self.dense_gate,
            dense_length=self.dense_length,
            dense_length_power=self.dense_length_power,
            dense_length_max=self.dense_length_max,
        )

    def fuse(
        self, runs: Runs, coverage: float = 1.0, lengths: Lengths | None = None
    ) -> list[Hashable]:
        """The ranking of ``runs`` under this setting; ``coverage``: the query's lexical
        coverage (``[fusion] dense_gate``, :func:`collect_coverage`); ``lengths``: the dense
        axes' record lengths (``[fusion] dense_length``, :func:`collect_runs`)."""
        weights = dict(self.weights)
        if self.method is FusionMethod.LINEAR and self.dense_gate > 0:
            weights = gated_weights(weights, self.dense, self.dense_gate, coverage)
        if self.method is FusionMethod.RRF:
            fused = rrf_fusion(runs, weights, k=self.k)
        else:
            scales = None
            if self.dense_length > 0 and lengths:
                dense = {a: lengths.get(a, {}).items() for a in self.dense}
                scales = length_scales(dense, len(runs), self.fusion.length_factor)
            fused = linear_fusion(runs, weights, normalization=self.normalization, scales=scales)
        return [key for key, _ in sorted(fused.items(), key=lambda kv: (-kv[1], str(kv[0])))]

    def apply(self, config: CollectionConfig) -> CollectionConfig:
        weights = dict(self.weights)
        axes = tuple(replace(a, weight=weights.get(a.name, a.weight)) for a in config.axes)
        return replace(config, axes=axes, fusion=self.fusion)


def current_setting(config: CollectionConfig) -> Setting:
    f = config.fusion
    weights = tuple((a.name, a.weight) for a in config.axes)
    return Setting(
        method=f.method,
        normalization=f.normalization,
        k=f.k,
        weights=weights,
        dense_gate=f.dense_gate,
        dense=_dense(config.axes),
        dense_length=f.dense_length,
        dense_length_power=f.dense_length_power,
        dense_length_max=f.dense_length_max,
    )


def _dense(axes: Sequence[Axis]) -> tuple[str, ...]:
    return tuple(a.name for a in axes if a.mode is AxisMode.DENSE)


def _simplex(n: int, step: float) -> list[tuple[float, ...]]:
    units = round(1 / step)
    out = []
    for combo in itertools.product(range(units + 1), repeat=n):
        if sum(combo) == units:
            out.append(tuple(round(c * step, 4) for c in combo))
    return out


def settings(axes: Sequence[Axis]) -> list[Setting]:
    """The grid: every weight split in steps of 0.1 (0.25 beyond three axes) under linear
    fusion with each normalisation (zscore with the lexical-coverage gate and the length
    weight, with the gate alone, and with neither), and under RRF (k 60)."""
    names = [a.name for a in axes]
    dense = _dense(axes)
    step = 0.1 if len(names) <= 3 else 0.25
    grid = _simplex(len(names), step)
    out = []
    linear = FusionMethod.LINEAR
    for w in grid:
        pairs = tuple(zip(names, w, strict=True))
        gate = DEFAULT_DENSE_GATE
        out.append(Setting(linear, "zscore", 60, pairs, gate, dense, DEFAULT_DENSE_LENGTH))
        out.append(Setting(linear, "zscore", 60, pairs, gate, dense))
        out.append(Setting(linear, "zscore", 60, pairs, 0.0, dense))
        out.append(Setting(linear, "max", 60, pairs, 0.0, dense))
        out.append(Setting(linear, "minmax", 60, pairs, 0.0, dense))
        out.append(Setting(FusionMethod.RRF, "max", 60, pairs, 0.0, dense))
    return out


def ndcg(ranked: Sequence[Hashable], relevant: Mapping[str, int], at: int = AT) -> float:
    """nDCG@``at`` with graded relevance (gain 2^g - 1)."""
    dcg = sum(
        (2 ** relevant.get(str(d), 0) - 1) / math.log2(i + 2) for i, d in enumerate(ranked[:at])
    )
    ideal = sorted(relevant.values(), reverse=True)[:at]
    best = sum((2**g - 1) / math.log2(i + 2) for i, g in enumerate(ideal))
    return dcg / best if best > 0 else 0.0


@dataclass(frozen=True)
class TuneReport:
    collection: str
    queries: int
    folds: int
    current: Setting
    best: Setting
    current_ndcg: float
    """The current config's mean nDCG@10 over every judged query."""
    cv_ndcg: float
    """The tuned setting's held-out mean nDCG@10 (each query scored by a setting chosen
    without it)."""
    delta: float
    low: float
    high: float
    """The 95% bootstrap interval of the mean paired difference, tuned − current."""
    in_sample: float
    """The best setting's mean over every query (optimistic: chosen on them)."""
    fold_choices: tuple[str, ...]

    @property
    def better(self) -> bool:
        return self.low > 0

    def to_dict(self) -> dict[str, Any]:
        return {
            "collection": self.collection,
            "queries": self.queries,
            "folds": self.folds,
            "current": self.current.label(),
            "best": self.best.label(),
            "current_ndcg@10": round(self.current_ndcg, 4),
            "cv_ndcg@10": round(self.cv_ndcg, 4),
            "delta": round(self.delta, 4),
            "ci95": [round(self.low, 4), round(self.high, 4)],
            "in_sample_ndcg@10": round(self.in_sample, 4),
            "better": self.better,
            "fold_choices": list(self.fold_choices),
        }

    def summary(self) -> str:
        lines = [
            f"コレクション「{self.collection}」: 判定つきクエリ {self.queries}件、"
            f"{self.folds}分割の交差検証",
            f"現在の設定: {self.current.label()} — nDCG@10 {self.current_ndcg:.4f}",
            f"調整した設定(検証): nDCG@10 {self.cv_ndcg:.4f}"
            f"(差 {self.delta:+.4f}、95%区間 {self.low:+.4f}〜{self.high:+.4f})",
            f"全クエリで選んだ設定: {self.best.label()}(選んだクエリ自身での nDCG@10 "
            f"{self.in_sample:.4f}、楽観的な値)",
        ]
        if self.better:
            lines.append("区間がすべて 0 より上なので、現在の設定より良いと言えます。")
        else:
            lines.append(
                "区間が 0 をまたぐ(または下にある)ので、現在の設定より良いとは言えません。"
                "設定は変えません。判定つきクエリを増やすと差がはっきりします。"
            )
        return "\n".join(lines)


def _fold(qid: str, folds: int) -> int:
    return int(hashlib.sha256(qid.encode("utf-8")).hexdigest(), 16) % folds


def _mean(values: Sequence[float]) -> float:
    return sum(values) / len(values) if values else 0.0


def tune(
    collection: str,
    config: CollectionConfig,
    runs: Mapping[str, Runs],
    qrels: Mapping[str, Mapping[str, int]],
    *,
    folds: int = 5,
    coverage: Mapping[str, float] | None = None,
    lengths: Mapping[str, Lengths] | None = None,
) -> TuneReport:
    """Cross-validated choice of a fusion setting for ``runs`` (query id → axis → ranked
    ``(doc id, score)``), judged by ``qrels``; ``coverage``: each query's lexical coverage
    (:func:`collect_coverage`; 1 where missing); ``lengths``: each query's record lengths
    (:func:`collect_runs`; × 1 where missing)."""
    cov = coverage or {}
    lens = lengths or {}
    qids = [q for q in runs if qrels.get(q)]
    if len(qids) < 2:
        raise InvalidRequest("調整には正解つきのクエリが2件以上必要です")
    folds = max(2, min(folds, len(qids)))
    grid = settings(config.axes)
    current = current_setting(config)
    scores = {
        s: {q: ndcg(s.fuse(runs[q], cov.get(q, 1.0), lens.get(q)), qrels[q]) for q in qids}
        for s in [*grid, current]
    }
    fold_of = {q: _fold(q, folds) for q in qids}
    if len(set(fold_of.values())) < 2:  # hashing put every query in one fold
        fold_of = {q: i % folds for i, q in enumerate(qids)}
    held: dict[str, float] = {}
    choices = []
    for f in range(folds):
        train = [q for q in qids if fold_of[q] != f]
        test = [q for q in qids if fold_of[q] == f]
        if not test or not train:
            continue
        chosen = max(grid, key=lambda s: (_mean([scores[s][q] for q in train]), s is current))
        choices.append(chosen.label())
        held.update({q: scores[chosen][q] for q in test})
    best = max(grid, key=lambda s: _mean([scores[s][q] for q in qids]))
    diffs = [held[q] - scores[current][q] for q in held]
    rng = random.Random(SEED)
    means = sorted(
        _mean([diffs[rng.randrange(len(diffs))] for _ in diffs]) for _ in range(BOOTSTRAP)
    )
    return TuneReport(
        collection=collection,
        queries=len(qids),
        folds=folds,
        current=current,
        best=best,
        current_ndcg=_mean([scores[current][q] for q in qids]),
        cv_ndcg=_mean(list(held.values())),
        delta=_mean(diffs),
        low=means[int(0.025 * len(means))],
        high=means[int(0.975 * len(means)) - 1],
        in_sample=_mean([scores[best][q] for q in qids]),
        fold_choices=tuple(choices),
    )


def collect_runs(
    ts: Any,
    collection: str,
    queries: Mapping[str, str],
    *,
    team: str,
    depth: int = DEPTH,
    lengths: dict[str, dict[str, dict[Hashable, int]]] | None = None,
) -> dict[str, dict[str, list[tuple[Hashable, float]]]]:
    """Query id → axis → the axis alone's ranked ``(doc id, score)``: each query searched once
    per axis of ``collection`` (its synonyms and dates; no expansion, retry or rerank).
    ``lengths``, when given, is filled with query id → axis → document → the BM25 length of the
    record the axis found (what the length weight reads)."""
    config = ts.collection(collection).config
    out: dict[str, dict[str, list[tuple[Hashable, float]]]] = {}
    for qid, text in queries.items():
        legs: dict[str, list[tuple[Hashable, float]]] = {}
        sizes: dict[str, dict[Hashable, int]] = {}
        for axis in config.axes:
            result = ts.search(
                text,
                collection=collection,
                team=team,
                top_k=depth,
                axes=(replace(axis, weight=1.0),),
                group_by_doc=True,
                min_score=0.0,
                expand=False,
                retry=False,
                rerank=False,
            )
            legs[axis.name] = [
                (h.doc_id, h.axes[axis.name].score) for h in result.hits if axis.name in h.axes
            ]
            sizes[axis.name] = {
                h.doc_id: h.axes[axis.name].length for h in result.hits if axis.name in h.axes
            }
        out[qid] = legs
        if lengths is not None:
            lengths[qid] = sizes
    return out


def collect_coverage(
    ts: Any, collection: str, queries: Mapping[str, str], *, team: str
) -> dict[str, float]:
    """Query id → its lexical coverage in ``collection`` (the share of its content terms in the
    best BM25 hit, ``[fusion] dense_gate``): one search each with the collection's axes."""
    gate = FusionConfig(dense_gate=DEFAULT_DENSE_GATE)
    out = {}
    for qid, text in queries.items():
        result = ts.search(
            text,
            collection=collection,
            team=team,
            top_k=1,
            fusion=gate,
            expand=False,
            retry=False,
            rerank=False,
        )
        found = result.plan.stage.lexical_coverage
        out[qid] = 1.0 if found is None else found
    return out


def tune_collection(
    ts: Any, collection: str, judgements: Any, *, team: str, folds: int = 5
) -> TuneReport:
    """:func:`tune` over a collection of the workspace and a loaded judgement file
    (:func:`tansaku.eval.load_dataset`: documents named by id or title)."""
    from tansaku.eval.runner import resolve_qrels

    config = ts.collection(collection).config
    qrels = resolve_qrels(ts, judgements, collection, team)
    lengths: dict[str, dict[str, dict[Hashable, int]]] = {}
    runs = collect_runs(ts, collection, judgements.queries, team=team, lengths=lengths)
    coverage = collect_coverage(ts, collection, judgements.queries, team=team)
    return tune(collection, config, runs, qrels, folds=folds, coverage=coverage, lengths=lengths)


def write_setting(ts: Any, collection: str, setting: Setting) -> CollectionConfig:
    """Save ``setting`` into the collection's config (its records are not touched)."""
    new = setting.apply(ts.collection(collection).config)
    with ts.writing(collection, config=new, lazy=True):
        pass
    return new

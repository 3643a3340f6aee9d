"""Run one search: retrieve per axis -> aggregate by document -> fuse -> threshold -> top_k."""

from __future__ import annotations

import time
import uuid
from collections.abc import Hashable, Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from tansaku.collection import Collection
from tansaku.config import Axis, AxisMode, FusionConfig, FusionMethod
from tansaku.embed.cache import CachedEmbedder
from tansaku.search.fusion import Run, linear_fusion, rrf_fusion
from tansaku.search.types import AxisScore, Hit, SearchRequest, SearchResult
from tansaku.store.base import Filter, ScoredRecord
from tansaku.store.sparse import query_vector
from tansaku.text import get_analyzer, normalize

_FUSERS = {
    FusionMethod.LINEAR: lambda runs, weights, f: linear_fusion(
        runs, weights, normalization=f.normalization
    ),
    FusionMethod.RRF: lambda runs, weights, f: rrf_fusion(runs, weights, k=f.k),
}


def _axis_filter(base: Filter, axis: Axis) -> Filter:
    if not axis.fields:
        return base
    fields = axis.fields if not base.fields else tuple(f for f in axis.fields if f in base.fields)
    return replace(base, fields=fields or ("\x00none",))


def _group(hits: Sequence[ScoredRecord], by_doc: bool) -> list[tuple[Hashable, ScoredRecord]]:
    """Best hit per key (document or record), best first."""
    best: dict[Hashable, ScoredRecord] = {}
    for h in hits:
        key = h.record.doc_id if by_doc else h.record.id
        if key not in best or h.score > best[key].score:
            best[key] = h
    return sorted(best.items(), key=lambda kv: -kv[1].score)


def search(
    collection: Collection, request: SearchRequest, embedder: CachedEmbedder | None
) -> SearchResult:
    """Search one collection for the request's tenant. See :class:`SearchRequest`."""
    cfg = collection.config
    axes = request.axes or cfg.axes
    fusion = request.fusion or cfg.fusion
    top_k = request.top_k or cfg.top_k
    min_score = cfg.min_score if request.min_score is None else request.min_score
    by_doc = cfg.group_by_doc if request.group_by_doc is None else request.group_by_doc
    candidates = max(request.candidates or cfg.candidates, top_k)
    timings: dict[str, float] = {}
    t0 = time.perf_counter()

    normalized = normalize(request.query)
    terms: list[str] = []
    sparse = None
    if any(a.mode is AxisMode.BM25 for a in axes):
        terms = get_analyzer(cfg.split_mode).terms(request.query)
        sparse = query_vector(terms)
    t1 = time.perf_counter()
    timings["analyze"] = (t1 - t0) * 1000
    qvec: np.ndarray | None = None
    if any(a.mode is AxisMode.DENSE for a in axes):
        if embedder is None:
            raise ValueError("dense axes need an embedder")
        qvec = embedder.embed_queries([normalized or request.query])[0]
    t2 = time.perf_counter()
    timings["embed"] = (t2 - t1) * 1000

    runs: dict[str, list[tuple[Hashable, ScoredRecord]]] = {}
    for axis in axes:
        flt = _axis_filter(request.filter, axis)
        if axis.mode is AxisMode.BM25:
            assert sparse is not None
            hits = collection.store.search_sparse(
                request.tenant, sparse, filter=flt, limit=candidates
            )
        else:
            assert qvec is not None
            hits = collection.store.search_dense(request.tenant, qvec, filter=flt, limit=candidates)
        runs[axis.name] = _group(hits, by_doc)
    t3 = time.perf_counter()
    timings["retrieve"] = (t3 - t2) * 1000

    weights = {a.name: a.weight for a in axes}
    score_runs: dict[str, Run] = {
        name: [(key, h.score) for key, h in run] for name, run in runs.items()
    }
    fused = _FUSERS[fusion.method](score_runs, weights, fusion)
    ranked = sorted(fused.items(), key=lambda kv: (-kv[1], str(kv[0])))
    per_axis: dict[str, dict[Hashable, tuple[int, ScoredRecord]]] = {
        name: {key: (rank, h) for rank, (key, h) in enumerate(run, start=1)}
        for name, run in runs.items()
    }
    hits_out: list[Hit] = []
    for key, score in ranked:
        if score < min_score or score <= 0:
            continue
        axes_info: dict[str, AxisScore] = {}
        best: ScoredRecord | None = None
        best_rank = 10**9
        for name, table in per_axis.items():
            if key in table:
                rank, h = table[key]
                axes_info[name] = AxisScore(rank=rank, score=h.score)
                if rank < best_rank:  # ties: the first axis in config order explains the hit
                    best, best_rank = h, rank
        assert best is not None
        hits_out.append(
            Hit(doc_id=best.record.doc_id, score=score, record=best.record, axes=axes_info)
        )
        if len(hits_out) >= top_k:
            break
    t4 = time.perf_counter()
    timings["fuse"] = (t4 - t3) * 1000
    timings["total"] = (t4 - t0) * 1000

    plan: dict[str, Any] = {
        "collection": collection.name,
        "tenant": request.tenant,
        "normalized_query": normalized,
        "query_terms": terms,
        "axes": [
            {
                "name": a.name,
                "mode": a.mode.value,
                "fields": list(a.fields),
                "weight": a.weight,
                "candidates": len(runs[a.name]),
            }
            for a in axes
        ],
        "fusion": {"method": fusion.method.value, "k": fusion.k}
        if fusion.method is FusionMethod.RRF
        else {"method": fusion.method.value, "normalization": fusion.normalization},
        "filter": _filter_dict(request.filter),
        "top_k": top_k,
        "min_score": min_score,
        "group_by_doc": by_doc,
        "candidates": candidates,
    }
    return SearchResult(
        query_id=uuid.uuid4().hex,
        query=request.query,
        hits=tuple(hits_out),
        plan=plan,
        timings_ms=timings,
    )


def _filter_dict(f: Filter) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if f.fields:
        out["fields"] = list(f.fields)
    if f.equals:
        out["equals"] = dict(f.equals)
    if f.any_of:
        out["any_of"] = {k: list(v) for k, v in f.any_of.items()}
    if f.date_from:
        out["date_from"] = f.date_from.isoformat()
    if f.date_to:
        out["date_to"] = f.date_to.isoformat()
    if f.doc_ids:
        out["doc_ids"] = list(f.doc_ids)
    return out


__all__ = ["FusionConfig", "search"]

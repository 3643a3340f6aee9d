"""One query against one collection: retrieve per axis -> group by document -> fuse.

Returns every fused candidate, best first, *without text* (records carry id, document, field and
metadata); thresholds, merging across queries, rerank and top_k are the pipeline's business
(``engine.py``), which reads the full records of the hits it keeps with :func:`with_records`.
"""

from __future__ import annotations

import time
from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from operator import itemgetter

import numpy as np

from tansaku.collection import Collection
from tansaku.collection.guard import check_query
from tansaku.config import Axis, AxisMode, FusionConfig, FusionMethod
from tansaku.search.fusion import Run, gated_weights, length_scales, linear_fusion, rrf_fusion
from tansaku.search.types import AxisScore, Hit
from tansaku.store.base import Filter, ScoredRecord
from tansaku.store.sparse import query_vector, term_id
from tansaku.text.functional import QueryWeights

_FUSERS = {
    FusionMethod.LINEAR: lambda runs, weights, f, scales=None: linear_fusion(
        runs, weights, normalization=f.normalization, scales=scales
    ),
    FusionMethod.RRF: lambda runs, weights, f, scales=None: rrf_fusion(runs, weights, k=f.k),
}


@dataclass(frozen=True)
class Retrieval:
    hits: list[Hit]
    candidates: Mapping[str, int]  # per axis, after grouping
    retrieve_ms: float
    fuse_ms: float
    coverage: float | None = None  # lexical coverage of the query (``[fusion] dense_gate``)


def axis_filter(base: Filter, axis: Axis) -> Filter:
    """The request's filter narrowed to the axis' fields (an empty intersection matches nothing)."""
    if not axis.fields:
        return base
    fields = axis.fields if not base.fields else tuple(f for f in axis.fields if f in base.fields)
    return replace(base, fields=fields or ("\x00none",))


def group_best(hits: Sequence[ScoredRecord], by_doc: bool) -> list[tuple[Hashable, ScoredRecord]]:
    """Best hit per key (document or record), best first."""
    best: dict[Hashable, ScoredRecord] = {}
    for h in hits:
        key = h.record.doc_id if by_doc else h.record.id
        if key not in best or h.score > best[key].score:
            best[key] = h
    return sorted(best.items(), key=lambda kv: -kv[1].score)


@dataclass(frozen=True)
class AxisInput:
    """An axis's own query (``SearchRequest.axis_queries``): its terms, vector and text."""

    terms: Sequence[str]
    vector: np.ndarray | None
    text: str
    weights: QueryWeights | None = None
    term_groups: Sequence[tuple[str, ...]] = ()


def retrieve(
    collection: Collection,
    *,
    tenant: str,
    terms: Sequence[str],
    vector: np.ndarray | None,
    axes: Sequence[Axis],
    text: str = "",
    fusion: FusionConfig,
    filter: Filter,
    candidates: int,
    by_doc: bool,
    overrides: Mapping[str, AxisInput] | None = None,
    weights: QueryWeights | None = None,
    term_groups: Sequence[tuple[str, ...]] = (),
) -> Retrieval:
    """Run every axis (BM25 with ``terms``, dense with ``vector``, bigram with ``text``) and
    fuse their rankings; the best ``candidates`` fused keys come back as hits.

    Bigram axes run last and score the documents the other axes found (their sentence units
    only): that keeps their cost independent of the collection's size and, on jsquad-ir,
    changes no ranking (docs/benchmarks.md). Alone, or when the other axes found nothing, a
    bigram axis searches every unit. ``weights`` (the query's functional phrasing,
    :mod:`tansaku.text.functional`) scale BM25 terms and bigrams below 1.
    """
    t0 = time.perf_counter()
    sparse = query_vector(terms, weights.terms if weights else None)
    runs: dict[str, list[tuple[Hashable, ScoredRecord]]] = {}
    for axis in sorted(axes, key=lambda a: a.mode is AxisMode.BIGRAM):  # stable: bigram last
        flt = axis_filter(filter, axis)
        own = (overrides or {}).get(axis.name)
        if axis.mode is AxisMode.BM25:
            found = collection.store.search_sparse(
                tenant,
                query_vector(own.terms, own.weights.terms if own.weights else None)
                if own
                else sparse,
                filter=flt,
                limit=candidates,
                with_text=False,
            )
        elif axis.mode is AxisMode.BIGRAM:
            unit_text, own_weights = (own.text, own.weights) if own else (text, weights)
            found = _search_units(
                collection,
                tenant,
                unit_text,
                flt,
                candidates,
                runs.values(),
                own_weights.grams if own_weights else None,
            )
        else:
            query = own.vector if own and own.vector is not None else vector
            if query is None:
                raise ValueError("dense axes need a query vector")
            check_query(collection, query)  # a vector of the collection's model only
            found = collection.store.search_dense(
                tenant, query, filter=flt, limit=candidates, with_text=False
            )
        runs[axis.name] = group_best(found, by_doc)
    runs = {a.name: runs[a.name] for a in axes}  # config order again (ties, plan)
    t1 = time.perf_counter()

    axis_weights = {a.name: a.weight for a in axes}
    coverage = None
    dense = {a.name for a in axes if a.mode is AxisMode.DENSE}
    if fusion.method is FusionMethod.LINEAR and fusion.dense_gate > 0 and dense:
        coverage = lexical_coverage(
            collection, tenant, axes, runs, terms, overrides, weights, term_groups
        )
        axis_weights = gated_weights(axis_weights, dense, fusion.dense_gate, coverage)
    score_runs: dict[str, Run] = {n: [(k, h.score) for k, h in run] for n, run in runs.items()}
    scales = None
    if fusion.method is FusionMethod.LINEAR and fusion.dense_length > 0:
        lengths = {n: ((k, h.length) for k, h in runs[n]) for n in dense if n in runs}
        scales = length_scales(lengths, len(runs), fusion.length_factor)
    fused = _FUSERS[fusion.method](score_runs, axis_weights, fusion, scales)
    # as many fused keys as each axis fetched: the pipeline never returns more (its top_k is at
    # most ``candidates``), and building hits for up to three times as many keys was a third
    # of the time this function spends
    # best first, ties by key (keys are ids: strings); two sorts with C-level keys, the second
    # stable, instead of a Python key function per candidate
    ranked = sorted(fused.items(), key=itemgetter(0))
    ranked.sort(key=itemgetter(1), reverse=True)
    ranked = ranked[:candidates]
    kept = {key: score for key, score in ranked if score > 0}
    axes_of: dict[Hashable, dict[str, AxisScore]] = {key: {} for key in kept}
    # per kept key: the best-ranked axis with the record's field and metadata (bm25, dense)
    # explains the hit, ties in config order; a unit's bare record (bigram) only when no other
    # axis found the key
    best: dict[Hashable, tuple[tuple[bool, int], ScoredRecord]] = {}
    for name, run in runs.items():  # config order
        for rank, (key, h) in enumerate(run, start=1):
            axes_info = axes_of.get(key)
            if axes_info is None:
                continue
            axes_info[name] = AxisScore(rank, h.score, h.length)
            order = (not h.record.field, rank)
            current = best.get(key)
            if current is None or order < current[0]:
                best[key] = (order, h)
    hits: list[Hit] = []
    for key, score in kept.items():  # fused keys always come from some axis
        rec = best[key][1].record
        hits.append(Hit(doc_id=rec.doc_id, score=score, record=rec, axes=axes_of[key]))
    t2 = time.perf_counter()
    return Retrieval(
        hits=hits,
        candidates={n: len(r) for n, r in runs.items()},
        retrieve_ms=(t1 - t0) * 1000,
        fuse_ms=(t2 - t1) * 1000,
        coverage=coverage,
    )


def lexical_coverage(
    collection: Collection,
    tenant: str,
    axes: Sequence[Axis],
    runs: Mapping[str, Sequence[tuple[Hashable, ScoredRecord]]],
    terms: Sequence[str],
    overrides: Mapping[str, AxisInput] | None = None,
    weights: QueryWeights | None = None,
    term_groups: Sequence[tuple[str, ...]] = (),
) -> float:
    """The share of the query's distinct content terms that the first BM25 axis's best hit
    contains (the term ids its record was indexed with): 1 when the words of the
    question stand in one record, low when lexical matching only found part of them. The
    question's phrasing (「〜したいのですが」「どこに行けば」: the terms ``weights`` weighs
    down) does not count. A synonym group the query matched (``term_groups``: its members'
    terms, which the expansion added to ``terms``) is one word of the question, held when the
    hit holds any member. Without a BM25 axis or content terms: 1 (no lexical evidence to
    doubt); a BM25 axis that found nothing: 0."""
    axis = next((a for a in axes if a.mode is AxisMode.BM25), None)
    if axis is None:
        return 1.0
    own = (overrides or {}).get(axis.name)
    if own:
        terms, weights, term_groups = own.terms, own.weights, own.term_groups
    wanted = set(terms) - set(weights.terms if weights else ())
    if not wanted:
        return 1.0
    run = runs.get(axis.name) or []
    if not run:
        return 0.0
    have = collection.store.term_ids(tenant, run[0][1].record.id)
    words: list[tuple[str, ...]] = [g for g in term_groups if wanted & set(g)]
    grouped = {t for g in words for t in g}
    words += [(t,) for t in sorted(wanted - grouped)]
    return sum(any(term_id(t) in have for t in w) for w in words) / len(words)


def _search_units(
    collection: Collection,
    tenant: str,
    text: str,
    flt: Filter,
    limit: int,
    other_runs: Iterable[Sequence[tuple[Hashable, ScoredRecord]]],
    weights: Mapping[str, float] | None = None,
) -> list[ScoredRecord]:
    if not collection.has_units(tenant):  # never built: an ingest builds them
        return []
    docs = {h.record.doc_id for run in other_runs for _, h in run}
    if docs:  # rescoring: the best half of the candidates is all fusion needs from this axis
        flt = replace(flt, doc_ids=tuple(sorted(docs)))
        limit = max(10, limit // 2)
    if weights:
        return collection.units.search(tenant, text, filter=flt, limit=limit, weights=weights)
    return collection.units.search(tenant, text, filter=flt, limit=limit)


def with_records(collection: Collection, tenant: str, hits: Sequence[Hit]) -> list[Hit]:
    """The hits with their full records (text included), read in one call. Candidates are
    fetched without text (reading and converting ~200 payloads per axis was most of our
    per-query overhead); the pipeline calls this for the hits it returns or reranks. A hit whose
    record is gone (a sentence unit orphaned by an interrupted delete) is dropped."""
    if not hits:
        return []
    found = {r.id: r for r in collection.store.get(tenant, [h.record.id for h in hits])}
    return [h.evolve(record=found[h.record.id]) for h in hits if h.record.id in found]

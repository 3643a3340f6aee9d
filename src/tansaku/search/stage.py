"""One stage of a search: the query (and its expansions) analysed, embedded, retrieved per
axis, merged and thresholded (:func:`run_stage`), over a :class:`ResolvedSearch` — the request
and the collection's config resolved once by :func:`tansaku.search.engine.search`."""

from __future__ import annotations

import time
from concurrent.futures import wait
from dataclasses import dataclass
from typing import Any

from tansaku.collection import Collection, guard
from tansaku.config import Axis, AxisMode, FusionConfig, MergeMethod
from tansaku.search.classify import Classification
from tansaku.search.expand import ExpandContext, finalize
from tansaku.search.merge import QueryHits, merge_hits, merge_rrf, rerank_with_weights
from tansaku.search.plan import AxisPlan, StagePlan, SynonymPlan
from tansaku.search.retrieve import AxisInput, Retrieval, retrieve
from tansaku.search.services import SearchServices
from tansaku.search.types import Hit, SearchRequest
from tansaku.search.variant_pool import variant_pool
from tansaku.store.base import Filter
from tansaku.text import normalize
from tansaku.text.analyzer import Analyzer
from tansaku.text.dates import DateRange, resolve_dates
from tansaku.text.functional import query_weights
from tansaku.text.synonyms import Synonyms


@dataclass(frozen=True)
class Stage:
    number: int
    axes: tuple[Axis, ...]
    min_score: float
    top_k: int
    synonyms: Synonyms
    expand: bool


@dataclass(frozen=True)
class Expanded:
    """A query text as the axes take it: its BM25 terms with the terms of the synonyms it
    matched, the text the dense axes embed (the synonyms' representatives appended) and the
    matched groups' terms (one word of the question each, for the lexical-coverage gate)."""

    terms: list[str]
    dense: str
    groups: tuple[tuple[str, ...], ...] = ()


def with_synonyms(
    text: str,
    synonyms: Synonyms,
    analyzer: Analyzer,
    plan: dict[str, tuple[str, ...]] | None = None,
) -> Expanded:
    """``text`` expanded by ``synonyms``; each match's other members recorded in ``plan``."""
    exp = synonyms.expand(text, analyzer) if synonyms else None
    if exp is None:
        return Expanded(analyzer.query_terms(text), text)
    if plan is not None:
        plan.update((match.term, match.others) for match in exp.matches)
    terms = analyzer.query_terms(text) + list(exp.keyword_terms)
    return Expanded(terms, exp.dense_query or text, exp.term_groups)


@dataclass(frozen=True)
class Variant:
    display: str  # shown in the plan
    text: str  # searched (date expression removed: the date is a filter)


@dataclass(frozen=True, kw_only=True)
class ResolvedSearch:
    """A request merged with its collection's config and checked once: what every stage of
    the search reads (the stages differ only in their :class:`Stage`)."""

    collection: Collection
    request: SearchRequest
    services: SearchServices
    searched: str
    """The query searched: the date expression removed when it became a filter."""
    original_display: str
    date_range: DateRange | None
    classification: Classification
    filter: Filter
    candidates: int
    by_doc: bool
    fusion: FusionConfig
    analyzer: Analyzer


def run_stage(
    resolved: ResolvedSearch, stage: Stage, timings: dict[str, float]
) -> tuple[list[Hit], StagePlan]:
    """Search one stage: the query and its expansions, analysed, embedded and retrieved per
    axis, merged and thresholded; ``timings`` accumulates the milliseconds of each step."""
    collection, request, services = resolved.collection, resolved.request, resolved.services
    searched, original_display = resolved.searched, resolved.original_display
    date_range, classification = resolved.date_range, resolved.classification
    flt, by_doc, fusion = resolved.filter, resolved.by_doc, resolved.fusion
    analyzer = resolved.analyzer
    fusion_candidates = max(resolved.candidates, stage.top_k)
    qcfg = collection.config.query
    t0 = time.perf_counter()
    variants = [Variant(original_display, searched)]
    expanded: list[str] = []
    if stage.expand:
        ctx = ExpandContext(
            date_range=date_range,
            remainder=searched,
            synonyms=stage.synonyms,
            analyzer=analyzer,
            classification=classification,
            max_queries=qcfg.max_queries,
            now=request.now,
        )
        try:
            raw = services.expander.expand(original_display, ctx)
        except Exception:  # an expander failure falls back to the original query
            raw = []
        expanded = finalize(original_display, raw, qcfg.max_queries)
        variants = [Variant(original_display, searched)] + [
            Variant(d, strip_date(d, date_range)) for d in expanded[1:]
        ]
    syn_plan: dict[str, tuple[str, ...]] = {}  # the first position of a term, its last group
    fw = qcfg.functional_weight if request.functional_weight is None else request.functional_weight
    prepared = [(v, with_synonyms(v.text, stage.synonyms, analyzer, syn_plan)) for v in variants]
    weights = [query_weights(v.text, analyzer, fw) if fw < 1.0 else None for v, _ in prepared]
    own = dict(request.axis_queries)  # the original query's per-axis texts
    per_axis = [
        (a.name, own[a.name], with_synonyms(own[a.name], stage.synonyms, analyzer), a.mode)
        for a in stage.axes
        if a.name in own
    ]
    own_weights = {
        name: query_weights(text, analyzer, fw) for name, text, _, _ in per_axis if fw < 1.0
    }
    t1 = time.perf_counter()
    timings["analyze"] += (t1 - t0) * 1000

    vectors: list[Any] = [None] * len(prepared)
    axis_vectors: dict[str, Any] = {}
    if any(a.mode is AxisMode.DENSE for a in stage.axes):
        if services.embedder is None:
            raise ValueError("dense axes need an embedder")
        guard.check_search(collection, services.embedder)  # before a request is spent on it
        own_dense = [(name, e.dense) for name, _, e, mode in per_axis if mode is AxisMode.DENSE]
        texts = [e.dense for _, e in prepared] + [d for _, d in own_dense]
        arr = list(services.embedder.embed_queries([normalize(d) or d for d in texts]))
        vectors = arr[: len(prepared)]
        own_vectors = arr[len(prepared) :]
        axis_vectors = {name: v for (name, _), v in zip(own_dense, own_vectors, strict=True)}
    t2 = time.perf_counter()
    timings["embed"] += (t2 - t1) * 1000
    overrides = {
        name: AxisInput(
            terms=e.terms,
            vector=axis_vectors.get(name),
            text=text,
            weights=own_weights.get(name),
            term_groups=e.groups,
        )
        for name, text, e, _ in per_axis
    }

    def run(i: int) -> Retrieval:
        variant, e = prepared[i]
        return retrieve(
            collection,
            tenant=request.tenant,
            terms=e.terms,
            vector=vectors[i],
            axes=stage.axes,
            text=variant.text,
            fusion=fusion,
            filter=flt,
            candidates=fusion_candidates,
            by_doc=by_doc,
            overrides=overrides if i == 0 else None,
            weights=weights[i],
            term_groups=e.groups,
        )

    results: dict[int, Retrieval] = {}
    timed_out: list[str] = []
    if len(prepared) == 1:
        results[0] = run(0)
    else:  # the variants on the shared pool, the original query here (it always completes)
        deadline = time.monotonic() + qcfg.budget_ms / 1000
        futures = {variant_pool().submit(run, i): i for i in range(1, len(prepared))}
        results[0] = run(0)
        done, pending = wait(futures, timeout=max(0.0, deadline - time.monotonic()))
        for f in done:
            results[futures[f]] = f.result()
        for f in pending:  # left running if started: its result is not waited for
            f.cancel()
            timed_out.append(prepared[futures[f]][0].display)
    for r in results.values():
        timings["retrieve"] += r.retrieve_ms
        timings["fuse"] += r.fuse_ms
    t3 = time.perf_counter()

    runs = [
        QueryHits(
            prepared[i][0].display, [h for h in results[i].hits if h.score >= stage.min_score]
        )
        for i in sorted(results)
    ]
    if len(runs) == 1:
        hits = list(runs[0].hits)
    elif qcfg.merge is MergeMethod.RRF:
        hits = merge_rrf(runs)
    else:
        hits = merge_hits(runs)
    hits = rerank_with_weights(hits, qcfg.source_weights)
    timings["merge"] = timings.get("merge", 0.0) + (time.perf_counter() - t3) * 1000
    plan = StagePlan(
        retry_stage=stage.number,
        expanded_queries=tuple(expanded),
        timed_out_queries=tuple(timed_out),
        synonyms=tuple(SynonymPlan(term, others) for term, others in syn_plan.items()),
        query_terms=tuple(prepared[0][1].terms),
        lexical_coverage=results[0].coverage,
        axes=tuple(
            AxisPlan(
                name=a.name,
                mode=a.mode,
                fields=tuple(a.fields),
                weight=a.weight,
                candidates=results[0].candidates.get(a.name, 0),
                query=own.get(a.name, ""),
            )
            for a in stage.axes
        ),
        min_score=round(stage.min_score, 6),
        top_k=stage.top_k,
        merge=qcfg.merge if len(runs) > 1 else None,
    )
    return hits, plan


def strip_date(display: str, date_range: DateRange | None) -> str:
    if date_range is None:
        return display
    res = resolve_dates(display, date_range.end)
    return (res.remainder if res.range else display) or display

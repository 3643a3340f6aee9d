"""The search pipeline: plan -> expand -> retrieve per query -> merge -> threshold -> rerank ->
top_k, with a staged retry when nothing is found. Every decision lands in ``SearchResult.plan``
(a frozen :class:`~tansaku.search.plan.SearchPlan`, built once from the answering stage's plan).

Stages (the caller's filters — tenant, dates, fields, metadata — are never dropped):
  0. as configured;
  1. add the ``combined`` namespace to axes restricted to fields, ``min_score - 0.05``,
     ``top_k × 2``;
  2. as 1, plus synonyms (the collection's, or every built-in domain) and multi-query expansion.
"""

from __future__ import annotations

import json
import time
import uuid
from concurrent.futures import ThreadPoolExecutor, wait
from dataclasses import dataclass, field, replace
from datetime import date
from typing import Any

from tansaku.collection import Collection, guard
from tansaku.config import Axis, AxisMode, ExpandMode, MergeMethod
from tansaku.embed.cache import CachedEmbedder
from tansaku.errors import InvalidRequest
from tansaku.search.classify import Classification, Classifier, QueryLabel, RuleClassifier
from tansaku.search.events import SearchEventLog
from tansaku.search.expand import ExpandContext, Expander, RuleExpander, finalize
from tansaku.search.filters import resolve_filter
from tansaku.search.limits import check_candidates, check_min_score, check_top_k
from tansaku.search.merge import QueryHits, merge_hits, merge_rrf, rerank_with_weights
from tansaku.search.plan import (
    AxisPlan,
    FilterPlan,
    RerankPlan,
    SearchPlan,
    StagePlan,
    SynonymPlan,
    UnusedDatePlan,
)
from tansaku.search.retrieve import AxisInput, Retrieval, retrieve, with_records
from tansaku.search.types import Hit, SearchRequest, SearchResult
from tansaku.store.base import Filter
from tansaku.text import get_analyzer, normalize
from tansaku.text.dates import DateRange, now_tokyo, resolve_dates
from tansaku.text.functional import query_weights
from tansaku.text.synonyms import Synonyms, builtin_domains, load_synonyms

COMBINED = "combined"
RETRY_MIN_SCORE_STEP = 0.05


@dataclass(frozen=True)
class SearchServices:
    """Everything the pipeline may call besides the collection itself. Frozen: a server's
    threads share one, and plugging in a part means a new one (``dataclasses.replace``,
    ``Tansaku.with_services``), never a change under a running search."""

    embedder: CachedEmbedder | None = None
    classifier: Classifier = field(default_factory=RuleClassifier)
    expander: Expander = field(default_factory=RuleExpander)
    reranker: Any = None  # tansaku.search.rerank.Reranker; None: the collection config's
    events: SearchEventLog | None = None
    # caches, not settings: loaded synonym files, rerankers built from collection configs
    synonyms_cache: dict[tuple[str, ...], Synonyms] = field(default_factory=dict, compare=False)
    rerankers: dict[str, Any] = field(default_factory=dict, compare=False)

    def synonyms(self, collection: Collection, specs: tuple[str, ...]) -> Synonyms:
        key = (str(collection.path), *specs)
        if key not in self.synonyms_cache:
            self.synonyms_cache[key] = load_synonyms(specs, base_dir=collection.path)
        return self.synonyms_cache[key]


@dataclass(frozen=True)
class _Stage:
    number: int
    axes: tuple[Axis, ...]
    min_score: float
    top_k: int
    synonyms: Synonyms
    expand: bool


@dataclass(frozen=True)
class _Variant:
    display: str  # shown in the plan
    text: str  # searched (date expression removed: the date is a filter)


def _has_dates(collection: Collection, tenant: str) -> bool:
    return collection.store.count(tenant, Filter(date_from=date(1900, 1, 1))) > 0


def _with_combined(axes: tuple[Axis, ...], has_combined: bool) -> tuple[Axis, ...]:
    if not has_combined:
        return axes
    return tuple(
        replace(a, fields=(*a.fields, COMBINED)) if a.fields and COMBINED not in a.fields else a
        for a in axes
    )


def search(
    collection: Collection, request: SearchRequest, services: SearchServices
) -> SearchResult:
    """Run the whole pipeline for one request; see the module docstring."""
    t_start = time.perf_counter()
    cfg = collection.config
    qcfg = cfg.query
    axes = tuple(request.axes or cfg.axes)
    fusion = request.fusion or cfg.fusion
    top_k = request.top_k or cfg.top_k
    min_score = cfg.min_score if request.min_score is None else request.min_score
    by_doc = cfg.group_by_doc if request.group_by_doc is None else request.group_by_doc
    candidates = request.candidates or cfg.candidates
    check_top_k(top_k)  # the config's values too
    check_min_score(min_score)
    check_candidates(candidates)
    _check_axis_queries(request, axes)
    analyzer = get_analyzer(cfg.split_mode)
    timings: dict[str, float] = {"analyze": 0.0, "embed": 0.0, "retrieve": 0.0, "fuse": 0.0}

    # -- plan: classification, dates, synonyms -----------------------------------------
    now = request.now or now_tokyo()
    classification: Classification = services.classifier.classify(request.query)
    use_dates = qcfg.dates if request.dates is None else request.dates
    resolution = resolve_dates(request.query, now) if use_dates else None
    date_range: DateRange | None = None
    date_unused: UnusedDatePlan | None = None  # a date expression of the query that did not filter
    flt = resolve_filter(collection, request.tenant, request.filter, request.where)
    if resolution is not None and resolution.range is not None:
        if flt.date_from or flt.date_to:
            date_unused = UnusedDatePlan(resolution.range, "filter")  # the caller's wins
        elif not _has_dates(collection, request.tenant):
            date_unused = UnusedDatePlan(resolution.range, "no_dates")
        else:
            date_range = resolution.range
            flt = replace(flt, date_from=date_range.start, date_to=date_range.end)
    searched = (resolution.remainder if date_range and resolution else "") or request.query
    original_display = resolution.query if date_range and resolution else request.query

    use_synonyms = bool(qcfg.synonyms) if request.synonyms is None else request.synonyms
    base_synonyms = (
        services.synonyms(collection, qcfg.synonyms or tuple(builtin_domains()))
        if use_synonyms
        else Synonyms()
    )
    if request.expand is not None:
        expand = request.expand
    else:
        expand = qcfg.expand is ExpandMode.ALWAYS or (
            qcfg.expand is ExpandMode.AUTO and classification.label is QueryLabel.VAGUE
        )
    has_combined = COMBINED in collection.state.bm25.get(request.tenant, {})
    stages = [_Stage(0, axes, min_score, top_k, base_synonyms, expand)]
    if qcfg.retry if request.retry is None else request.retry:
        retry_axes = _with_combined(axes, has_combined)
        stage_syn = base_synonyms or services.synonyms(collection, tuple(builtin_domains()))
        stages.append(
            _Stage(
                1, retry_axes, min_score - RETRY_MIN_SCORE_STEP, top_k * 2, base_synonyms, expand
            )
        )
        stages.append(
            _Stage(2, retry_axes, min_score - RETRY_MIN_SCORE_STEP, top_k * 2, stage_syn, True)
        )

    hits: list[Hit] = []
    stage_plan = StagePlan()
    for stage in stages:
        hits, stage_plan = _run_stage(
            collection,
            request,
            services,
            stage,
            searched=searched,
            original_display=original_display,
            date_range=date_range,
            classification=classification,
            flt=flt,
            fusion_candidates=max(candidates, stage.top_k),
            by_doc=by_doc,
            fusion=fusion,
            analyzer=analyzer,
            timings=timings,
        )
        if hits:
            break

    # -- rerank ---------------------------------------------------------------------------
    rerank_plan: RerankPlan | None = None
    use_rerank = (
        bool(cfg.rerank.get("enabled", False)) if request.rerank is None else request.rerank
    )
    keep = stage_plan.top_k
    if use_rerank and hits:  # the reranker reads the text of its candidates
        keep = max(keep, int(cfg.rerank.get("max_candidates", 50)))
    t_read = time.perf_counter()
    hits = with_records(collection, request.tenant, hits[:keep])
    timings["read"] = (time.perf_counter() - t_read) * 1000
    if use_rerank and hits:
        hits, rerank_plan = _rerank(services, cfg.rerank, searched, hits)
        timings["rerank"] = rerank_plan.elapsed_ms or 0.0
    hits = hits[: stage_plan.top_k]
    timings["total"] = (time.perf_counter() - t_start) * 1000

    plan = SearchPlan(
        collection=collection.name,
        tenant=request.tenant,
        normalized_query=normalize(request.query),
        classification=classification,
        now=now,
        date_range=date_range,
        date_unused=date_unused,
        stage=stage_plan,
        fusion=fusion,
        filter=FilterPlan.of(flt),
        group_by_doc=by_doc,
        candidates=max(candidates, stage_plan.top_k),
        rerank=rerank_plan,
    )
    result = SearchResult(
        query_id=uuid.uuid4().hex,
        query=request.query,
        hits=tuple(hits),
        plan=plan,
        timings_ms=timings,
    )
    if services.events is not None:
        services.events.emit(result)
    return result


def _check_axis_queries(request: SearchRequest, axes: tuple[Axis, ...]) -> None:
    names = [a.name for a in axes]
    for name, _ in request.axis_queries:
        if name not in names:
            raise InvalidRequest(
                f"軸 {name!r} はこの検索にありません(使える軸: {'、'.join(names)})"
            )


def _run_stage(
    collection: Collection,
    request: SearchRequest,
    services: SearchServices,
    stage: _Stage,
    *,
    searched: str,
    original_display: str,
    date_range: DateRange | None,
    classification: Classification,
    flt: Filter,
    fusion_candidates: int,
    by_doc: bool,
    fusion: Any,
    analyzer: Any,
    timings: dict[str, float],
) -> tuple[list[Hit], StagePlan]:
    qcfg = collection.config.query
    t0 = time.perf_counter()
    variants = [_Variant(original_display, searched)]
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
        variants = [_Variant(original_display, searched)] + [
            _Variant(d, _strip_date(d, date_range)) for d in expanded[1:]
        ]
    syn_plan: dict[str, tuple[str, ...]] = {}  # the first position of a term, its last group
    prepared = []
    fw = qcfg.functional_weight if request.functional_weight is None else request.functional_weight
    for v in variants:
        exp = stage.synonyms.expand(v.text, analyzer) if stage.synonyms else None
        for match in exp.matches if exp is not None else ():
            syn_plan[match.term] = match.others
        terms = analyzer.terms(v.text) + list(exp.keyword_terms if exp else ())
        prepared.append((v, terms, exp.dense_query if exp and exp.dense_query else v.text))
    weights = [query_weights(v.text, analyzer, fw) if fw < 1.0 else None for v, _, _ in prepared]
    own = dict(request.axis_queries)  # the original query's per-axis texts
    per_axis = []
    for a in stage.axes:
        if a.name in own:
            text = own[a.name]
            exp = stage.synonyms.expand(text, analyzer) if stage.synonyms else None
            terms = analyzer.terms(text) + list(exp.keyword_terms if exp else ())
            dense = exp.dense_query if exp and exp.dense_query else text
            per_axis.append((a.name, terms, dense, text, a.mode is AxisMode.DENSE))
    own_weights = {
        name: query_weights(text, analyzer, fw) for name, _, _, text, _ in per_axis if fw < 1.0
    }
    t1 = time.perf_counter()
    timings["analyze"] += (t1 - t0) * 1000

    vectors: list[Any] = [None] * len(prepared)
    axis_vectors: dict[str, Any] = {}
    if any(a.mode is AxisMode.DENSE for a in stage.axes):
        if services.embedder is None:
            raise ValueError("dense axes need an embedder")
        guard.check_search(collection, services.embedder)  # before a request is spent on it
        own_dense = [(name, d) for name, _, d, _, is_dense in per_axis if is_dense]
        texts = [d for _, _, d in prepared] + [d for _, d in own_dense]
        arr = list(services.embedder.embed_queries([normalize(d) or d for d in texts]))
        vectors = arr[: len(prepared)]
        own_vectors = arr[len(prepared) :]
        axis_vectors = {name: v for (name, _), v in zip(own_dense, own_vectors, strict=True)}
    t2 = time.perf_counter()
    timings["embed"] += (t2 - t1) * 1000
    overrides = {
        name: AxisInput(
            terms=terms, vector=axis_vectors.get(name), text=text, weights=own_weights.get(name)
        )
        for name, terms, _, text, _ in per_axis
    }

    def run(i: int) -> Retrieval:
        variant, terms, _ = prepared[i]
        return retrieve(
            collection,
            tenant=request.tenant,
            terms=terms,
            vector=vectors[i],
            axes=stage.axes,
            text=variant.text,
            fusion=fusion,
            filter=flt,
            candidates=fusion_candidates,
            by_doc=by_doc,
            overrides=overrides if i == 0 else None,
            weights=weights[i],
        )

    results: dict[int, Retrieval] = {}
    timed_out: list[str] = []
    if len(prepared) == 1:
        results[0] = run(0)
    else:
        budget = qcfg.budget_ms / 1000
        with ThreadPoolExecutor(max_workers=min(4, len(prepared))) as pool:
            futures = {pool.submit(run, i): i for i in range(len(prepared))}
            done, pending = wait(futures, timeout=budget)
            for f in done:
                results[futures[f]] = f.result()
            for f in pending:
                f.cancel()
                timed_out.append(prepared[futures[f]][0].display)
            if 0 not in results:  # the original query always completes
                results[0] = next(f for f in futures if futures[f] == 0).result()
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
        query_terms=tuple(prepared[0][1]),
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


def _strip_date(display: str, date_range: DateRange | None) -> str:
    if date_range is None:
        return display
    res = resolve_dates(display, date_range.end)
    return (res.remainder if res.range else display) or display


def _rerank(
    services: SearchServices, rcfg: Any, query: str, hits: list[Hit]
) -> tuple[list[Hit], RerankPlan]:
    from tansaku.search.rerank import rerank_candidates, reranker_from_config

    reranker = services.reranker
    if reranker is None:
        key = json.dumps(rcfg, sort_keys=True, default=str)
        if key not in services.rerankers:
            services.rerankers[key] = reranker_from_config(rcfg)
        reranker = services.rerankers[key]
    if reranker is None:
        return hits, RerankPlan(applied=False, reason="リランカーが設定されていません")
    outcome = rerank_candidates(
        reranker,
        query,
        [h.record.text for h in hits],
        max_candidates=int(rcfg.get("max_candidates", 50)),
        budget_s=float(rcfg.get("budget_s", 2.0)),
    )
    plan = RerankPlan(
        applied=outcome.applied,
        reason=outcome.reason,
        model=reranker.name,
        elapsed_ms=round(outcome.elapsed_ms, 3),
    )
    if not outcome.applied:
        return hits, plan
    out = [replace(hits[i], rerank_score=outcome.scores[i]) for i in outcome.order]
    return out, plan

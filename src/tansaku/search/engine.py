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
from dataclasses import replace
from datetime import date
from typing import Any

from tansaku.collection import Collection
from tansaku.config import Axis, ExpandMode
from tansaku.errors import InvalidRequest
from tansaku.search.classify import Classification, QueryLabel
from tansaku.search.filters import resolve_filter
from tansaku.search.limits import check_candidates, check_min_score, check_top_k
from tansaku.search.plan import (
    FilterPlan,
    RerankPlan,
    SearchPlan,
    StagePlan,
    UnusedDatePlan,
)
from tansaku.search.retrieve import with_records
from tansaku.search.services import SearchServices
from tansaku.search.stage import ResolvedSearch, Stage, run_stage
from tansaku.search.suggest import zero_hit_suggestion
from tansaku.search.types import Hit, SearchRequest, SearchResult
from tansaku.store.base import Filter
from tansaku.text import get_analyzer, normalize
from tansaku.text.dates import DateRange, now_tokyo, resolve_dates
from tansaku.text.synonyms import Synonyms, builtin_domains

COMBINED = "combined"
RETRY_MIN_SCORE_STEP = 0.05


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
    stages = [Stage(0, axes, min_score, top_k, base_synonyms, expand)]
    if qcfg.retry if request.retry is None else request.retry:
        retry_axes = _with_combined(axes, has_combined)
        stage_syn = base_synonyms or services.synonyms(collection, tuple(builtin_domains()))
        stages.append(
            Stage(1, retry_axes, min_score - RETRY_MIN_SCORE_STEP, top_k * 2, base_synonyms, expand)
        )
        stages.append(
            Stage(2, retry_axes, min_score - RETRY_MIN_SCORE_STEP, top_k * 2, stage_syn, True)
        )

    resolved = ResolvedSearch(
        collection=collection,
        request=request,
        services=services,
        searched=searched,
        original_display=original_display,
        date_range=date_range,
        classification=classification,
        filter=flt,
        candidates=candidates,
        by_doc=by_doc,
        fusion=fusion,
        analyzer=analyzer,
    )
    hits: list[Hit] = []
    stage_plan = StagePlan()
    filter_empty = False
    for stage in stages:
        hits, stage_plan = run_stage(resolved, stage, timings)
        if hits:
            break
        if stage.number == 0 and not flt.is_empty():
            filter_empty = collection.store.count(request.tenant, flt) == 0
            if filter_empty:  # the retries relax scores and words, never the filter
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
        filter_empty=filter_empty,
    )
    suggestion = None
    if not hits:  # what was tried and what to try next, in Japanese
        empty = not collection.has_records(request.tenant)
        suggestion = zero_hit_suggestion(request.query, plan, analyzer, empty=empty)
    result = SearchResult(
        query_id=uuid.uuid4().hex,
        query=request.query,
        hits=tuple(hits),
        plan=plan,
        timings_ms=timings,
        suggestion=suggestion,
        versions=collection.versions,
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

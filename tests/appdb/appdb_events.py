"""SEARCH_EVENT dicts shaped like ``tansaku.search.events.build_event`` output."""

from __future__ import annotations

from typing import Any


def search_event(
    query_id: str,
    query: str,
    *,
    label: str = "clear",
    zero_hit: bool = False,
    tenant: str | None = None,
    collection: str = "cards",
) -> dict[str, Any]:
    scores = [] if zero_hit else [0.82, 0.61, 0.4]
    return {
        "event": "SEARCH_EVENT",
        "query_id": query_id,
        "ts": "2025-08-25T09:00:00.000+00:00",
        "collection": collection,
        "tenant": tenant,
        "query": query,
        "normalized_query": query,
        "classification": {"label": label, "confidence": 0.9},
        "expanded_queries": [query, query + " バウンス"],
        "synonyms": {"手札に戻す": ["バウンス"]},
        "axes": [{"name": "effect", "mode": "dense", "weight": 0.6}],
        "namespaces": ["effect_1", "effect_combined"],
        "retry_stage": 1 if zero_hit else 0,
        "min_score": 0.35 if zero_hit else 0.4,
        "top_k": 10,
        "top5_scores": scores,
        "top5_doc_ids": [f"card{i}" for i in range(len(scores))],
        "hit_count": len(scores),
        "zero_hit": zero_hit,
        "rerank": None,
        "timings_ms": {"total": 12.5},
    }

"""Merging the results of several queries, and the result utilities of the restaurant design.

``hits``: group by (source_type, doc_id); ``final = hit_count × 10 + max_similarity`` (a document
found by more of the queries ranks first; similarity breaks ties), with ``avg_similarity`` kept.
``rrf``: reciprocal rank fusion across the queries' rankings (1-based, k = 60).
``merge_simple``: duplicates removed, no scoring (each document once, where it first appears).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

from tansaku.search.types import Hit


@dataclass(frozen=True)
class QueryHits:
    query: str
    hits: Sequence[Hit]


def _key(hit: Hit) -> tuple[str, str]:
    return (str(hit.record.metadata.get("source_type", "")), hit.doc_id)


def merge_hits(runs: Sequence[QueryHits], *, hit_weight: float = 10.0) -> list[Hit]:
    """``final_score = hit_count × hit_weight + max_similarity`` per (source_type, doc_id)."""
    grouped: dict[tuple[str, str], list[tuple[str, Hit]]] = defaultdict(list)
    for run in runs:
        for hit in run.hits:
            grouped[_key(hit)].append((run.query, hit))
    merged: list[Hit] = []
    for found in grouped.values():
        _, best = max(found, key=lambda qh: qh[1].score)
        sims = [h.score for _, h in found]
        queries = tuple(dict.fromkeys(q for q, _ in found))
        merged.append(
            replace(
                best,
                score=len(queries) * hit_weight + best.score,
                matched_queries=queries,
                max_similarity=best.score,
                avg_similarity=sum(sims) / len(sims),
            )
        )
    merged.sort(key=lambda h: (-h.score, h.doc_id))
    return merged


def merge_rrf(runs: Sequence[QueryHits], *, k: int = 60) -> list[Hit]:
    """``final_score = Σ_query 1 / (k + rank)`` per (source_type, doc_id), ranks from 1."""
    scores: dict[tuple[str, str], float] = defaultdict(float)
    best: dict[tuple[str, str], Hit] = {}
    queries: dict[tuple[str, str], list[str]] = defaultdict(list)
    sims: dict[tuple[str, str], list[float]] = defaultdict(list)
    for run in runs:
        for rank, hit in enumerate(run.hits, start=1):
            key = _key(hit)
            scores[key] += 1.0 / (k + rank)
            queries[key].append(run.query)
            sims[key].append(hit.score)
            if key not in best or hit.score > best[key].score:
                best[key] = hit
    merged = [
        replace(
            best[key],
            score=scores[key],
            matched_queries=tuple(dict.fromkeys(queries[key])),
            max_similarity=max(sims[key]),
            avg_similarity=sum(sims[key]) / len(sims[key]),
        )
        for key in scores
    ]
    merged.sort(key=lambda h: (-h.score, h.doc_id))
    return merged


def merge_simple(runs: Sequence[QueryHits], *, top_k: int | None = None) -> list[Hit]:
    """Each (source_type, doc_id) once, in the order the queries first found it (query by
    query, rank by rank), its hit and score as that query returned them; at most ``top_k``."""
    if top_k is not None and top_k < 1:
        raise ValueError(f"top_k は 1 以上にしてください(現在: {top_k})")
    seen: dict[tuple[str, str], Hit] = {}
    for run in runs:
        for hit in run.hits:
            seen.setdefault(_key(hit), replace(hit, matched_queries=(run.query,)))
    unique = list(seen.values())
    return unique if top_k is None else unique[:top_k]


def filter_by_threshold(hits: Sequence[Hit], min_similarity: float) -> list[Hit]:
    """Keep hits whose similarity (the per-query fused score) reaches ``min_similarity``."""
    return [h for h in hits if (h.max_similarity or h.score) >= min_similarity]


def group_by_source_type(hits: Sequence[Hit]) -> dict[str, list[Hit]]:
    out: dict[str, list[Hit]] = defaultdict(list)
    for h in hits:
        out[str(h.record.metadata.get("source_type", ""))].append(h)
    return dict(out)


def rerank_with_weights(hits: Sequence[Hit], weights: Mapping[str, float]) -> list[Hit]:
    """Multiply each score by its source type's weight (missing types: 1.0) and re-sort.

    e.g. ``{"daily_report": 1.0, "bbs_post": 0.8, "bbs_comment": 0.6}``.
    """
    if not weights:
        return list(hits)
    out = []
    for h in hits:
        weight = weights.get(str(h.record.metadata.get("source_type", "")), 1.0)
        out.append(h if weight == 1.0 else h.evolve(score=h.score * weight))
    out.sort(key=lambda h: (-h.score, h.doc_id))
    return out


def preview(text: str, width: int = 100) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def enhance_with_metadata(hits: Sequence[Hit], *, width: int = 100) -> list[dict[str, object]]:
    """Display rows: rank, source label, date/store/author, percentage similarity, preview."""
    labels = {
        "daily_report": "日報",
        "bbs_post": "掲示板",
        "bbs_comment": "掲示板コメント",
        "manual": "マニュアル",
        "lab_note": "実験ノート",
        "card": "カード",
    }
    rows = []
    for rank, h in enumerate(hits, start=1):
        meta = h.record.metadata
        st = str(meta.get("source_type", ""))
        sim = h.max_similarity if h.max_similarity is not None else h.score
        rows.append(
            {
                "rank": rank,
                "source": labels.get(st, st or "文書"),
                "title": meta.get("title", h.doc_id),
                "date": meta.get("date", ""),
                "store": meta.get("store", ""),
                "author": meta.get("author", ""),
                "similarity": f"{sim * 100:.2f}%",
                "hit_count": len(h.matched_queries) or 1,
                "final_score": f"{h.score:.2f}",
                "preview": preview(h.record.text, width),
            }
        )
    return rows

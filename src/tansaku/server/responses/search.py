"""``POST /api/search``: the JSON of ``tansaku search --json`` (``SearchResult.to_dict``, the
plan's keys in ``tansaku.search.plan``)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field


class AxisRank(BaseModel):
    rank: int
    score: float


class Hit(BaseModel):
    """ヒットした記録(関連度順)。axes は軸ごとの順位とスコア(その軸で見つかった軸だけ)。"""

    doc_id: str
    id: str
    field: str
    score: float
    text: str
    metadata: dict[str, Any]
    axes: dict[str, AxisRank]
    matched_queries: list[str] | None = Field(
        default=None, description="展開した検索文のうち、この記録を見つけたもの"
    )
    hit_count: int | None = None
    max_similarity: float | None = None
    avg_similarity: float | None = None
    rerank_score: float | None = None


class Classification(BaseModel):
    label: str = Field(description="clear, vague, manual, statistics, table, greeting")
    confidence: float


class DateSpan(BaseModel):
    from_: str = Field(alias="from")
    to: str


class DateFilter(BaseModel):
    from_: str | None = Field(alias="from")
    to: str | None
    source: str = Field(description="query(検索文の日付表現)か filter(指定されたフィルター)")
    expression: str | None = None


class DateUnused(DateSpan):
    expression: str
    reason: str = Field(description="filter(指定された日付が優先)か no_dates(日付のある記録がない)")


class AxisPlan(BaseModel):
    name: str
    mode: str
    fields: list[str]
    weight: float
    candidates: int
    query: str | None = Field(default=None, description="この軸だけの検索文(axis_queries)")


class FusionPlan(BaseModel):
    method: str
    k: int | None = None
    normalization: str | None = None
    dense_gate: float | None = Field(
        default=None, description="意味の軸の補強: 重み × (1 + dense_gate × (1 − 語の網羅率))"
    )
    lexical_coverage: float | None = Field(
        default=None, description="質問の語のうち BM25 の最上位の記録に含まれる割合"
    )
    dense_length: float | None = Field(
        default=None,
        description="この語数より短い記録ほど意味の軸の点を重くする(最大 dense_length_max 倍)",
    )


class FilterPlan(BaseModel):
    fields: list[str] | None = None
    equals: dict[str, Any] | None = None
    any_of: dict[str, list[str]] | None = None
    where: list[str] | None = None
    date_from: str | None = None
    date_to: str | None = None
    doc_ids: list[str] | None = None


class RerankPlan(BaseModel):
    applied: bool
    reason: str
    model: str | None = None
    elapsed_ms: float | None = None


class SearchPlan(BaseModel):
    """検索が決めたことすべて(範囲、検索文の理解、日付、リトライ段階、融合、フィルター、再順位付け)。"""

    collection: str
    tenant: str
    normalized_query: str
    classification: Classification
    date_range: DateSpan | None
    date_filter: DateFilter | None
    date_unused: DateUnused | None
    now: str
    retry_stage: int
    expanded_queries: list[str]
    timed_out_queries: list[str]
    synonyms: dict[str, list[str]]
    query_terms: list[str]
    axes: list[AxisPlan]
    min_score: float
    top_k: int
    merge: str | None
    fusion: FusionPlan
    filter: FilterPlan
    group_by_doc: bool
    candidates: int
    rerank: RerankPlan | None
    filter_empty: bool = Field(
        default=False,
        description="絞り込み条件に当てはまる記録がない(再試行は条件を緩めないので省きました)",
    )


class Suggestion(BaseModel):
    """0件のときだけ: 試したこと、次に試すこと、そのまま検索できる言い換え(日本語)。"""

    message: str
    tried: list[str] = Field(description="この検索がすでに試したこと(再試行・同義語・言い換え)")
    tips: list[str] = Field(description="条件の変え方(期間・絞り込み・最低スコア・言い換え)")
    queries: list[str] = Field(description="要点の語だけにした検索文など、そのまま検索できる候補")


class SearchResponse(BaseModel):
    """`tansaku search --json` と同じ JSON。query_id はフィードバック(POST /api/feedback)で使う。"""

    query_id: str
    query: str
    hits: list[Hit]
    plan: SearchPlan
    timings_ms: dict[str, float]
    suggestion: Suggestion | None = Field(default=None, description="0件のときの提案")

"""The search tools of the restaurant design (``000_…txt``): past cases (daily reports, bulletin
posts and comments), manuals, the collections, and the current time. Outputs follow the design's
JSON shapes; previews, not whole documents."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from datetime import date
from typing import Annotated, Any

from tansaku.search.types import Hit, SearchResult
from tansaku.store.base import Filter
from tansaku.text.dates import now_tokyo
from tansaku.tools.spec import ToolError, ToolScope, tool

PREVIEW_CHARS = 300
SOURCE_LABELS = {
    "daily_report": "日報",
    "bbs_post": "掲示板",
    "bbs_comment": "掲示板コメント",
    "manual": "マニュアル",
}


def _collection(scope: ToolScope, role: str, what: str) -> str:
    name = scope.collections.get(role)
    if not name:
        raise ToolError(f"{what}のコレクションが設定されていません")
    return name


def _search(
    scope: ToolScope,
    role: str,
    what: str,
    query: str,
    *,
    top_k: int,
    most: int,
    flt: Filter | None = None,
    expand: bool = False,
) -> SearchResult:
    """A search of the scope's ``role`` collection (:meth:`ToolScope.search`), ``top_k`` kept
    to 1..``most``."""
    name = _collection(scope, role, what)
    return scope.search(query, name, top_k=max(1, min(top_k, most)), filter=flt, expand=expand)


def _day(value: str | None, what: str) -> date | None:
    if not value:
        return None
    try:
        return date.fromisoformat(value)
    except ValueError:
        raise ToolError(f"{what}「{value}」は YYYY-MM-DD で指定してください") from None


def _preview(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= PREVIEW_CHARS else flat[:PREVIEW_CHARS] + "…"


def _cosine(hit: Hit, dense: frozenset[str]) -> float:
    """The hit's similarity to the query: its best cosine on a dense axis, else the engine's
    ``max_similarity`` over expanded queries, else its fused score (a keyword-only
    collection has no cosine)."""
    scores = [a.score for name, a in hit.axes.items() if name in dense]
    if scores:
        return max(scores)
    return hit.max_similarity if hit.max_similarity is not None else hit.score


def _similarity(hit: Hit, dense: frozenset[str] = frozenset()) -> str:
    return f"{max(0.0, min(1.0, _cosine(hit, dense))) * 100:.2f}%"


def _dense_axes(scope: ToolScope, name: str) -> frozenset[str]:
    from tansaku.config import AxisMode

    axes = scope.client.collection(name).config.axes
    return frozenset(a.name for a in axes if a.mode is AxisMode.DENSE)


PAST_CASES = (
    "過去の実績データ(日報、掲示板の投稿・コメント)を検索します。\n"
    "使う場面: 「2025-12-09のクレーム内容」「新宿店の冷蔵庫の故障」のように、"
    "何を探すかがはっきりした質問。\n"
    "使わない場面: 「昨日の問題」のような曖昧な質問(expand_and_search_cases)、"
    "手順や規則(search_manual)、"
    "件数や率(get_claim_statistics)。\n"
    "引数: query(検索文。"
    "日付表現はそのままでよい), source_types(daily_report / "
    "bbs_post / "
    "bbs_comment で絞る), date_from・date_to(YYYY-MM-DD), top_k(件数、"
    "既定5)。\n"
    '例: {"query": "料理の温度が低いというクレーム"} / '
    '{"query": "冷蔵庫の故障", "source_types": ["daily_report"]} / '
    '{"query": "クレーム", "date_from": "2025-12-01", "date_to": "2025-12-09"}'
)


@tool("search_past_cases", PAST_CASES)
def search_past_cases(
    scope: ToolScope,
    query: Annotated[str, "検索する内容(日本語)"],
    source_types: Annotated[list[str] | None, "daily_report / bbs_post / bbs_comment"] = None,
    date_from: Annotated[str | None, "日付の下限 YYYY-MM-DD"] = None,
    date_to: Annotated[str | None, "日付の上限 YYYY-MM-DD"] = None,
    top_k: Annotated[int, "返す件数(1〜20)"] = 5,
) -> list[dict[str, Any]]:
    flt = Filter(
        any_of={"source_type": tuple(source_types)} if source_types else {},
        date_from=_day(date_from, "date_from"),
        date_to=_day(date_to, "date_to"),
    )
    result = _search(scope, "reports", "日報", query, top_k=top_k, most=20, flt=flt)
    return _cases(result.hits, _dense_axes(scope, _collection(scope, "reports", "日報")))


EXPAND = (
    "曖昧な質問を複数の具体的な検索に展開して、過去の実績データ(日報・掲示板)を検索します。\n"
    "使う場面: 「昨日の問題」「最近の状況」のように、何を探すかがはっきりしない質問。\n"
    "使わない場面: 探すものがはっきりした質問(search_past_cases)、手順(search_manual)。\n"
    "引数: query(質問そのまま), source_types(daily_report / bbs_post / bbs_comment で絞る), "
    "top_k(件数、既定10)。\n"
    "結果の hit_count は展開したクエリのうち何個で見つかったか、final_score は "
    "hit_count × 10 + max_similarity(複数のクエリで見つかったものが上)。\n"
    '例: {"query": "昨日の問題"} / {"query": "最近の新宿店の様子"} / '
    '{"query": "先週のトラブル", "top_k": 5, "source_types": ["bbs_post"]}'
)


@tool("expand_and_search_cases", EXPAND)
def expand_and_search_cases(
    scope: ToolScope,
    query: Annotated[str, "質問(日本語、そのまま)"],
    top_k: Annotated[int, "返す件数(1〜20)"] = 10,
    source_types: Annotated[list[str] | None, "daily_report / bbs_post / bbs_comment"] = None,
) -> dict[str, Any]:
    flt = Filter(any_of={"source_type": tuple(source_types)} if source_types else {})
    name = _collection(scope, "reports", "日報")
    result = _search(scope, "reports", "日報", query, top_k=top_k, most=20, flt=flt, expand=True)
    dense = _dense_axes(scope, name)
    results = _cases(result.hits, dense)
    for row, hit in zip(results, result.hits, strict=True):  # the design's merge fields
        count = len(hit.matched_queries) or 1
        best = max(0.0, min(1.0, _cosine(hit, dense)))
        row["hit_count"] = count
        row["max_similarity"] = f"{best * 100:.2f}%"
        row["final_score"] = f"{count * 10 + best:.2f}"
        del row["similarity"]
    results.sort(key=lambda r: (-float(r["final_score"]), r["rank"]))
    for rank, row in enumerate(results, 1):
        row["rank"] = rank
    return {
        "original_query": query,
        "expanded_queries": list(result.plan.stage.expanded_queries or [query]),
        "source_types": sorted({str(h.record.metadata.get("source_type")) for h in result.hits}),
        "results": results,
    }


def _ranked(
    hits: Sequence[Hit], dense: frozenset[str], head: Callable[[Mapping[str, Any]], dict[str, Any]]
) -> list[dict[str, Any]]:
    """One row a hit, best first: its ``rank``, what ``head`` takes from its metadata, then its
    ``doc_id``, ``similarity`` and a preview of its text."""
    return [
        {
            "rank": rank,
            **head(hit.record.metadata),
            "doc_id": hit.doc_id,
            "similarity": _similarity(hit, dense),
            "content": _preview(hit.record.text),
        }
        for rank, hit in enumerate(hits, 1)
    ]


def _case(meta: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "source": SOURCE_LABELS.get(str(meta.get("source_type")), meta.get("source_type")),
        "date": meta.get("date"),
        "store": meta.get("store"),
        "author": meta.get("author"),
        "title": meta.get("title"),
    }


def _cases(hits: Sequence[Hit], dense: frozenset[str] = frozenset()) -> list[dict[str, Any]]:
    return _ranked(hits, dense, _case)


def _manual(meta: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "document": meta.get("title"),
        "category": meta.get("category"),
        "document_type": meta.get("source_type") or "manual",
        "version": meta.get("version"),
        "chapter": meta.get("chapter"),
        "section": meta.get("section"),
    }


MANUAL = (
    "マニュアル・ガイドライン・手順書(衛生管理、接客、オペレーション、"
    "クレーム対応)を検索します。\n"
    "使う場面: 「食中毒の予防方法」「クレーム対応の手順」のように、"
    "決まりや手順を知りたい質問。\n"
    "使わない場面: 実際に起きた出来事(search_past_cases)、"
    "件数や傾向(get_claim_statistics)。\n"
    "引数: query(検索文), category(hygiene / "
    "service / "
    "complaint などの分類で絞る。complaints のような複数形も可), "
    "document_type(manual などの文書の種類で絞る), top_k(件数、既定3)。\n"
    '例: {"query": "食中毒の予防方法"} / '
    '{"query": "お客様が怒っているときの対応", "category": "complaints"} / '
    '{"query": "冷蔵庫の温度管理", "top_k": 5}'
)


@tool("search_manual", MANUAL)
def search_manual(
    scope: ToolScope,
    query: Annotated[str, "検索する内容(日本語)"],
    category: Annotated[str | None, "マニュアルの分類(例: hygiene)"] = None,
    top_k: Annotated[int, "返す件数(1〜10)"] = 3,
    document_type: Annotated[str | None, "文書の種類(例: manual)"] = None,
) -> list[dict[str, Any]]:
    conditions: dict[str, tuple[str, ...]] = {}
    if category:  # the design writes complaints, the data complaint: either names it
        base = category.strip().lower().removesuffix("s")
        conditions["category"] = (category.strip(), base, base + "s")
    if document_type:
        conditions["source_type"] = (document_type.strip(),)
    flt = Filter(any_of=conditions)
    name = _collection(scope, "manuals", "マニュアル")
    result = _search(scope, "manuals", "マニュアル", query, top_k=top_k, most=10, flt=flt)
    return _ranked(result.hits, _dense_axes(scope, name), _manual)


COLLECTIONS = (
    "利用できる検索コレクションの一覧(名前・説明・件数)を返します。\n"
    "使う場面: どのデータを検索できるかを確かめたいとき、"
    "質問に合うコレクションを選ぶとき。\n"
    "使わない場面: 内容の検索そのもの(search_past_cases, search_manual)。\n"
    "引数: なし。\n"
    "例: {} / {} (引数は不要) / {}"
)


@tool("list_rag_collections", COLLECTIONS)
def list_rag_collections(scope: ToolScope) -> dict[str, Any]:
    own = set(scope.collections.values())
    infos = [
        {"name": i.name, "description": i.description, "points": i.points}
        for i in scope.client.collections()
        if i.name in own and scope.team in i.teams
    ]
    return {"collections": infos}


NOW = (
    "現在の日時(東京時間)を返します。\n"
    "使う場面: 「今日」「昨日」「先週」などの日付を具体的な日付にしたいとき。\n"
    "使わない場面: 検索そのもの(search_past_cases は「昨日」をそのまま理解します)。\n"
    "引数: なし。\n"
    "例: {} / {} / {}"
)


@tool("get_current_time", NOW)
def get_current_time(scope: ToolScope) -> dict[str, str]:
    now = scope.now or now_tokyo()
    weekday = "月火水木金土日"[now.weekday()]
    return {
        "datetime": now.isoformat(timespec="seconds"),
        "date": now.date().isoformat(),
        "weekday": f"{weekday}曜日",
        "timezone": "Asia/Tokyo",
    }


SEARCH_TOOLS = (
    search_past_cases,
    expand_and_search_cases,
    search_manual,
    list_rag_collections,
    get_current_time,
)

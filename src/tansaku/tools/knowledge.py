"""The knowledge-base tools: a search of any collection of the scope (the RAG Q&A design,
``003_…txt``), the lab-note search with the collection's axis modes (``001_…txt``) and the
card-effect search (``004_…txt``).

Their argument enums — the collections a model may name, the axis modes of the lab notes — come
from the bound scope when the toolset is built (:func:`knowledge_specs`), never from a fixed list:
a collection configured with other axes gets other modes.
"""

from __future__ import annotations

import copy
import logging
from dataclasses import replace
from typing import Annotated, Any

from tansaku.config import Axis, AxisMode
from tansaku.errors import TansakuError
from tansaku.search.types import Hit
from tansaku.store.base import Filter
from tansaku.tools.search import _collection, _day, _dense_axes, _preview, _similarity
from tansaku.tools.spec import ToolError, ToolScope, ToolSpec, tool

log = logging.getLogger(__name__)
NO_RESULT = "[[NO_RAG_RESULT]]"
ALL_AXES = "all"
MODE_LABELS = {
    AxisMode.BM25: "キーワード一致。試薬名・品番・型番を表記どおりに探す",
    AxisMode.DENSE: "意味の近さ。言い換えた手順や説明も探す",
    AxisMode.BIGRAM: "文字の並び。表記ゆれや分かち書きの違いに強い",
}


def _names(scope: ToolScope) -> list[str]:
    return list(dict.fromkeys(scope.collections.values()))


def _existing(scope: ToolScope) -> list[str]:
    return [n for n in _names(scope) if scope.client.has_collection(n)]


# -- search_rag_knowledge_base ------------------------------------------------------------
KNOWLEDGE = (
    "ナレッジベース(このチームが使えるコレクション)を検索し、質問に関係する文書の抜粋を返します。"
    "Q/A コレクションでは質問と回答の組を返します。\n"
    "使う場面: 社内文書・Q&A・ノートなど、どのツールにも当てはまらない知識を調べるとき。"
    "どのコレクションか分からないときは collection_name を省略すると全コレクションを検索します。\n"
    "使わない場面: 日報・掲示板の出来事(search_past_cases)、マニュアルの手順(search_manual)、"
    "件数や売上の集計(get_claim_statistics など)。検索結果が空のときは"
    f" {NO_RESULT} を返すので、推測で答えず「情報が見つからない」と伝えてください。\n"
    "引数: query(検索文), collection_name(コレクション名。list_rag_collections で確認できる), "
    "top_k(件数、既定5)。\n"
    '例: {"query": "有給休暇の申請方法"} / '
    '{"query": "TEOS の加水分解条件", "collection_name": "notes"} / '
    '{"query": "返品できる期間", "top_k": 3}'
)


@tool("search_rag_knowledge_base", KNOWLEDGE)
def search_rag_knowledge_base(
    scope: ToolScope,
    query: Annotated[str, "検索する内容(日本語)"],
    collection_name: Annotated[str | None, "検索するコレクション(省略: すべて)"] = None,
    top_k: Annotated[int, "返す件数(1〜10)"] = 5,
) -> dict[str, Any]:
    """Every collection of the scope (or the one named) searched with its own config; the hits
    ranked together on the calibrated probability the offline answer engine uses, and — when
    even the best is unlikely to answer the query — no result rather than the nearest ones."""
    from tansaku.tools.scope import Question, calibrate, search_scope, threshold_of

    names = _names(scope)
    if collection_name is not None and collection_name not in names:
        raise ToolError(
            f"コレクション「{collection_name}」は使えません。使えるコレクション: "
            + (", ".join(names) or "なし")
        )
    targets = [collection_name] if collection_name else _existing(scope)
    if not targets:
        raise ToolError("検索できるコレクションがありません")
    for name in targets:
        if not scope.client.has_collection(name):
            raise ToolError(f"コレクション「{name}」はまだ作られていません")
    k = max(1, min(top_k, 10))
    found = search_scope(scope, Question.of(query, scope.now), targets, per_collection=k)
    ranked, answerable = calibrate(found.candidates, found.embedders, fusions=found.fusions)
    enough = bool(ranked) and answerable >= threshold_of(found, ranked[0].collection)
    merged = (
        [_knowledge_item(c.collection, c.hit, c.probability) for c in ranked[:k]] if enough else []
    )
    for rank, item in enumerate(merged, 1):
        item["rank"] = rank
    out: dict[str, Any] = {"query": query, "collections": targets, "results": merged}
    if not merged:
        out["no_result"] = NO_RESULT
        out["message"] = f"「{query}」に関する情報はナレッジベースに見つかりませんでした"
    return out


def _knowledge_item(collection: str, hit: Hit, probability: float) -> dict[str, Any]:
    meta = hit.record.metadata
    item: dict[str, Any] = {
        "rank": 0,
        "collection": collection,
        "doc_id": hit.doc_id,
        "title": meta.get("title"),
        "field": hit.record.field,
        "similarity": f"{probability * 100:.0f}%",
    }
    for key in ("date", "author", "store", "chapter", "section", "source_doc_id"):
        if meta.get(key):
            item[key] = meta[key]
    if meta.get("question") and meta.get("answer"):  # a generated Q/A pair (tansaku.agent.qa)
        item["question"] = _preview(str(meta["question"]))
        item["answer"] = _preview(str(meta["answer"]))
    else:
        item["content"] = _preview(hit.record.text)
    return item


# -- the lab-note search ------------------------------------------------------------------
NOTES = (
    "実験ノート(目的・材料・方法・結果)を検索します。検索の観点(mode)を選べます:\n"
    "{modes}\n"
    "使う場面: 「TEOS を使ったシリカ薄膜の作り方」「品番 SA-1021 を使った実験」"
    "「同じ方法で別の材料を試したノート」のように、実験の材料・方法・結果を探すとき。"
    "材料名や品番で探すなら {first}、手順の似たノートなら意味で探す観点、迷ったら {all}。\n"
    "使わない場面: 日報・マニュアル・カードなど実験ノート以外(それぞれの検索ツール)。\n"
    "引数: query(検索文), material_query(材料・品番だけを並べた検索文: キーワードの軸が使う), "
    "method_query(手順を言い換えた検索文: 方法の意味の軸が使う), mode(観点、既定 {all}), "
    "date_from・date_to(実験日 YYYY-MM-DD), author(担当者), top_k(件数、既定5)。\n"
    '例: {{"query": "TEOS を使ったシリカ薄膜の作り方"}} / '
    '{{"query": "TEOS を使ったシリカ薄膜の作り方", "material_query": "TEOS エタノール", '
    '"method_query": "ゾルをディップコートして焼成する"}} / '
    '{{"query": "SA-1021", "mode": "{first}"}} / '
    '{{"query": "加熱して氷で冷やし残存活性を測る", "mode": "{last}"}}'
)


@tool("search_lab_notes", NOTES)
def search_lab_notes(
    scope: ToolScope,
    query: Annotated[str, "検索する内容(材料名・品番・手順・目的など)"],
    mode: Annotated[str, "検索の観点(軸の名前、または all = すべての軸を合わせる)"] = ALL_AXES,
    date_from: Annotated[str | None, "実験日の下限 YYYY-MM-DD"] = None,
    date_to: Annotated[str | None, "実験日の上限 YYYY-MM-DD"] = None,
    author: Annotated[str | None, "担当者の名前"] = None,
    top_k: Annotated[int, "返す件数(1〜10)"] = 5,
    material_query: Annotated[str | None, "材料・品番の検索文(キーワードの軸)"] = None,
    method_query: Annotated[str | None, "手順の検索文(方法の意味の軸)"] = None,
) -> dict[str, Any]:
    name = _role(scope, "notes", "実験ノート")
    axes = scope.client.collection(name).config.axes
    chosen = _axes_for(mode, axes)
    own = _axis_queries(chosen, material_query, method_query)
    flt = Filter(
        equals={"author": author} if author else {},
        date_from=_day(date_from, "date_from"),
        date_to=_day(date_to, "date_to"),
    )
    result = scope.search(
        query, name, top_k=max(1, min(top_k, 10)), filter=flt, axes=chosen, axis_queries=own
    )
    results = []
    dense = frozenset(a.name for a in chosen if a.mode is AxisMode.DENSE)
    for rank, hit in enumerate(result.hits, 1):
        meta = hit.record.metadata
        results.append(
            {
                "rank": rank,
                "title": meta.get("title"),
                "date": meta.get("date"),
                "author": meta.get("author"),
                "doc_id": hit.doc_id,
                "field": hit.record.field,
                "similarity": _similarity(hit, dense),
                "axes": {
                    a: {"rank": s.rank, "score": round(s.score, 4)} for a, s in hit.axes.items()
                },
                "content": _preview(hit.record.text),
            }
        )
    return {
        "query": query,
        "mode": mode,
        "axes": [
            {"name": a.name, "mode": a.mode.value, "fields": list(a.fields)}
            | ({"query": q} if (q := dict(own).get(a.name)) else {})
            for a in chosen
        ],
        "results": results,
    }


def _axis_queries(
    axes: tuple[Axis, ...], material: str | None, method: str | None
) -> tuple[tuple[str, str], ...]:
    """The material query for the keyword axes, the method query for the dense axes that read
    the same fields as a keyword axis (not the whole-note ``combined`` one), as the lab-notes
    design asks: one query per axis."""
    keyword_fields = {f for a in axes if a.mode is AxisMode.BM25 for f in a.fields}
    out = []
    for a in axes:
        if a.mode is AxisMode.BM25 and material and material.strip():
            out.append((a.name, material.strip()))
        elif (
            a.mode is AxisMode.DENSE
            and method
            and method.strip()
            and set(a.fields) & keyword_fields
        ):
            out.append((a.name, method.strip()))
    return tuple(out)


def _role(scope: ToolScope, role: str, what: str) -> str:
    name = _collection(scope, role, what)
    if not scope.client.has_collection(name):
        raise ToolError(f"{what}のコレクション「{name}」はまだ作られていません")
    return name


def _axes_for(mode: str, axes: tuple[Axis, ...]) -> tuple[Axis, ...]:
    if mode == ALL_AXES:
        return axes
    for axis in axes:
        if axis.name == mode:
            return (axis,)
    valid = ", ".join([ALL_AXES, *(a.name for a in axes)])
    raise ToolError(f"観点(mode)「{mode}」はありません。使える観点: {valid}")


def _modes_text(axes: tuple[Axis, ...]) -> str:
    lines = [f"- {ALL_AXES}: すべての観点を合わせて順位づけ(既定)"]
    for a in axes:
        fields = "・".join(a.fields) if a.fields else "全項目"
        lines.append(f"- {a.name}: {MODE_LABELS.get(a.mode, a.mode.value)}({fields}を対象)")
    return "\n".join(lines)


# -- the card-effect search ---------------------------------------------------------------
CARDS = (
    "カードの効果文・Q&A・フレーバーテキストからカードを検索し、カード名の上位を返します"
    "(1枚につき最もよく合った効果文を添えます)。\n"
    "使う場面: 「回復効果のあるカード」「相手のリーダーにダメージを与えるカード」"
    "「守護を無視して攻撃できるカード」のように、効果からカードを探すとき。"
    "クラス・タイプ・コストで絞れます。\n"
    "使わない場面: カード以外の検索(search_rag_knowledge_base など)、"
    "カード名が分かっていてその効果を知りたいだけのとき(query にカード名を入れて top_k=1)。"
    "結果が0件のときは suggestion の言い換えを試してください。\n"
    "引数: query(効果の説明), card_class(エルフ・ロイヤル・ウィッチ・ドラゴン・ネクロマンサー・"
    "ヴァンパイア・ビショップ・ニュートラル), card_type(フォロワー・スペル・アミュレット), "
    "max_cost(コストの上限), top_k(件数、既定10)。\n"
    '例: {"query": "回復効果のあるカード"} / '
    '{"query": "フィールドのカードを手札に戻す", "card_type": "スペル"} / '
    '{"query": "カードを引く", "card_class": "ウィッチ", "max_cost": 3}'
)
CARD_SUGGESTION = (
    "「{query}」に合うカードは見つかりませんでした。効果の言い回しを変える"
    "(例: バウンス → 手札に戻す、顔 → リーダー)か、クラス・タイプ・コストの条件を外して"
    "もう一度検索してください。"
)


@tool("search_card_effects", CARDS)
def search_card_effects(
    scope: ToolScope,
    query: Annotated[str, "探したい効果の説明(日本語)"],
    card_class: Annotated[str | None, "クラスで絞る(例: エルフ)"] = None,
    card_type: Annotated[str | None, "フォロワー / スペル / アミュレット"] = None,
    max_cost: Annotated[int | None, "コストの上限"] = None,
    top_k: Annotated[int, "返す件数(1〜20)"] = 10,
) -> dict[str, Any]:
    name = _role(scope, "cards", "カード")
    equals: dict[str, str | int | bool] = {}
    if card_class:
        equals["class"] = card_class
    if card_type:
        equals["type"] = card_type
    where = (f"cost<={max_cost}",) if max_cost is not None else ()
    result = scope.search(
        query, name, top_k=max(1, min(top_k, 20)), filter=Filter(equals=equals), where=where
    )
    effects = card_effects(scope, name, [h.doc_id for h in result.hits])
    results = []
    dense = _dense_axes(scope, name)
    for rank, hit in enumerate(result.hits, 1):
        meta = hit.record.metadata
        item: dict[str, Any] = {
            "rank": rank,
            "title": meta.get("title"),
            "card_id": hit.doc_id,
            "doc_id": hit.doc_id,
            "class": meta.get("class"),
            "type": meta.get("type"),
            "cost": meta.get("cost"),
            "rarity": meta.get("rarity"),
            "matched_field": hit.record.field,
            "matched_text": _preview(hit.record.text),
            "similarity": _similarity(hit, dense),
        }
        if hit.doc_id in effects:
            item["content"] = effects[hit.doc_id]
        results.append(item)
    out: dict[str, Any] = {
        "query": query,
        "retry_stage": result.plan.stage.retry_stage,
        "results": results,
    }
    if not results:
        out["suggestion"] = CARD_SUGGESTION.format(query=query)
    return out


def card_effects(scope: ToolScope, collection: str, doc_ids: list[str]) -> dict[str, str]:
    """Each card's joined effect text (its ``combined`` record), read as the scope's team."""
    if not doc_ids:
        return {}
    ids = [f"{d}:combined" for d in doc_ids] + [f"{d}:combined:0" for d in doc_ids]
    try:
        with scope.client.reading(collection) as col:
            records = col.store.get(scope.team, ids)
    except TansakuError:
        return {}
    return {r.doc_id: _preview(r.text) for r in records}


# -- binding to a scope -------------------------------------------------------------------
def _with_enum(spec: ToolSpec, param: str, values: list[str]) -> ToolSpec:
    parameters = copy.deepcopy(spec.parameters)
    parameters["properties"][param]["enum"] = list(values)
    return replace(spec, parameters=parameters)


def _notes_spec(scope: ToolScope) -> ToolSpec | None:
    name = scope.collections.get("notes")
    if not name or not scope.client.has_collection(name):
        return None
    try:
        axes = scope.client.collection(name).config.axes
    except TansakuError:
        log.warning("lab-note tool left out: collection %s cannot be read", name)
        return None
    names = [a.name for a in axes if a.name != ALL_AXES]
    description = NOTES.format(
        modes=_modes_text(axes), first=names[0], last=names[-1], all=ALL_AXES
    )
    spec = replace(search_lab_notes, description=description)
    return _with_enum(spec, "mode", [ALL_AXES, *names])


def knowledge_specs(scope: ToolScope) -> list[ToolSpec]:
    """The knowledge tools for ``scope``: the knowledge-base search (its ``collection_name`` an
    enum of the scope's existing collections), the lab-note search when a ``notes`` collection
    is bound and exists (``mode``: ``all`` and its axes), the card search when ``cards`` is."""
    existing = _existing(scope)
    rag = _with_enum(search_rag_knowledge_base, "collection_name", existing) if existing else None
    specs = [rag or search_rag_knowledge_base]
    notes = _notes_spec(scope)
    if notes is not None:
        specs.append(notes)
    cards = scope.collections.get("cards")
    if cards and scope.client.has_collection(cards):
        specs.append(search_card_effects)
    return specs

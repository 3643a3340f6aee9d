"""A Japanese suggestion for a search that found nothing: what was tried, what to try next.

Built from the search's own plan (:class:`~tansaku.search.plan.SearchPlan`), after every retry
stage came back empty: the retries it ran (wider threshold, more candidates, synonyms), the
synonyms it searched with, the filters and the date of the query that narrowed it, and
rewordings to try — the query's content words alone (particles and question endings dropped),
its first two words, the query without its date expression. ``SearchResult.to_dict`` carries it
as ``suggestion`` (``tansaku search --json``, ``POST /api/search``); the search page shows it.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from typing import Any

from tansaku.search.plan import SearchPlan
from tansaku.text.analyzer import Analyzer

RETRIES = {
    1: "最低スコアを下げ、候補を増やして再検索しました",
    2: "さらに同義語を加えて再検索しました",
}
NOUN_POS = ("名詞", "接頭辞", "接尾辞")
FORMAL_NOUNS = frozenset(
    ("時", "とき", "事", "こと", "物", "もの", "為", "ため", "様", "よう", "所")
)
JOINERS = "-_./"
MAX_WORDS = 2


@dataclass(frozen=True, slots=True)
class Suggestion:
    """``message``: one sentence for a person; ``tried``: what the search already did;
    ``tips``: what to change; ``queries``: rewordings to run as they are."""

    message: str
    tried: tuple[str, ...] = ()
    tips: tuple[str, ...] = ()
    queries: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {
            "message": self.message,
            "tried": list(self.tried),
            "tips": list(self.tips),
            "queries": list(self.queries),
        }


def _words(text: str, analyzer: Analyzer) -> list[str]:
    """The content words of ``text`` as written: runs of nouns with their prefixes and suffixes
    (「冷蔵庫」「新宿店」), a code with its hyphen (「et-3300」); particles, verbs, question
    endings and formal nouns (「とき」「こと」) left out."""
    normalized, tagged = analyzer.query_tagged(text)
    words: list[str] = []
    begin = end = -1
    for t in tagged:
        kind = t.pos[0]
        formal = kind == "名詞" and (t.form in FORMAL_NOUNS or t.term is None)
        noun = kind in NOUN_POS and not formal
        joiner = kind == "補助記号" and normalized[t.begin : t.end] in JOINERS and begin >= 0
        if (noun or joiner) and (begin < 0 or t.begin == end):
            begin = t.begin if begin < 0 else begin
            end = t.end
            continue
        if begin >= 0:
            words.append(normalized[begin:end].strip(JOINERS + " "))
            begin = end = -1
        if noun:
            begin, end = t.begin, t.end
    if begin >= 0:
        words.append(normalized[begin:end].strip(JOINERS + " "))
    return list(dict.fromkeys(_as_written(w, text) for w in words if w))


def _as_written(word: str, text: str) -> str:
    """``word`` (from the normalised text) in the case the user typed it, when found there."""
    at = text.lower().find(word.lower())
    return text[at : at + len(word)] if at >= 0 else word


def _rewordings(query: str, plan: SearchPlan, analyzer: Analyzer) -> list[str]:
    out: list[str] = []
    date = plan.date_range
    base = query
    if date is not None and date.expression and date.expression in query:
        base = query.replace(date.expression, " ").strip()
    words = _words(base, analyzer)
    if words:
        out.append(" ".join(words))
        if len(words) > MAX_WORDS:
            out.append(" ".join(words[:MAX_WORDS]))
    elif base != query and base:
        out.append(base)
    seen = {query.strip(), plan.normalized_query}
    return [q for q in dict.fromkeys(out) if q and q not in seen]


def _filters(plan: SearchPlan) -> list[str]:
    f = plan.filter
    parts: list[str] = list(f.where)
    parts += [f"{k}={v}" for k, v in f.equals]
    parts += [f"{k}={'/'.join(v)}" for k, v in f.any_of]
    if f.fields:
        parts.append(f"項目 {'・'.join(f.fields)}")
    if f.doc_ids:
        parts.append(f"文書 {len(f.doc_ids)} 件")
    return parts


def zero_hit_suggestion(
    query: str, plan: SearchPlan, analyzer: Analyzer, *, empty: bool = False
) -> Suggestion:
    """The suggestion for ``query``, which found nothing under ``plan``; ``empty``: the team
    has no record in the collection at all (then only ingesting helps)."""
    if empty:
        return Suggestion(
            message=f"コレクション「{plan.collection}」にはこのチームのデータがまだありません。"
            "データを取り込んでから検索してください",
            tips=("データ取り込み(tansaku ingest またはデータ取り込みの画面)で記録を登録する",),
        )
    if plan.filter_empty:
        return _nothing_passes(query, plan, analyzer)
    stage = plan.stage
    tried = [RETRIES[n] for n in range(1, stage.retry_stage + 1) if n in RETRIES]
    if stage.synonyms:
        pairs = "、".join(f"{s.term}→{'・'.join(s.others)}" for s in stage.synonyms)
        tried.append(f"同義語を加えて検索しました({pairs})")
    if len(stage.expanded_queries) > 1:
        tried.append("言い換えた検索文: " + "、".join(stage.expanded_queries[1:]))
    tips: list[str] = []
    queries = _rewordings(query, plan, analyzer)
    if queries:
        tips.append("短い言葉で検索してください(助詞や「教えて」などを除き、要点の語だけに)")
    if plan.date_range is not None:
        r = plan.date_range
        tips.append(
            f"「{r.expression}」で期間を {_span(r.start, r.end)} に絞り込みました。"
            "期間を外すか広げてください(例: 「最近」「過去90日」)"
        )
    elif plan.filter.date_from or plan.filter.date_to:
        start = plan.filter.date_from.isoformat() if plan.filter.date_from else ""
        end = plan.filter.date_to.isoformat() if plan.filter.date_to else ""
        tips.append(f"期間の指定({start}〜{end})を外すか広げてください")
    conditions = _filters(plan)
    if conditions:
        tips.append(f"絞り込み条件({'、'.join(conditions)})を外すか緩めてください")
    if stage.min_score > 0:
        tips.append(f"最低スコア({stage.min_score:g})を下げてください")
    if stage.retry_stage == 0:
        tips.append("0件時の再試行を有効にしてください(同義語と広い条件で探し直します)")
    if not stage.synonyms:
        tips.append("別の呼び方(略称・正式名称・型番など)に言い換えてください")
    tips.append("別のコレクションでも検索してください")
    first = f"「{queries[0]}」で検索し直すと見つかるかもしれません" if queries else tips[0]
    return Suggestion(
        message=f"「{query}」に一致する結果はありませんでした。{first}",
        tried=tuple(tried),
        tips=tuple(tips),
        queries=tuple(queries),
    )


def _span(start: date | None, end: date | None) -> str:
    """「2025-12-10」 for one day, 「2025-12-01〜2025-12-07」 for several (an open end empty)."""
    first = start.isoformat() if start else ""
    last = end.isoformat() if end else ""
    return first if first == last else f"{first}〜{last}"


def _nothing_passes(query: str, plan: SearchPlan, analyzer: Analyzer) -> Suggestion:
    """No record of the team passes the search's filter (``plan.filter_empty``): say which
    conditions, and search without the query's date expression if it set the period."""
    dates = plan.date_filter
    parts: list[str] = []
    if dates is not None:
        said = f"「{dates.expression}」: " if dates.expression else ""
        parts.append(f"期間({said}{_span(dates.start, dates.end)})")
    conditions = _filters(plan)
    parts += conditions
    tips: list[str] = []
    queries: list[str] = []
    if plan.date_range is not None:
        queries = _rewordings(query, plan, analyzer)
        tips.append(f"期間の言葉(「{plan.date_range.expression}」)を外して検索してください")
    elif dates is not None:
        tips.append("期間の指定を外すか広げてください")
    if conditions:
        tips.append(f"絞り込み条件({'、'.join(conditions)})を外すか緩めてください")
    tips.append("別のコレクションでも検索してください")
    first = f"「{queries[0]}」で検索すると期間を問わず探せます" if queries else tips[0]
    return Suggestion(
        message=f"コレクション「{plan.collection}」には{'・'.join(parts) or '絞り込み条件'}に"
        f"当てはまる記録がありません。{first}",
        tried=(
            "絞り込み条件に当てはまる記録がないため、再試行(最低スコアを下げ、同義語を加えて探し直す)は省きました",
        ),
        tips=tuple(tips),
        queries=tuple(queries),
    )


__all__ = ["Suggestion", "zero_hit_suggestion"]

"""Answers with no LLM: classify the question, call the matching tools, and answer with
sentences of what they returned (or the figures of a statistic) — never invented text.

- greeting → a short reply; manual → ``search_manual``; statistics → the claim / sales / cash
  statistic over the question's dates (or the last 30 days); vague → ``expand_and_search_cases``;
  clear → ``search_past_cases``; table questions need a model to write SQL and are said so.
- The answer quotes the sentences of the returned passages that share the most content words
  with the question, each with its source; only sources a tool returned are cited.
- No supporting sentence → the answer says so plainly and the question goes to the unanswered
  log (with the tools tried).
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

from tansaku.agent import table_routes
from tansaku.agent.events import Answer, Citation, Event
from tansaku.agent.unanswered import UnansweredLog
from tansaku.search.classify import QueryLabel, classify
from tansaku.text import get_analyzer
from tansaku.text.dates import resolve_dates
from tansaku.tools.registry import Toolset

MAX_SENTENCES = 3
NOT_FOUND = "申し訳ありません。ご質問に答えられる情報が見つかりませんでした。"
GREETING = (
    "こんにちは。日報・掲示板の過去の事例、マニュアル、クレームや売上の集計について"
    "日本語で質問してください。"
)
_SENTENCE = re.compile(r"[^。！？!?\n]+[。！？!?]?")
# words of the question itself, not of what is asked about
_QUESTION_WORDS = frozenset(
    [
        "教える",
        "知る",
        "探す",
        "見る",
        "記録",
        "方法",
        "内容",
        "こと",
        "事",
        "時",
        "為る",
        "有る",
        "居る",
        "成る",
        "下さる",
        "件",
        "何",
        "どう",
        "どの",
        "どんな",
        "欲しい",
        "思う",
        "良い",
        "今日",
        "昨日",
        "一昨日",
        "先週",
        "今週",
        "先月",
        "今月",
        "最近",
    ]
)
_FUTURE = re.compile(r"予測|予想|見込み|見通し|来年|来月|来週|将来|今後")
_CARDS = re.compile(r"カード|フォロワー|スペル|アミュレット|ファンファーレ|ラストワード|進化時")
_NOTES = re.compile(r"実験|ノート|試料|サンプル|測定|合成|培養|焼成|アニール|めっき|成膜")
_CARD_WORDS = frozenset(["カード", "効果", "ある", "持つ", "出来る", "探す", "欲しい"])
MAX_CARDS = 5
# 「レジの現金が合わないことはどれくらいある?」: how often a daily-report measure … is a statistic
_HOW_OFTEN = re.compile(
    r"(売上|客数|現金|過不足|レジ|クレーム).*(どれくらい|どのくらい|何回|何件|頻度|いくら|多い)"
)
_STAT_TOOLS = (
    (re.compile(r"売上|売り上げ|客数"), "get_sales_trend", "売上"),
    (re.compile(r"現金|過不足|レジ"), "get_cash_difference_analysis", "現金過不足"),
    (re.compile(r"."), "get_claim_statistics", "クレーム"),
)


def _content_terms(text: str) -> set[str]:
    return {t for t in get_analyzer().terms(text) if t not in _QUESTION_WORDS}


def _call(tools: Toolset, events: list[Event], name: str, args: dict[str, Any]) -> Any:
    events.append(Event(type="tool_call", tool=name, arguments=args))
    text = tools.call(name, args)
    events.append(Event(type="tool_result", tool=name, text=text[:400]))
    return json.loads(text)


def _extract(
    question: str,
    results: list[dict[str, Any]],
    collection: str,
    alternatives: Sequence[str] = (),
) -> tuple[list[str], list[Citation]]:
    """The best sentences of the first results and their citations. A sentence must cover half
    of the question's content words — or, for an expanded vague question, share one with an
    expansion (トラブル, クレーム … for 問題)."""
    # a date the question names filters the search; no sentence repeats it
    wanted = _content_terms(resolve_dates(question).remainder or question)
    extra = (
        set().union(*(_content_terms(a) for a in alternatives)) - wanted if alternatives else set()
    )
    need = max(1, (len(wanted) + 1) // 2)
    scored: list[tuple[int, int, str, dict[str, Any]]] = []
    for rank, r in enumerate(results[:MAX_SENTENCES]):
        for sentence in _SENTENCE.findall(str(r.get("content", ""))):
            terms = _content_terms(sentence)
            overlap = len(wanted & terms)
            if overlap >= need or (extra and extra & terms):
                scored.append((-(overlap + len(extra & terms)), rank, sentence.strip(), r))
    scored.sort(key=lambda x: (x[0], x[1]))
    lines: list[str] = []
    cites: dict[str, Citation] = {}
    for _, _, sentence, r in scored[:MAX_SENTENCES]:
        title = str(r.get("title") or r.get("document") or "")
        where = [str(x) for x in (r.get("date"), r.get("store")) if x and str(x) not in title]
        lines.append(f"・{sentence}({' '.join([*where, title]).strip()})")
        doc = str(r.get("doc_id", ""))
        cites.setdefault(
            doc,
            Citation(
                doc_id=doc,
                collection=collection,
                title=title,
                date=str(r.get("date") or ""),
                store=str(r.get("store") or ""),
                section=str(r.get("section") or r.get("chapter") or ""),
            ),
        )
    return lines, list(cites.values())


def _statistics(question: str, tools: Toolset, events: list[Event]) -> str | None:
    name, what = next((n, w) for pattern, n, w in _STAT_TOOLS if pattern.search(question))
    found = resolve_dates(question, tools.scope.now).range
    args: dict[str, Any] = (
        {"date_from": found.start.isoformat(), "date_to": found.end.isoformat()}
        if found
        else {"days": 30}
    )
    data = _call(tools, events, name, args)
    if "error" in data:
        return None
    summary = data.get("summary") or {}
    period = data.get("period") or {}
    counted = summary.get("total_reports", summary.get("report_count", 0))
    if not counted:
        return None
    span = f"{period.get('start_date')}〜{period.get('end_date')}({data.get('store', '全店舗')})"
    if name == "get_claim_statistics":
        figures = (
            f"クレーム {summary['claim_count']}件(日報 {summary['total_reports']}件、"
            f"発生率 {summary['claim_rate']})"
        )
    elif name == "get_sales_trend":
        figures = (
            f"売上合計 {summary['total_sales']:,}円、日報1件あたり平均 {summary['avg_sales']:,}円"
            f"(日報 {summary['report_count']}件)"
        )
    else:
        split = data.get("breakdown") or {}
        plus, minus = split.get("plus") or {}, split.get("minus") or {}
        figures = (
            f"過不足のあった日 {summary['diff_count']}件(日報 {summary['total_reports']}件、"
            f"発生率 {summary['diff_rate'] or '0%'})、合計 {summary['total_diff']:+,}円"
            f"(過剰 {plus.get('count', 0)}件 {plus.get('total', 0):+,}円、"
            f"不足 {minus.get('count', 0)}件 {minus.get('total', 0):+,}円)"
        )
    return f"{span}の{what}: {figures}。(表 daily_reports の集計)"


def answer_offline(
    question: str,
    tools: Toolset,
    *,
    unanswered: UnansweredLog | None = None,
) -> Answer:
    """Answer ``question`` with ``tools`` and no language model."""
    events: list[Event] = []
    label = classify(question)
    events.append(
        Event(type="thought", text=f"質問の種類: {label.label.value}({'・'.join(label.reasons)})")
    )
    collection = tools.scope.collections.get("reports", "")
    tried: list[str] = []
    reason = "裏付けとなる記述が見つかりません"
    if label.label is QueryLabel.GREETING:
        return _done(question, GREETING, [], events)
    available = {s.name for s in tools.specs}
    table = (
        None
        if label.label is QueryLabel.STATISTICS
        else table_routes.plan(question, available, tools.scope.now)
    )
    if table is not None:
        tried.append(table.tool)
        text, cites, reason = _table_answer(question, table, tools, events)
        if text is not None:
            return _done(question, text, cites, events)
        collection = table.tool
    elif _FUTURE.search(question):
        reason = "予測や先の予定には答えられません(記録にあることだけを答えます)"
        events.append(Event(type="thought", text=reason))
    elif (
        label.label is QueryLabel.STATISTICS or _HOW_OFTEN.search(question)
    ) and "get_claim_statistics" in available:
        tried.append("statistics")
        text = _statistics(question, tools, events)
        if text is not None:
            return _done(question, text, [], events)
        reason = "集計できる日報がありません(未来の期間・表が未登録を含む)"
    elif label.label is QueryLabel.TABLE and any(
        "sql_query" in s.parameters.get("properties", {}) for s in tools.specs
    ):
        reason = "表の検索(SQL)には言語モデルの設定が必要です"
        events.append(Event(type="thought", text=reason))
    else:
        if "search_card_effects" in available and _CARDS.search(question):
            tried.append("search_card_effects")
            text, cites = _cards_answer(question, tools, events)
            if text is not None:
                return _done(question, text, cites, events)
            name = ""
        elif "search_lab_notes" in available and _NOTES.search(question):
            name, collection = "search_lab_notes", tools.scope.collections.get("notes", "")
        elif label.label is QueryLabel.MANUAL:
            name, collection = "search_manual", tools.scope.collections.get("manuals", "")
        elif label.label is QueryLabel.VAGUE:
            name = "expand_and_search_cases"
        else:
            name = "search_past_cases"
        data = _call(tools, events, name, {"query": question}) if name else {}
        tried.extend([name] if name else [])
        results = data.get("results", data) if isinstance(data, dict) else data
        expanded = data.get("expanded_queries", []) if isinstance(data, dict) else []
        if name and isinstance(results, list):
            lines, cites = _extract(question, results, collection, expanded)
            if lines:
                body = "\n".join(lines)
                return _done(
                    question, f"「{question}」について、次の記述があります。\n{body}", cites, events
                )
    if unanswered is not None:
        unanswered.add(
            team=tools.scope.team,
            collection=collection,
            question=question,
            reason=reason,
            tools=tried,
        )
    events.append(Event(type="answer", text=NOT_FOUND))
    return Answer(
        question=question,
        text=f"{NOT_FOUND}({reason})",
        events=tuple(events),
        unanswered=True,
    )


def _cards_answer(
    question: str, tools: Toolset, events: list[Event]
) -> tuple[str | None, list[Citation]]:
    """The cards whose effect text the card search matched, each with its matched text."""
    data = _call(tools, events, "search_card_effects", {"query": question, "top_k": MAX_CARDS})
    rows = data.get("results") if isinstance(data, dict) else None
    if not rows:
        return None, []
    collection = tools.scope.collections.get("cards", "")
    wanted = _content_terms(question) - _CARD_WORDS
    need = len(wanted) - len(wanted) // 3  # 2 of 2, 2 of 3, 3 of 4 …
    if wanted:  # only cards whose effect says what was asked (回復 …), never the nearest others
        rows = [
            r for r in rows if len(wanted & _content_terms(str(r.get("content") or ""))) >= need
        ]
    if not rows:
        return None, []
    lines: list[str] = []
    cites: list[Citation] = []
    for row in rows[:MAX_CARDS]:
        kind = "・".join(str(row[k]) for k in ("class", "type") if row.get(k))
        cost = f"コスト{row['cost']}" if row.get("cost") is not None else ""
        what = " ".join(p for p in (kind, cost) if p)
        effect = " ".join(str(row.get("content") or row.get("matched_text") or "").split())
        effect = effect if len(effect) <= 80 else effect[:79] + "…"
        title = str(row.get("title") or row.get("doc_id"))
        lines.append(f"・{title}({what}){effect}")
        cites.append(Citation(doc_id=str(row.get("doc_id")), collection=collection, title=title))
    head = f"「{question}」に当てはまる効果のカードです(効果文の検索から{len(lines)}件)。"
    return head + "\n" + "\n".join(lines), cites


def _table_answer(
    question: str, table: table_routes.TableQuery, tools: Toolset, events: list[Event]
) -> tuple[str | None, list[Citation], str]:
    """Rows of a store/event template as a list with their ids; (None, [], reason) when no
    row matches."""
    wanted = "・".join(table.conditions) or "すべて"
    events.append(Event(type="thought", text=f"表の検索: {wanted}(SQL テンプレート)"))
    data = _call(tools, events, table.tool, {"sql_query": table.sql})
    rows = data.get("results") if isinstance(data, dict) else None
    if not rows:
        message = data.get("message") or data.get("error") or "該当する行がありません"
        return None, [], f"{wanted}: {message}"
    kind = "イベント" if table.tool == "search_events" else "店舗"
    lines: list[str] = []
    cites: list[Citation] = []
    for row in rows:
        rid = str(row.get("event_id") or row.get("store_id") or "")
        name = str(row.get("event_name") or row.get("store_name") or rid)
        if table.tool == "search_events":
            when = f"{row.get('start_date')}〜{row.get('end_date')}、{row.get('venue', '')}"
        else:
            when = str(row.get("category") or "")
        about = str(row.get("description") or "")
        about = about if len(about) <= 60 else about[:59] + "…"
        lines.append(f"・{name}({when}){about}({rid})")
        table_name = "events" if table.tool == "search_events" else "stores"
        cites.append(Citation(doc_id=rid, collection=table_name, title=name))
    head = f"{wanted}の{kind}は次のとおりです(表 {cites[0].collection} から{len(rows)}件)。"
    return head + "\n" + "\n".join(lines), cites, ""


def _done(question: str, text: str, cites: list[Citation], events: list[Event]) -> Answer:
    events.append(Event(type="answer", text=text))
    return Answer(question=question, text=text, citations=tuple(cites), events=tuple(events))

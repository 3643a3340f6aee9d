"""Answers with no language model — never invented text, only what the workspace holds.

- A greeting gets a short reply; a question about future events is declined.
- A question with conditions on a registered table (stores, events) runs an SQL template; a
  question about counts, trends or amounts in the daily reports runs the statistics.
- Every other question goes to the generic answer engine (``tansaku.agent.answer``): every
  collection of the caller's scope is searched with its own config, the hits are ranked together
  on a calibrated probability, and the answer quotes the best sentences (an FAQ's answer part, a
  list of cards) with their sources — or says plainly that nothing answers it.
- An unanswered question goes to the unanswered log under the collections searched.
"""

from __future__ import annotations

import json
import re
from typing import Any

from tansaku.agent import table_routes
from tansaku.agent.answer import answer_scope
from tansaku.agent.answer.engine import SEARCH_TOOL
from tansaku.agent.events import Answer, Citation, Event
from tansaku.agent.result_text import summarize
from tansaku.agent.unanswered import UnansweredLog
from tansaku.search.classify import QueryLabel, classify
from tansaku.text.dates import resolve_dates
from tansaku.text.normalize import normalize
from tansaku.tools.registry import Toolset

NOT_FOUND = "申し訳ありません。ご質問に答えられる情報が見つかりませんでした。"
GREETING = (
    "こんにちは。日報・掲示板の過去の事例、マニュアル、クレームや売上の集計について"
    "日本語で質問してください。"
)
_FUTURE = re.compile(r"予測|予想|見込み|見通し|来年|来月|来週|将来|今後")
# 「レジの現金が合わないことはどれくらいある?」: how often a daily-report measure … is a statistic
_HOW_OFTEN = re.compile(
    r"(売上|客数|現金|過不足|レジ|クレーム).*(どれくらい|どのくらい|何回|何件|頻度|いくら|多い)"
)
_STAT_TOOLS = (
    (re.compile(r"売上|売り上げ|客数"), "get_sales_trend", "売上"),
    (re.compile(r"現金|過不足|レジ"), "get_cash_difference_analysis", "現金過不足"),
    (re.compile(r"."), "get_claim_statistics", "クレーム"),
)


def _call(tools: Toolset, events: list[Event], name: str, args: dict[str, Any]) -> Any:
    events.append(Event(type="tool_call", tool=name, arguments=args))
    text = tools.call(name, args)
    events.append(Event(type="tool_result", tool=name, text=summarize(text)))
    return json.loads(text)


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
    text_in = normalize(question)  # 全角/半角 and width variants decide nothing differently
    label = classify(text_in)
    searched = ", ".join(dict.fromkeys(tools.scope.collections.values()))
    tried: list[str] = []
    reason = "裏付けとなる記述が見つかりません"
    if label.label is QueryLabel.GREETING:
        return _done(question, GREETING, [], events)
    available = {s.name for s in tools.specs}
    table = (
        None
        if label.label is QueryLabel.STATISTICS
        else table_routes.plan(text_in, available, tools.scope.now)
    )
    if table is not None:
        tried.append(table.tool)
        text, cites, reason = _table_answer(question, table, tools, events)
        if text is not None:
            return _done(question, text, cites, events)
        searched = "stores" if table.tool == "search_stores" else "events"
    elif _FUTURE.search(text_in):
        reason = "予測や先の予定には答えられません(記録にあることだけを答えます)"
        events.append(Event(type="thought", text=reason))
    elif (
        label.label is QueryLabel.STATISTICS or _HOW_OFTEN.search(text_in)
    ) and "get_claim_statistics" in available:
        events.append(
            Event(type="thought", text="件数や傾向を聞いているので、日報の表を集計します")
        )
        tried.append("statistics")
        text = _statistics(text_in, tools, events)
        if text is not None:
            return _done(question, text, [], events)
        reason = "集計できる日報がありません(未来の期間・表が未登録を含む)"
        searched = "daily_reports"
    else:
        outcome = answer_scope(question, tools.scope)
        events.extend(outcome.events)
        tried.append(SEARCH_TOOL)
        if outcome.text is not None:
            return _done(question, outcome.text, list(outcome.citations), events)
        reason = outcome.reason
        searched = ", ".join(outcome.searched) or searched
    if unanswered is not None:
        unanswered.add(
            team=tools.scope.team,
            collection=searched,
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

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
from dataclasses import replace
from typing import Any

from tansaku.agent import table_routes
from tansaku.agent.answer import answer_scope
from tansaku.agent.answer.engine import SEARCH_TOOL
from tansaku.agent.conversations import stores_in
from tansaku.agent.events import Answer, Citation, Event
from tansaku.agent.result_text import summarize
from tansaku.agent.stats_answer import statistics_answer
from tansaku.agent.table_answer import table_answer
from tansaku.agent.unanswered import UnansweredLog
from tansaku.search.classify import QueryLabel, classify
from tansaku.text.normalize import normalize
from tansaku.tools.registry import Toolset

NOT_FOUND = "申し訳ありません。ご質問に答えられる情報が見つかりませんでした。"
GREETING = (
    "こんにちは。日報・掲示板の過去の事例、マニュアル、クレームや売上の集計について"
    "日本語で質問してください。"
)
_FUTURE = re.compile(r"予測|予想|見込み|見通し|来年|来月|来週|将来|今後")
ASK_CHARS = 40
"""A request for a forecast is short (「来月の売上予測を出して」); a question whose last sentence
is longer describes a case that merely mentions the future (「…取得できる見込みですが、…認めら
れますか」) and is answered from the records like any other."""
_SENTENCES = re.compile(r"(?<=[。？！?!])|\n")


def asks_forecast(text: str) -> bool:
    """Whether the question's ask — its last sentence, when short — names a forecast or a
    future period."""
    parts = [p.strip() for p in _SENTENCES.split(text) if p.strip()]
    ask = parts[-1] if parts else text
    return len(ask) <= ASK_CHARS and bool(_FUTURE.search(ask))


# 「レジの現金が合わないことはどれくらいある?」: how often a daily-report measure … is a statistic
_HOW_OFTEN = re.compile(
    r"(売上|客数|現金|過不足|レジ|クレーム).*(どれくらい|どのくらい|何回|何件|頻度|いくら|多い|"
    r"多か|少な|一番|最も|どの店|比べ|比較|どっち|どちら)"
)


def _call(tools: Toolset, events: list[Event], name: str, args: dict[str, Any]) -> Any:
    events.append(Event(type="tool_call", tool=name, arguments=args))
    text = tools.call(name, args)
    events.append(Event(type="tool_result", tool=name, text=summarize(text)))
    return json.loads(text)


def answer_offline(
    question: str,
    tools: Toolset,
    *,
    unanswered: UnansweredLog | None = None,
) -> Answer:
    """Answer ``question`` with ``tools`` and no language model."""
    events: list[Event] = []
    text_in = normalize(question)  # 全角/半角 and width variants decide nothing differently
    named = stores_in(text_in)
    if tools.scope.store is None and len(named) == 1:  # 「新宿店の先月の売上」: that store's
        tools = Toolset(tools.specs, replace(tools.scope, store=named[0]))
    label = classify(text_in)
    searched = ", ".join(dict.fromkeys(tools.scope.collections.values()))
    tried: list[str] = []
    reason = "裏付けとなる記述が見つかりません"
    if label.label is QueryLabel.GREETING:
        return _done(question, GREETING, [], events)
    available = {s.name for s in tools.specs}
    # a store/event question — 「レストランは全部で何件?」 too — is the table's; a question about
    # the daily reports' measures never is (table_routes.REPORT_WORDS)
    table = table_routes.plan(text_in, available, tools.scope.now)
    if table is not None:
        tried.append(table.tool)
        text, cites, reason = table_answer(
            question, table, lambda ev, name, args: _call(tools, ev, name, args), events
        )
        if text is not None:
            return _done(question, text, cites, events)
        searched = "stores" if table.tool == "search_stores" else "events"
    elif asks_forecast(text_in):
        reason = "予測や先の予定には答えられません(記録にあることだけを答えます)"
        events.append(Event(type="thought", text=reason))
    elif (
        label.label is QueryLabel.STATISTICS or _HOW_OFTEN.search(text_in)
    ) and "get_claim_statistics" in available:
        events.append(
            Event(type="thought", text="件数や傾向を聞いているので、日報の表を集計します")
        )
        tried.append("statistics")
        text, cites, reason = statistics_answer(
            text_in, tools.scope, lambda ev, name, args: _call(tools, ev, name, args), events
        )
        if text is not None:
            return _done(question, text, cites, events)
        searched = "daily_reports"
    else:
        outcome = answer_scope(question, tools.scope)
        events.extend(outcome.events)
        tried.append(SEARCH_TOOL)
        if outcome.text is not None:
            if outcome.tentative:  # shown with its sources, and the team sees it is unsure
                _log(
                    unanswered,
                    tools,
                    question,
                    ", ".join(outcome.searched) or searched,
                    outcome.reason,
                    tried,
                )
            return _done(question, outcome.text, list(outcome.citations), events)
        reason = outcome.reason
        searched = ", ".join(outcome.searched) or searched
        for table in table_routes.keyword_plans(text_in, available):
            tried.append(table.tool)
            text, cites, _ = table_answer(
                question,
                table,
                lambda ev, name, args: _call(tools, ev, name, args),
                events,
                strict=True,
            )
            if text is not None:
                return _done(question, text, cites, events)
    _log(unanswered, tools, question, searched, reason, tried)
    events.append(Event(type="answer", text=NOT_FOUND))
    return Answer(
        question=question,
        text=f"{NOT_FOUND}({reason})",
        events=tuple(events),
        unanswered=True,
    )


def _log(
    log: UnansweredLog | None,
    tools: Toolset,
    question: str,
    searched: str,
    reason: str,
    tried: list[str],
) -> None:
    """The question in the unanswered log under the collections searched (when there is one)."""
    if log is not None:
        log.add(
            team=tools.scope.team,
            collection=searched,
            question=question,
            reason=reason,
            tools=tried,
        )


def _done(question: str, text: str, cites: list[Citation], events: list[Event]) -> Answer:
    events.append(Event(type="answer", text=text))
    return Answer(question=question, text=text, citations=tuple(cites), events=tuple(events))

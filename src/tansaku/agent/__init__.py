"""Answers: the offline router (no LLM) today; the ReAct agent over chat models next.

>>> answer = tansaku.agent.ask(ts, "昨日のクレームは?")
>>> answer.text, [c.doc_id for c in answer.citations]
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import TYPE_CHECKING, Any

from tansaku.agent.events import Answer, Citation, Event
from tansaku.agent.offline import answer_offline
from tansaku.agent.unanswered import Unanswered, UnansweredLog
from tansaku.tools import toolset
from tansaku.workspace import DEFAULT_TEAM

if TYPE_CHECKING:
    from tansaku.client import Tansaku


def unanswered_log(client: Tansaku) -> UnansweredLog:
    return UnansweredLog(client.workspace.home / "appdb.sqlite")


def ask(
    client: Tansaku,
    question: str,
    *,
    team: str = DEFAULT_TEAM,
    collections: Mapping[str, str] | None = None,
    now: datetime | None = None,
    tables: Any = None,
    store: str | None = None,
) -> Answer:
    """Answer ``question`` for ``team`` (no model: the offline router)."""
    tools = toolset(client, team=team, collections=collections, now=now, tables=tables, store=store)
    return answer_offline(question, tools, unanswered=unanswered_log(client))


__all__ = ["Answer", "Citation", "Event", "Unanswered", "UnansweredLog", "ask", "unanswered_log"]

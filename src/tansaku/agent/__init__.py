"""Answers with sources: the ReAct agent with reflection over a chat model, or — with no model
configured, or when the model fails — the offline router's extractive answers.

>>> answer = tansaku.agent.ask(ts, "昨日の問題を教えて", team="default")
>>> answer.text, [c.doc_id for c in answer.citations], answer.conversation_id
>>> tansaku.agent.ask(ts, "その店舗の先週の売上は?", conversation_id=answer.conversation_id)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Unpack

from tansaku.agent.citations import strip_markers
from tansaku.agent.conversations import (
    ConversationInfo,
    ConversationNotFound,
    Conversations,
    Turn,
    resolve_followup,
    stores_in,
)
from tansaku.agent.events import Answer, Citation, Event, EventCallback, EventLog
from tansaku.agent.models.base import ChatModel, Message
from tansaku.agent.offline import answer_offline
from tansaku.agent.react import AgentLimits, run_agent
from tansaku.agent.unanswered import Unanswered, UnansweredLog
from tansaku.errors import InvalidRequest, check_keywords
from tansaku.search.limits import check_query, control_characters
from tansaku.tools import ScopeOptions, toolset
from tansaku.workspace import DEFAULT_TEAM

if TYPE_CHECKING:
    from tansaku.agent.history import StoredConversations
    from tansaku.client import Tansaku

HISTORY_TURNS = 10
"""Prior turns (questions and answers) a follow-up sends to the model."""


def check_question(question: str) -> str:
    """The question, if it is not blank, at most as long as a search query and free of control
    characters; :class:`~tansaku.errors.InvalidRequest` (in Japanese) otherwise. Checked before
    anything is searched or logged."""
    if not isinstance(question, str) or not question.strip():
        raise InvalidRequest("質問が空です。質問の文を入力してください")
    return check_query(question)


MAX_USER_CHARS = 100


def check_user(user: str | None) -> str | None:
    """Who asks, as the model will read it: one line of at most ``MAX_USER_CHARS`` characters
    without control characters (blank: nobody named); InvalidRequest otherwise."""
    if user is None or not user.strip():
        return None
    if len(user) > MAX_USER_CHARS or control_characters(user):
        raise InvalidRequest(
            f"質問者の名前は制御文字を含まない {MAX_USER_CHARS} 文字以内にしてください"
        )
    return " ".join(user.split())


def unanswered_log(client: Tansaku) -> UnansweredLog:
    return UnansweredLog(client.workspace.home / "appdb.sqlite")


def conversations(client: Tansaku) -> StoredConversations:
    """The workspace's conversations, stored in appdb (those of the legacy ``appdb.sqlite``
    are copied in once, keeping their ids)."""
    from tansaku.agent.history import StoredConversations as Stored

    return Stored(client.workspace.home / "appdb.sqlite")


def configured_model(client: Tansaku) -> ChatModel | None:
    """The workspace's configured chat model (environment, then ``tansaku.toml`` ``[llm]``;
    :func:`tansaku.agent.models.config.load_model`), or None."""
    from tansaku.agent.models.config import load_model

    return load_model(client.workspace.home)


def history_messages(turns: Sequence[Turn]) -> list[Message]:
    """Earlier turns as chat messages; an answer's markers (numbered for its own turn) become
    the titles of its sources."""
    out = []
    for t in turns:
        if t.role == "user":
            out.append(Message.user(t.text))
        else:
            titles = "、".join(dict.fromkeys(c.title or c.doc_id for c in t.citations))
            text = strip_markers(t.text).strip()
            out.append(Message.assistant(f"{text}\n(出典: {titles})" if titles else text))
    return out


def ask(
    client: Tansaku,
    question: str,
    *,
    model: ChatModel | None = None,
    conversation_id: str | None = None,
    on_event: EventCallback | None = None,
    offline: bool = False,
    limits: AgentLimits | None = None,
    **scope: Unpack[ScopeOptions],
) -> Answer:
    """Answer ``question`` for ``team`` and record the turn in a conversation.

    ``model`` (or the workspace's configured one) answers through the ReAct agent; with none,
    or ``offline=True``, the offline router answers. ``conversation_id`` continues a
    conversation of ``team`` (:class:`ConversationNotFound` otherwise); without it a new one
    starts. ``store`` is the one store the caller may see in statistics; a question naming
    exactly one store narrows an unrestricted caller to it; ``user`` (who asks) and the store
    are named to the model with the date and weekday (design 000's context). Events reach
    ``on_event`` as they happen. ``collections``: the names of the collections in scope (or
    role → name); ``now``, the reference time of relative dates, and ``tables``, the
    statistics' tables, as :func:`~tansaku.tools.toolset` takes them
    (:class:`~tansaku.tools.ScopeOptions`). A blank, over-long or control-character question
    raises :class:`~tansaku.errors.InvalidRequest` before anything is searched or logged."""
    check_keywords("ask", scope, ScopeOptions)
    check_question(question)
    team = scope.get("team", DEFAULT_TEAM)
    convs = conversations(client)
    turns = convs.history(conversation_id, team, HISTORY_TURNS * 2) if conversation_id else []
    resolved = resolve_followup(question, [t.text for t in turns if t.role == "user"])
    named = stores_in(resolved)
    scope["store"] = scope.get("store") or (named[0] if len(named) == 1 else None)
    scope["user"] = check_user(scope.get("user"))
    tools = toolset(client, **scope)
    chat = None if offline else (model or configured_model(client))
    log = unanswered_log(client)
    if chat is not None:
        answer = run_agent(
            question,
            tools,
            chat,
            history=history_messages(turns),
            limits=limits,
            on_event=on_event,
            unanswered=log,
            offline_question=resolved,
        )
    else:
        events = EventLog(on_event)
        if resolved != question:
            events.emit(Event(type="thought", text=f"前の質問から「{resolved}」と解釈しました"))
        answer = answer_offline(resolved, tools, unanswered=log)
        events.extend(answer.events)
        answer = replace(answer, question=question, events=events.events)
    cid = conversation_id or convs.new(team)
    convs.append(cid, team, "user", question)
    convs.append(cid, team, "assistant", answer.text, answer.citations)
    return replace(answer, conversation_id=cid)


__all__ = [
    "AgentLimits",
    "Answer",
    "Citation",
    "ConversationInfo",
    "ConversationNotFound",
    "Conversations",
    "Event",
    "EventCallback",
    "Turn",
    "Unanswered",
    "UnansweredLog",
    "answer_offline",
    "ask",
    "check_question",
    "check_user",
    "configured_model",
    "conversations",
    "history_messages",
    "run_agent",
    "unanswered_log",
]

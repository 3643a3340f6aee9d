"""The typed events of an answer (thought, tool_call, tool_result, draft, critique, answer,
error): what the CLI prints with ``--show-thoughts`` and what a server streams (SSE), in the
order they happened."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

EventType = Literal["thought", "tool_call", "tool_result", "draft", "critique", "answer", "error"]
RESULT_PREVIEW = 400


@dataclass(frozen=True, kw_only=True)
class Event:
    type: EventType
    text: str = ""
    tool: str | None = None
    arguments: dict[str, Any] | None = None
    call_id: str | None = None
    """Pairs a ``tool_result`` with its ``tool_call`` (parallel calls finish in any order)."""

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"type": self.type}
        if self.tool is not None:
            out["tool"] = self.tool
        if self.call_id is not None:
            out["call_id"] = self.call_id
        if self.arguments is not None:
            out["arguments"] = self.arguments
        if self.text:
            out["text"] = self.text
        return out


EventCallback = Callable[[Event], None]
"""Receives each event as it happens (the CLI prints it, a server streams it)."""


class EventLog:
    """The events of one answer: kept in order and handed to ``on_event`` as they happen."""

    def __init__(self, on_event: EventCallback | None = None) -> None:
        self._events: list[Event] = []
        self._on_event = on_event

    def emit(self, event: Event) -> Event:
        self._events.append(event)
        if self._on_event is not None:
            self._on_event(event)
        return event

    def extend(self, events: tuple[Event, ...] | list[Event]) -> None:
        for event in events:
            self.emit(event)

    @property
    def events(self) -> tuple[Event, ...]:
        return tuple(self._events)


@dataclass(frozen=True, kw_only=True)
class Citation:
    doc_id: str
    collection: str
    title: str = ""
    date: str = ""
    store: str = ""
    section: str = ""
    tool: str = ""
    """The tool that returned this source."""

    def to_dict(self) -> dict[str, str]:
        return {k: v for k, v in vars(self).items() if v}


@dataclass(frozen=True, kw_only=True)
class Answer:
    question: str
    text: str
    citations: tuple[Citation, ...] = ()
    events: tuple[Event, ...] = field(default=(), repr=False)
    unanswered: bool = False
    model: str = "offline"
    """What answered: ``provider:model``, or ``offline`` (the router, also after a model
    failure)."""
    conversation_id: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "answer": self.text,
            "citations": [c.to_dict() for c in self.citations],
            "events": [e.to_dict() for e in self.events],
            "conversation_id": self.conversation_id,
            "unanswered": self.unanswered,
            "model": self.model,
        }

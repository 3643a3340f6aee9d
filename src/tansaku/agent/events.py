"""The typed events of an answer (thought, tool_call, tool_result, answer, error): what the CLI
prints with ``--show-thoughts`` and what a server will stream."""

from __future__ import annotations

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

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"type": self.type}
        if self.tool is not None:
            out["tool"] = self.tool
        if self.arguments is not None:
            out["arguments"] = self.arguments
        if self.text:
            out["text"] = self.text
        return out


@dataclass(frozen=True, kw_only=True)
class Citation:
    doc_id: str
    collection: str
    title: str = ""
    date: str = ""
    store: str = ""
    section: str = ""

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

    def to_dict(self) -> dict[str, Any]:
        return {
            "answer": self.text,
            "citations": [c.to_dict() for c in self.citations],
            "events": [e.to_dict() for e in self.events],
            "unanswered": self.unanswered,
            "model": self.model,
        }

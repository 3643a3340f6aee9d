"""The agent tests' script vocabulary over the shipped :class:`tansaku.testing.ScriptedChatModel`
(replies from a queue: a reply, an exception to raise, or a function of the request)."""

from __future__ import annotations

import json
import re

from tansaku.agent.models.base import ChatResponse
from tansaku.testing.scripted_model import ChatRequest, ScriptedChatModel, Step, call, say

__all__ = ["Request", "ScriptedModel", "Step", "call", "refs", "review", "say"]


Request = ChatRequest
ScriptedModel = ScriptedChatModel


def review(answer: str, status: str = "answered", critique: str = "確認しました") -> ChatResponse:
    data = {"critique": critique, "status": status, "answer": answer}
    return say(json.dumps(data, ensure_ascii=False))


def refs(request: Request) -> list[str]:
    """The source markers the tools' results carry in ``request`` (in order)."""
    found: list[str] = []
    for m in request.messages:
        if m.role == "tool":
            found += [r for r in re.findall(r'"ref": "(\[\d+\])"', m.content) if r not in found]
    return found

"""The reflection pass (``003_…txt`` §9.1): the draft is checked against what the tools
returned — unsupported claims removed, the question actually answered, polite Japanese — and
the model's revision becomes the final answer.

The model replies with a JSON object (``critique``, ``status``, ``answer``) under a JSON
schema; a model that ignores the schema and writes plain text has that text taken as the
answer. What the revision may cite is checked afterwards by :class:`Sources` either way.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from tansaku.agent.models.base import ChatModel, Message
from tansaku.agent.prompts import REFLECTION, REFLECTION_SCHEMA, reflection_input, split_thought

Status = Literal["answered", "not_found", "smalltalk"]
_FENCE = re.compile(r"^\s*```(?:json)?\s*|\s*```\s*$")
MAX_CONTEXT_CHARS = 12_000
_STATUSES: dict[str, Status] = {
    "answered": "answered",
    "not_found": "not_found",
    "smalltalk": "smalltalk",
}


@dataclass(frozen=True, kw_only=True)
class Reflection:
    critique: str
    status: Status
    answer: str


def context_of(observations: Sequence[tuple[str, str]], limit: int = MAX_CONTEXT_CHARS) -> str:
    """The tools' results (``(tool, annotated JSON)``) as the reviewer's context, each cut to
    an equal share of ``limit`` characters."""
    if not observations:
        return ""
    share = max(200, limit // len(observations))
    parts = []
    for tool, result in observations:
        body = result if len(result) <= share else result[:share] + "…(省略)"
        parts.append(f"## {tool}\n{body}")
    return "\n\n".join(parts)


def parse_reflection(content: str, draft: str) -> Reflection:
    """The model's reply as a :class:`Reflection`; plain text is the answer itself, an empty
    reply keeps the draft."""
    text = _FENCE.sub("", content.strip())
    try:
        data = json.loads(text)
    except ValueError:
        data = None
    if isinstance(data, dict) and isinstance(data.get("answer"), str):
        status: Status = _STATUSES.get(str(data.get("status")), "answered")
        answer = data["answer"].strip()
        return Reflection(
            critique=str(data.get("critique") or ""),
            status=status,
            answer=answer or ("" if status == "not_found" else draft),
        )
    _, answer = split_thought(content)
    return Reflection(critique="", status="answered", answer=answer or draft)


def reflect(
    model: ChatModel,
    question: str,
    draft: str,
    observations: Sequence[tuple[str, str]],
    *,
    timeout: float | None = None,
    max_tokens: int | None = None,
) -> Reflection:
    """Review ``draft`` against ``observations``; raises the model's :class:`ModelError`."""
    messages = [
        Message.system(REFLECTION),
        Message.user(reflection_input(question, context_of(observations), draft)),
    ]
    reply = model.chat(
        messages,
        temperature=0.0,
        max_tokens=max_tokens,
        timeout=timeout,
        json_schema=REFLECTION_SCHEMA,
    )
    return parse_reflection(reply.content, draft)

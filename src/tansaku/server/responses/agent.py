"""``POST /api/ask`` and the conversations of ``/api/conversations``."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field


class Citation(BaseModel):
    """出典(空の項目は省かれる)。"""

    doc_id: str | None = None
    collection: str | None = None
    title: str | None = None
    date: str | None = None
    store: str | None = None
    section: str | None = None
    tool: str | None = None


class AgentEvent(BaseModel):
    type: str = Field(description="thought, tool_call, tool_result, draft, critique, answer, error")
    tool: str | None = None
    call_id: str | None = None
    arguments: dict[str, Any] | None = None
    text: str | None = None


class AskResponse(BaseModel):
    """出典つきの回答。query_id は評価(POST /api/feedback)に使う。"""

    answer: str
    citations: list[Citation]
    events: list[AgentEvent]
    conversation_id: str | None
    unanswered: bool
    model: str
    query_id: str


class ConversationInfo(BaseModel):
    id: str
    created_at: str
    updated_at: str
    turns: int
    title: str = Field(description="最初の質問")


class ConversationList(BaseModel):
    conversations: list[ConversationInfo]


class ConversationTurn(BaseModel):
    role: Literal["user", "assistant"]
    text: str
    citations: list[Citation]
    created_at: str
    query_id: str | None = Field(description="回答の評価に使う id(質問と古い回答は null)")
    rating: int | None = Field(description="チームの最新の評価(1 / -1 / null)")


class ConversationHistory(BaseModel):
    conversation_id: str
    turns: list[ConversationTurn]

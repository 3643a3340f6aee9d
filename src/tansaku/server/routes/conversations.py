"""``GET /api/conversations`` and ``GET /api/conversations/{id}``: the team's agent
conversations and their turns (the chat page's history). Another team's id is a 404.

Each answer turn carries ``query_id`` — the answer event ``POST /api/feedback`` rates, so an
answer reopened from the history can still be rated (its meta is rebuilt on the server from
that event) — and ``rating``, the team's latest rating of it. Answers stored before turns kept
their query_id have ``"query_id": null`` and cannot be rated."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query
from fastapi.responses import Response

from tansaku.server.errors import ApiError
from tansaku.server.respond import json_response
from tansaku.server.responses import documented
from tansaku.server.responses.agent import ConversationHistory, ConversationList
from tansaku.server.state import StateDep, TeamDep

router = APIRouter(tags=["エージェント"])


@router.get(
    "/api/conversations",
    summary="会話の一覧",
    responses=documented(ConversationList),
)
def listing(state: StateDep, team: TeamDep) -> Response:
    from tansaku.agent import conversations

    items = conversations(state.client).list(team)
    return json_response({"conversations": [c.to_dict() for c in items]})


@router.get(
    "/api/conversations/{conversation_id}",
    summary="会話の履歴",
    responses=documented(ConversationHistory, 404, 422),
)
def history(
    conversation_id: str,
    state: StateDep,
    team: TeamDep,
    limit: Annotated[int, Query(ge=1, le=500)] = 100,
) -> Response:
    """会話の最後の `limit` ターン(古い順)。回答のターンには評価に使う `query_id`
    (`POST /api/feedback` に渡す)と、チームの最新の評価 `rating`(1 / -1 / null)が付く。"""
    from tansaku.agent import conversations

    convs = conversations(state.client)
    if len(conversation_id) > 200 or not convs.exists(conversation_id, team):
        raise ApiError(404, "not_found", f"会話「{conversation_id[:64]}」が見つかりません")
    turns = convs.turns(conversation_id, team, limit)
    return json_response(
        {"conversation_id": conversation_id, "turns": [t.to_dict() for t in turns]}
    )

"""``GET /api/unanswered`` (paged, filtered by collection, dates and state) and
``POST /api/unanswered/{id}/resolve`` — the team's own questions only (another team's id is
a 404)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path, Query
from fastapi.responses import Response
from pydantic import BaseModel, Field

from tansaku.appdb.rows import Page, Period
from tansaku.appdb.unanswered import QuestionFilter
from tansaku.server.respond import json_response
from tansaku.server.responses import WRITE, documented
from tansaku.server.responses.feedback import UnansweredPage, UnansweredQuestion
from tansaku.server.routes.feedback import parse_bound
from tansaku.server.schemas import Body
from tansaku.server.state import StateDep, TeamDep

router = APIRouter(tags=["未回答ログ"])


class UnansweredFilter(BaseModel):
    """The query's filter of the unanswered log (``collection``, ``from``, ``to``, ``resolved``)."""

    collection: Annotated[str | None, Field(max_length=200)] = None
    date_from: Annotated[str | None, Field(alias="from", max_length=40)] = None
    date_to: Annotated[str | None, Field(alias="to", max_length=40)] = None
    resolved: bool | None = None

    def where(self) -> QuestionFilter:
        """The filter of the log's ``find`` and ``count``; ``from`` and ``to`` are days
        (Asia/Tokyo, ``to`` inclusive) or datetimes."""
        start = parse_bound(self.date_from, end=False)
        end = parse_bound(self.date_to, end=True)
        return QuestionFilter(self.collection, Period(start, end), self.resolved)


class UnansweredPageQuery(UnansweredFilter):
    offset: Annotated[int, Field(ge=0, le=10_000_000)] = 0
    limit: Annotated[int, Field(ge=1, le=200)] = 50


class ResolveBody(Body):
    resolution: Annotated[str, Field(max_length=1_000)] = ""


@router.get(
    "/api/unanswered",
    summary="未回答の質問",
    responses=documented(UnansweredPage, 400, 422),
)
def listing(
    state: StateDep, team: TeamDep, query: Annotated[UnansweredPageQuery, Query()]
) -> Response:
    """新しい順。例: `/api/unanswered?collection=reports&from=2025-12-01&resolved=false`"""
    where = query.where()
    repo = state.appdb.unanswered
    items = repo.find(team, where, Page(query.limit, query.offset))
    return json_response(
        {
            "total": repo.count(team, where),
            "offset": query.offset,
            "limit": query.limit,
            "unanswered": [i.to_dict() for i in items],
        }
    )


@router.post(
    "/api/unanswered/{question_id}/resolve",
    summary="解決済みにする",
    responses=documented(UnansweredQuestion, *WRITE, 404),
)
def resolve(
    question_id: Annotated[int, Path(ge=1, le=2**62)],
    state: StateDep,
    team: TeamDep,
    body: ResolveBody | None = None,
) -> Response:
    """例: `{"resolution": "マニュアルに霜取りの手順を追加した"}`(本文は省略可)"""
    note = body.resolution if body is not None else ""
    return json_response(state.appdb.unanswered.resolve(team, question_id, note).to_dict())

"""``POST /api/search``: the whole SearchRequest in, the JSON of ``tansaku search --json`` out.
Every search is counted in the metrics and its SEARCH_EVENT recorded in appdb, where feedback
finds it by ``query_id``."""

from __future__ import annotations

from fastapi import APIRouter
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import Response

from tansaku.search.types import SearchRequest, SearchResult
from tansaku.server.errors import collection_missing
from tansaku.server.owners import find_visible
from tansaku.server.respond import json_response
from tansaku.server.responses import WRITE, documented
from tansaku.server.responses.search import SearchResponse
from tansaku.server.schemas import SearchBody
from tansaku.server.state import AppState, StateDep, TeamDep

router = APIRouter(tags=["検索"])


def require_collection(state: AppState, team: str, name: str) -> None:
    """404 unless ``team`` may see collection ``name``."""
    if find_visible(state.client, state.owners, team, name) is None:
        raise collection_missing(name)


def run_search(state: AppState, request: SearchRequest) -> SearchResult:
    """One search of the API, scoped to a collection the team sees; the client's event log
    (``tansaku.server.events``) counts it and records its SEARCH_EVENT in appdb, where
    feedback finds it by ``query_id``."""
    require_collection(state, request.tenant, request.collection)
    return state.client.run(request)


@router.post(
    "/api/search",
    summary="ハイブリッド検索",
    responses=documented(SearchResponse, *WRITE, 404, 409, 501),
)
async def search(body: SearchBody, state: StateDep, team: TeamDep) -> Response:
    """`tansaku search --json` と同じ JSON(query_id, hits, plan, timings_ms)を返す。

    例: `{"query": "冷蔵庫が壊れた", "collection": "reports", "top_k": 5}`
    """
    request = body.to_request(team)
    if state.compute is None:
        return await run_in_threadpool(_answer, state, request)
    return await state.compute.run(_answer, state, request)


def _answer(state: AppState, request: SearchRequest) -> Response:
    """The search and its JSON, computed together in the server's search pool."""
    return json_response(run_search(state, request).to_dict())

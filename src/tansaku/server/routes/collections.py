"""Collections of the caller's team: list, create, delete, merge, reset, browse records, config.

A team sees a collection when it has records in it or created it through the API; any other
collection is answered 404, whether or not it exists. Counts and records are the team's own.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query
from fastapi.responses import Response

from tansaku.client import CollectionInfo
from tansaku.config import CollectionConfig, config_from_dict
from tansaku.errors import ConfigError
from tansaku.records import Record
from tansaku.search.types import SearchRequest
from tansaku.server.errors import ApiError, collection_missing, name_unavailable
from tansaku.server.owners import find_visible, visible
from tansaku.server.respond import json_response
from tansaku.server.responses import WRITE, documented
from tansaku.server.responses.collections import (
    CollectionConfig as ConfigResponse,
)
from tansaku.server.responses.collections import (
    CollectionDeleted,
    CollectionList,
    CollectionMerged,
    CollectionSummary,
    RecordPage,
    TeamReset,
)
from tansaku.server.routes.search import run_search
from tansaku.server.schemas import CollectionBody, MergeBody, ResetBody
from tansaku.server.state import AppState, StateDep, TeamDep
from tansaku.transfer.merge import merge_collections
from tansaku.transfer.reset import reset_team
from tansaku.workspace import validate_name

router = APIRouter(tags=["コレクション"])
MAX_PAGE = 200


def _summary(state: AppState, team: str, info: CollectionInfo) -> dict[str, Any]:
    with state.client.reading(info.name) as col:
        records = col.count(team)
    return {
        "name": info.name,
        "description": info.description,
        "source_type": info.source_type,
        "records": records,
        "axes": list(info.axes),
    }


def collection_summaries(state: AppState, team: str) -> list[dict[str, Any]]:
    """The collections ``team`` sees, each with the team's own records (``GET
    /api/collections`` and the overview page); one deleted meanwhile is left out."""
    infos = {i.name: i for i in visible(state.client, state.owners, team)}
    return state.client.each_collection(infos, lambda name: _summary(state, team, infos[name]))


def _visible(state: AppState, team: str, name: str) -> CollectionInfo:
    info = find_visible(state.client, state.owners, team, name)
    if info is None:
        raise collection_missing(name)
    return info


@router.get(
    "/api/collections",
    summary="コレクション一覧",
    responses=documented(CollectionList),
)
def list_collections(state: StateDep, team: TeamDep) -> Response:
    """チームが見られるコレクション(件数はチーム自身の記録数)。"""
    return json_response({"collections": collection_summaries(state, team)})


@router.post(
    "/api/collections",
    status_code=201,
    summary="コレクションを作成",
    responses=documented(CollectionSummary, *WRITE, 409, status=201, description="作成した"),
)
def create_collection(body: CollectionBody, state: StateDep, team: TeamDep) -> Response:
    """例: `{"name": "faq", "config": {"description": "よくある質問", "search": {"top_k": 5}}}`
    (config は TOML 設定のキーを JSON で。省略時は既定の検索軸)"""
    name = validate_name(body.name)
    if state.client.has_collection(name):
        if find_visible(state.client, state.owners, team, name) is None:
            raise name_unavailable(name)  # another team's: its existence is not said
        raise ApiError(
            409,
            "collection_exists",
            f"コレクション「{name}」は既にあります。別の名前にしてください",
        )
    try:
        config = (
            config_from_dict(body.config, name=name)
            if body.config is not None
            else CollectionConfig(name=name)
        )
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"設定が正しくありません: {exc}") from None
    state.owners.add(name, team)
    state.client.create_collection(config.with_name(name), exist_ok=False)
    info = _visible(state, team, name)
    return json_response(_summary(state, team, info), 201)


def _drop_if_unused(state: AppState, name: str) -> bool:
    """Remove a collection no team has records in or created (under its lock)."""
    with state.client.reading(name) as col:
        empty = col.is_empty()
    if empty and not state.owners.teams(name):
        state.client.delete_collection(name)
        return True
    return False


@router.delete(
    "/api/collections/{name}",
    summary="削除",
    responses=documented(CollectionDeleted, *WRITE, 404, 409),
)
def delete_collection(name: str, state: StateDep, team: TeamDep) -> Response:
    """チームの記録を削除する。ほかのチームの記録が残らなければコレクションごと削除する。"""
    _visible(state, team, name)
    with state.jobs.collection_lock(name):
        state.client.delete_collection(name, team=team)
        state.owners.remove(name, team)
        removed = _drop_if_unused(state, name)
    return json_response({"deleted": name, "collection_removed": removed})


@router.post(
    "/api/collections/reset",
    summary="チームの記録をすべて削除",
    responses=documented(TeamReset, *WRITE, 409),
)
def reset(body: ResetBody, state: StateDep, team: TeamDep) -> Response:
    """チームの記録を、見られるすべてのコレクションから一度に削除する(元に戻せません)。
    確認のため `confirm` にチーム名を指定する。例: `{"confirm": "shinjuku"}`。ほかのチームの
    記録は残り、どのチームの記録もなくなったコレクションは削除する。"""
    if body.confirm != team:
        raise ApiError(
            400,
            "confirmation_required",
            f"確認のため confirm にチーム名「{team}」を指定してください。何も削除していません",
        )
    names = [i.name for i in visible(state.client, state.owners, team)]
    report = reset_team(state.client, team, drop_empty=False, lock=state.jobs.collection_lock)
    removed = []
    for name in names:
        with state.jobs.collection_lock(name):
            state.owners.remove(name, team)
            if state.client.has_collection(name) and _drop_if_unused(state, name):
                removed.append(name)
    return json_response(report.to_dict() | {"removed": removed})


@router.post(
    "/api/collections/{name}/merge",
    summary="コレクションの統合",
    responses=documented(CollectionMerged, *WRITE, 404, 409),
)
def merge(name: str, body: MergeBody, state: StateDep, team: TeamDep) -> Response:
    """`sources` のコレクションにあるチームの記録を、パスのコレクションにまとめる(なければ
    作成)。記録の id はそのまま。`conflict`: 統合先に同じ文書があるとき `skip`(残す、既定)か
    `overwrite`(統合元で置き換える)。例: `{"sources": ["manuals-2024"], "conflict": "skip"}`"""
    into = validate_name(name)
    for source in body.sources:
        _visible(state, team, validate_name(source))
    if state.client.has_collection(into):
        _visible(state, team, into)
    with state.jobs.collection_lock(into):
        report = merge_collections(
            state.client, body.sources, into, team=team, conflict=body.conflict
        )
        state.owners.add(into, team)
    return json_response(report.to_dict())


@router.get(
    "/api/collections/{name}/config",
    summary="コレクション設定",
    responses=documented(ConfigResponse, 400, 404, 422),
)
def collection_config(name: str, state: StateDep, team: TeamDep) -> Response:
    _visible(state, team, name)
    with state.client.reading(name) as col:
        return json_response({"name": name, "config": col.config.to_dict()})


def _record(r: Record) -> dict[str, Any]:
    return {
        "id": r.id,
        "doc_id": r.doc_id,
        "field": r.field,
        "text": r.text,
        "metadata": dict(r.metadata),
    }


@router.get(
    "/api/collections/{name}/records",
    summary="記録の閲覧",
    responses=documented(RecordPage, 400, 404, 409, 422, 501),
)
def records(
    name: str,
    state: StateDep,
    team: TeamDep,
    offset: Annotated[int, Query(ge=0, le=10_000_000)] = 0,
    limit: Annotated[int, Query(ge=1, le=MAX_PAGE)] = 20,
    q: Annotated[str | None, Query(max_length=1_000)] = None,
) -> Response:
    """チームの記録を id 順にページ単位で返す。`q` を指定するとその中を検索する
    (関連度順、記録単位)。例: `/api/collections/manuals/records?offset=0&limit=20&q=冷蔵庫`"""
    _visible(state, team, name)
    if q is not None and q.strip():
        wanted = offset + limit
        if wanted > 1_000:
            raise ApiError(400, "invalid_request", "検索結果は先頭 1,000 件までしか辿れません")
        result = run_search(
            state,
            SearchRequest(query=q, collection=name, tenant=team, top_k=wanted, group_by_doc=False),
        )
        hits = result.hits[offset:wanted]
        return json_response(
            {
                "collection": name,
                "offset": offset,
                "limit": limit,
                "total": len(result.hits),
                "query_id": result.query_id,
                "records": [_record(h.record) | {"score": round(h.score, 6)} for h in hits],
            }
        )
    with state.client.reading(name) as col:
        ids = col.record_ids(team)
        page = col.records(team, ids[offset : offset + limit])
    return json_response(
        {
            "collection": name,
            "offset": offset,
            "limit": limit,
            "total": len(ids),
            "records": [_record(r) for r in page],
        }
    )

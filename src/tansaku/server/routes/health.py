"""``/healthz`` (engine, appdb, model) and ``/metrics`` (Prometheus text).

What they show depends on who asks, since counts describe every team's data:

- ``/healthz`` without a key: only ``{"status": "ok" | "degraded"}`` (200 / 503) — enough for
  a load balancer. With a team's key (or its UI session): the checks, with the number of
  collections that team sees. With an admin key (a key of a team in
  ``ServerSettings.admin_teams``, ``tansaku serve --admin-team``) or on the keyless local
  server: the checks with the workspace's count.
- ``/metrics`` (counters over every team): an admin key, or the keyless local server; a team's
  key is 403 ``admin_only``, no key 401.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import PlainTextResponse, Response

from tansaku.server.errors import ApiError
from tansaku.server.owners import visible
from tansaku.server.respond import json_response
from tansaku.server.responses import documented, plain_text
from tansaku.server.responses.health import Health
from tansaku.server.state import AppState, StateDep, get_team

router = APIRouter(tags=["運用"])
ADMIN_ONLY = (
    "メトリクスは全チームの集計のため、管理用のキー(tansaku serve --admin-team で指定した"
    "チームのキー)が必要です"
)


def _caller(request: Request, state: AppState) -> str | None:
    """The caller's team, or None without a key (a wrong key is still 401)."""
    try:
        return get_team(request)
    except ApiError as exc:
        if exc.code == "unauthorized":
            return None
        raise


def _whole_workspace(state: AppState, team: str) -> bool:
    return state.keyless() or team in state.settings.admin_teams


def _engine(state: AppState, team: str) -> dict[str, Any]:
    client = state.client
    try:
        names = client.backend.names()  # the workspace's folders, or a Qdrant server's registry
        if _whole_workspace(state, team):
            count = len(names)
        else:
            count = len(visible(client, state.owners, team))
        return {"ok": client.workspace.home.is_dir(), "collections": count}
    except Exception as exc:  # a folder gone, a server that does not answer
        return {"ok": False, "error": type(exc).__name__}


def _appdb(state: AppState) -> dict[str, Any]:
    if state.appdb is None:
        return {"ok": False, "error": "アプリDBが設定されていません"}
    try:
        ping = getattr(state.appdb, "ping", None)
        return {"ok": bool(ping()) if callable(ping) else True}
    except Exception as exc:
        return {"ok": False, "error": type(exc).__name__}


def _model(state: AppState) -> dict[str, Any]:
    check: dict[str, Any] = {"ok": state.model_error is None, "loaded": state.model is not None}
    if state.model is not None:
        check["name"] = state.model
    if state.model_error is not None:
        check["error"] = state.model_error
    if state.searchers is not None:
        check["search_processes"] = state.searchers.ready
    return check


@router.get(
    "/healthz",
    summary="稼働状況",
    responses=documented(Health)
    | {503: {"model": Health, "description": "どれかが使えない(status: degraded)"}},
)
def healthz(request: Request, state: StateDep) -> Response:
    """エンジン(ワークスペース)、アプリDB、埋め込みモデルの状態。どれかが使えなければ 503。
    キーなしでは status だけ、キーがあればそのチームの件数つきの checks も返す。"""
    team = _caller(request, state)
    checks = {"engine": _engine(state, team or ""), "appdb": _appdb(state), "model": _model(state)}
    ok = all(c["ok"] for c in checks.values())
    body: dict[str, Any] = {"status": "ok" if ok else "degraded"}
    if team is not None:
        body["checks"] = checks
    return json_response(body, 200 if ok else 503)


@router.get(
    "/metrics",
    response_class=PlainTextResponse,
    summary="Prometheus メトリクス",
    responses=plain_text(401, 403, 421, description="Prometheus のテキスト形式"),
)
def metrics(request: Request, state: StateDep) -> Response:
    """全チームの集計。管理用のキーか、キーなしのローカルサーバーでだけ返す。"""
    if not state.keyless():
        team = _caller(request, state)
        if team is None:
            raise ApiError(
                401,
                "unauthorized",
                "メトリクスには管理用の API キーが必要です",
                headers={"WWW-Authenticate": "Bearer"},
            )
        if team not in state.settings.admin_teams:
            raise ApiError(403, "admin_only", ADMIN_ONLY)
    from tansaku.eval.batch import batch_file
    from tansaku.server.metrics import batch_gauges

    batch = batch_gauges(batch_file(state.client.workspace.logs_dir))
    return Response(state.metrics.render() + batch, media_type=state.metrics.content_type)

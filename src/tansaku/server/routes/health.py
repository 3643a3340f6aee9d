"""``/healthz`` (engine, appdb, model) and ``/metrics`` (Prometheus text)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter
from fastapi.responses import Response

from tansaku.server.respond import JsonResponse, json_response
from tansaku.server.state import StateDep

router = APIRouter(tags=["運用"])


@router.get("/healthz", response_class=JsonResponse, summary="稼働状況")
def healthz(state: StateDep) -> Response:
    """エンジン(ワークスペース)、アプリDB、埋め込みモデルの状態。どれかが使えなければ 503。"""
    client = state.client
    checks: dict[str, Any] = {}
    ok = True
    try:
        names = client.backend.names()  # the workspace's folders, or a Qdrant server's registry
        checks["engine"] = {"ok": client.workspace.home.is_dir(), "collections": len(names)}
    except Exception as exc:  # a folder gone, a server that does not answer
        checks["engine"] = {"ok": False, "error": type(exc).__name__}
    ok = ok and checks["engine"]["ok"]
    if state.appdb is None:
        checks["appdb"] = {"ok": False, "error": "アプリDBが設定されていません"}
        ok = False
    else:
        try:
            ping = getattr(state.appdb, "ping", None)
            checks["appdb"] = {"ok": bool(ping()) if callable(ping) else True}
        except Exception as exc:
            checks["appdb"] = {"ok": False, "error": type(exc).__name__}
        ok = ok and checks["appdb"]["ok"]
    checks["model"] = {"ok": state.model_error is None, "loaded": state.model is not None}
    if state.model is not None:
        checks["model"]["name"] = state.model
    if state.model_error is not None:
        checks["model"]["error"] = state.model_error
        ok = False
    body = {"status": "ok" if ok else "degraded", "checks": checks}
    return json_response(body, 200 if ok else 503)


@router.get("/metrics", summary="Prometheus メトリクス", include_in_schema=True)
def metrics(state: StateDep) -> Response:
    return Response(state.metrics.render(), media_type=state.metrics.content_type)

"""JSON responses as the CLI's ``--json`` writes them: non-ASCII kept, dates as ISO strings.

A ``JSONResponse`` to FastAPI, so that ``/openapi.json`` types a route's body with the model of
its ``responses=`` (``tansaku.server.responses``); the bytes are this class's own. The app's
default response class, so no route names it."""

from __future__ import annotations

import json
from typing import Any

from fastapi.responses import JSONResponse


class JsonResponse(JSONResponse):
    media_type = "application/json"

    def render(self, content: Any) -> bytes:
        return json.dumps(content, ensure_ascii=False, default=str).encode("utf-8")


def json_response(content: Any, status_code: int = 200) -> JsonResponse:
    return JsonResponse(content, status_code=status_code)

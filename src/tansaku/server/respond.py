"""JSON responses as the CLI's ``--json`` writes them: non-ASCII kept, dates as ISO strings."""

from __future__ import annotations

import json
from typing import Any

from fastapi.responses import Response


class JsonResponse(Response):
    media_type = "application/json"

    def render(self, content: Any) -> bytes:
        return json.dumps(content, ensure_ascii=False, default=str).encode("utf-8")


def json_response(content: Any, status_code: int = 200) -> JsonResponse:
    return JsonResponse(content, status_code=status_code)

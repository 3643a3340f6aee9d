"""What each route answers, for ``/openapi.json`` and ``/docs``: a pydantic model per success
body and the shared error body for every error status a route can answer.

The models only document: routes keep returning their ``JsonResponse`` (FastAPI neither
validates nor filters a returned ``Response``), so declaring a body costs a request nothing and
changes no byte of it. Models are permissive (unknown keys allowed; a key a body sometimes
leaves out is optional) so a new field is never a schema mismatch.

    @router.post("/api/search", responses=documented(SearchResponse, *WRITE, 404, 409, 501))
"""

from __future__ import annotations

from tansaku.server.responses.errors import (
    COMMON,
    ERRORS,
    WRITE,
    ErrorBody,
    Responses,
    documented,
    plain_text,
)

__all__ = ["COMMON", "ERRORS", "WRITE", "ErrorBody", "Responses", "documented", "plain_text"]

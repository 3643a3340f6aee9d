"""``GET /healthz``: ``status``, and the checks for a caller with a key."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field


class EngineCheck(BaseModel):
    ok: bool
    collections: int | None = None
    error: str | None = None


class AppdbCheck(BaseModel):
    ok: bool
    error: str | None = None


class ModelCheck(BaseModel):
    ok: bool
    loaded: bool
    name: str | None = None
    error: str | None = None
    search_processes: int | None = Field(
        default=None,
        description="応答できる検索プロセスの数(tansaku serve --search-processes のとき)",
    )


class Checks(BaseModel):
    engine: EngineCheck
    appdb: AppdbCheck
    model: ModelCheck


class Health(BaseModel):
    """稼働状況。checks はキーがあるときだけ(件数はそのチームが見られる分)。"""

    status: Literal["ok", "degraded"]
    checks: Checks | None = None

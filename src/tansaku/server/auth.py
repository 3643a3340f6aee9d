"""Who is calling: the team comes from the API key, never from a body or a query string.

A key is sent as ``Authorization: Bearer <key>`` or ``X-API-Key: <key>`` and checked against
the stored (hashed) keys; a wrong key is 401 even where keys are optional. A request without a
key is served as the default team only in the keyless demo mode — bound to loopback while the
workspace's keyless setting is on (``KeyStore.keyless``: on until the first key is created,
then off until an operator turns it on again; checked per request). A bound session resolver
(the web UI's cookie session) is asked before the anonymous fallback.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from fastapi import Request

from tansaku.server.errors import ApiError


class KeyStore(Protocol):
    """The API keys (``tansaku.appdb``): a key's team, whether any active key exists, and
    whether keyless access is on (an explicit setting, not "no active key")."""

    def verify(self, key: str) -> str | None: ...

    def any(self) -> bool: ...

    def keyless(self) -> bool: ...


SessionResolver = Callable[[Request], str | None]


class ServerNotSecured(Exception):
    """Binding to a non-loopback address with no API key configured."""

    def __init__(self, host: str) -> None:
        super().__init__(
            f"{host} で待ち受けるには API キーが必要です。"
            "`tansaku keys create --team チーム名` でキーを作成するか、"
            "--host 127.0.0.1 で起動してください"
        )


def presented_key(request: Request) -> str | None:
    """The key of ``Authorization: Bearer`` or ``X-API-Key`` (None when neither is sent)."""
    auth = request.headers.get("authorization")
    if auth:
        scheme, _, value = auth.partition(" ")
        if scheme.lower() != "bearer" or not value.strip():
            raise ApiError(
                401,
                "invalid_authorization",
                "Authorization ヘッダーは「Bearer <APIキー>」の形で送ってください",
                headers={"WWW-Authenticate": "Bearer"},
            )
        return value.strip()
    key = request.headers.get("x-api-key")
    return key.strip() if key is not None else None


def authenticate(
    request: Request,
    *,
    keys: KeyStore | None,
    keyless: bool,
    default_team: str,
    session: SessionResolver | None = None,
) -> str:
    """The caller's team, or a 401 :class:`ApiError`."""
    key = presented_key(request)
    if key is not None:
        team = keys.verify(key) if keys is not None and key else None
        if team is None:
            raise ApiError(
                401,
                "invalid_key",
                "API キーが正しくありません",
                headers={"WWW-Authenticate": "Bearer"},
            )
        return team
    if session is not None:
        team = session(request)
        if team is not None:
            return team
    if keyless:
        return default_team
    raise ApiError(
        401,
        "unauthorized",
        "API キーが必要です。Authorization: Bearer <キー> か X-API-Key ヘッダーで送ってください",
        headers={"WWW-Authenticate": "Bearer"},
    )

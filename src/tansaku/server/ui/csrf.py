"""CSRF protection for every state-changing request a browser can make (pure ASGI).

- A request that carries an API key (``Authorization`` / ``X-API-Key``) passes: browsers cannot
  add those headers to a cross-site request, and the key — not a cookie — authenticates it.
- A request from another site is refused (``Sec-Fetch-Site`` cross-site/same-site, or an
  ``Origin`` whose host is not this server's), whatever it carries.
- A request that carries the session cookie must send the session's CSRF token in the
  ``X-CSRF-Token`` header (the UI's ``fetch`` calls do); the two form routes of the UI (login,
  logout) check a hidden form field themselves.
- Anything else (no key, no cookie, same origin or no browser at all) goes on to the API's own
  authentication: the keyless loopback demo for curl, else a 401.
"""

from __future__ import annotations

import json
from http.cookies import CookieError, SimpleCookie
from urllib.parse import urlsplit

from starlette.types import ASGIApp, Receive, Scope, Send

from tansaku.server.ui.sessions import COOKIE, CSRF_HEADER, Sessions, same_token

SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS", "TRACE"})
FORM_PATHS = frozenset({"/login", "/logout"})
CROSS_SITE = "別のサイトからの操作は受け付けません"
EXPIRED = "セッションの有効期限が切れました。ページを再読み込みしてください"
MISSING = (
    "CSRF トークンがないか正しくありません。ページを再読み込みしてからもう一度操作してください"
)


def _headers(scope: Scope) -> dict[str, str]:
    return {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}


def cookie_value(cookie_header: str | None, name: str) -> str | None:
    if not cookie_header:
        return None
    jar: SimpleCookie = SimpleCookie()
    try:
        jar.load(cookie_header)
    except CookieError:
        return None
    morsel = jar.get(name)
    return morsel.value if morsel is not None else None


def from_other_site(headers: dict[str, str]) -> bool:
    """Whether the browser says the request comes from another site or origin host.

    ``Sec-Fetch-Site`` decides when the browser sends it (every current browser does): the
    pages' ``Referrer-Policy: no-referrer`` makes Chromium send ``Origin: null`` on its own
    form posts, so ``Origin`` is only the fallback for older browsers."""
    fetch_site = headers.get("sec-fetch-site")
    if fetch_site is not None:
        return fetch_site in ("cross-site", "same-site")
    origin = headers.get("origin")
    if origin is None:
        return False
    host = headers.get("x-forwarded-host") or headers.get("host", "")
    return origin == "null" or urlsplit(origin).netloc.lower() != host.lower()


class CsrfGuard:
    def __init__(self, app: ASGIApp, *, sessions: Sessions) -> None:
        self.app = app
        self.sessions = sessions

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] in SAFE_METHODS:
            await self.app(scope, receive, send)
            return
        headers = _headers(scope)
        refusal = self._refusal(scope.get("path", ""), headers)
        if refusal is None:
            await self.app(scope, receive, send)
            return
        code, message = refusal
        body = json.dumps({"error": {"code": code, "message": message}}, ensure_ascii=False)
        data = body.encode("utf-8")
        await send(
            {
                "type": "http.response.start",
                "status": 403,
                "headers": [
                    (b"content-type", b"application/json"),
                    (b"content-length", str(len(data)).encode()),
                ],
            }
        )
        await send({"type": "http.response.body", "body": data})

    def _refusal(self, path: str, headers: dict[str, str]) -> tuple[str, str] | None:
        if "authorization" in headers or "x-api-key" in headers:
            return None
        if from_other_site(headers):
            return "cross_site_request", CROSS_SITE
        if path in FORM_PATHS:
            return None
        token = cookie_value(headers.get("cookie"), COOKIE)
        if token is None:
            return None
        session = self.sessions.get(token)
        if session is None:
            return "session_expired", EXPIRED
        if not same_token(headers.get(CSRF_HEADER), session.csrf):
            return "csrf_failed", MISSING
        return None

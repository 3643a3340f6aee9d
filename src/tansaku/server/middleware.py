"""ASGI middleware of the app: security headers, request size limits, request metrics.

Pure ASGI (no ``BaseHTTPMiddleware``): streamed responses (SSE) pass through untouched and a
body is counted as it arrives, so a lying or missing ``Content-Length`` cannot get a large body
past the limit.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from tansaku.server.errors import BodyTooLarge, send_error
from tansaku.server.metrics import UNMATCHED_ROUTE, Metrics

# No inline script or style anywhere (the UI ships its scripts as files); frames denied twice.
CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "font-src 'self'; connect-src 'self'; object-src 'none'; base-uri 'none'; "
    "frame-ancestors 'none'; form-action 'self'"
)
SECURITY_HEADERS: tuple[tuple[bytes, bytes], ...] = (
    (b"content-security-policy", CSP.encode()),
    (b"x-content-type-options", b"nosniff"),
    (b"x-frame-options", b"DENY"),
    (b"referrer-policy", b"no-referrer"),
    (b"cross-origin-opener-policy", b"same-origin"),
    (b"permissions-policy", b"camera=(), microphone=(), geolocation=()"),
)


class HttpMiddleware:
    """A pure ASGI middleware of HTTP requests: :meth:`handle` sees each one; anything else
    (lifespan, websockets) goes to the app untouched."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            await self.handle(scope, receive, send)
        else:
            await self.app(scope, receive, send)

    async def handle(self, scope: Scope, receive: Receive, send: Send) -> None:
        raise NotImplementedError


class SecurityHeaders(HttpMiddleware):
    async def handle(self, scope: Scope, receive: Receive, send: Send) -> None:
        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                present = {k.lower() for k, _ in message.get("headers", [])}
                extra = [(k, v) for k, v in SECURITY_HEADERS if k not in present]
                message = {**message, "headers": [*message.get("headers", []), *extra]}
            await send(message)

        await self.app(scope, receive, send_with_headers)


BAD_LENGTH = "Content-Length が正しくありません。本文のバイト数を 0 以上の整数で送ってください"


class BodyLimit(HttpMiddleware):
    """413 for a body larger than ``limit_for(path)`` bytes, declared or received; 400
    ``invalid_content_length`` for a ``Content-Length`` that is not a number (uvicorn refuses
    one before the app sees it — ``tansaku.server.protocol`` — other ASGI servers may not)."""

    def __init__(self, app: ASGIApp, *, limit_for: Callable[[str], int]) -> None:
        super().__init__(app)
        self.limit_for = limit_for

    async def handle(self, scope: Scope, receive: Receive, send: Send) -> None:
        limit = self.limit_for(scope.get("path", ""))
        declared = _header(scope, b"content-length")
        if declared is not None and not declared.isdigit():
            await send_error(send, 400, "invalid_content_length", BAD_LENGTH)
            return
        if declared is not None and int(declared) > limit:
            await send_error(send, 413, "payload_too_large", str(BodyTooLarge(limit).detail))
            return
        received = 0

        async def counted() -> Message:
            nonlocal received
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > limit:
                    raise BodyTooLarge(limit)
            return message

        await self.app(scope, counted, send)


class RequestMetrics(HttpMiddleware):
    """Counts every response by route template and status."""

    def __init__(self, app: ASGIApp, *, metrics: Metrics) -> None:
        super().__init__(app)
        self.metrics = metrics

    async def handle(self, scope: Scope, receive: Receive, send: Send) -> None:
        status = 500

        async def watch(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = int(message["status"])
            await send(message)

        try:
            await self.app(scope, receive, watch)
        finally:
            route = getattr(scope.get("route"), "path", None) or UNMATCHED_ROUTE
            self.metrics.http_requests_total.labels(route=route, status=str(status)).inc()


def _header(scope: Scope, name: bytes) -> str | None:
    for key, value in scope.get("headers", []):
        if key.lower() == name:
            return str(value.decode("latin-1").strip())
    return None


__all__: list[Any] = ["BodyLimit", "HttpMiddleware", "RequestMetrics", "SecurityHeaders"]

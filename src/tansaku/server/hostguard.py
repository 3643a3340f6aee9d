"""The keyless server's guard against DNS rebinding and cross-origin writes (pure ASGI).

A server that serves requests without a key (the loopback demo) trusts whoever reaches it. A
web page on another site can reach it through the browser: by DNS rebinding (its own name,
re-pointed at 127.0.0.1, so the browser thinks it talks to the page's origin — the ``Host``
header still names the attacker's domain) or by posting across origins. While the server is
keyless, this guard:

- answers **421** ``host_not_allowed`` to a request whose ``Host`` is not a loopback name
  (``127.0.0.1`` and the rest of 127/8, ``localhost``, ``[::1]``; any port) or one of
  ``ServerSettings.allowed_hosts`` (``tansaku serve --allow-host NAME``) — a missing ``Host``
  too;
- answers **403** ``cross_site_request`` to a write (any method but GET, HEAD, OPTIONS) that
  a browser says comes from another origin (``Origin`` whose host and port are not this
  request's ``Host``, ``Origin: null`` without ``Sec-Fetch-Site: same-origin``, or
  ``Sec-Fetch-Site: cross-site``/``same-site``), unless the origin is one of
  ``ServerSettings.cors_origins``.

A server that requires keys is left alone (a key, not the network, authenticates there).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from urllib.parse import urlsplit

from starlette.types import ASGIApp, Receive, Scope, Send

from tansaku.server.errors import send_error
from tansaku.server.middleware import HttpMiddleware
from tansaku.server.settings import is_loopback

SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
HOST_REFUSED = (
    "このホスト名ではアクセスできません。キーなしで動いているサーバーは 127.0.0.1・localhost・"
    "[::1] と、--allow-host で許可した名前だけを受け付けます"
)
ORIGIN_REFUSED = (
    "別のサイトからの書き込みは受け付けません(キーなしで動いているサーバーです)。"
    "この画面か curl などから操作してください"
)


def host_name(host: str) -> str:
    """The name of a ``Host`` header without its port: ``[::1]:8000`` → ``::1``,
    ``LocalHost.:80`` → ``localhost``."""
    text = host.strip().lower()
    if text.startswith("["):
        end = text.find("]")
        return text[1:end] if end > 0 else ""  # "[::1" is no host name
    name, _, port = text.rpartition(":")
    if name and port.isdigit():
        text = name
    return text.rstrip(".") if text not in (".", "") else text


def allowed_host(host: str | None, allowed: Iterable[str]) -> bool:
    """Whether ``host`` (a ``Host`` header) names loopback or one of ``allowed``."""
    if not host:
        return False
    name = host_name(host)
    if not name:
        return False
    if is_loopback(name):
        return True
    return name in {host_name(a) for a in allowed}


def cross_origin(headers: dict[str, str], host: str, cors_origins: Iterable[str]) -> bool:
    """Whether the browser says a request comes from another origin than ``host``'s."""
    origin = headers.get("origin")
    site = headers.get("sec-fetch-site")
    if origin is not None and origin in set(cors_origins):
        return False
    if site in ("cross-site", "same-site"):
        return True
    if origin is None:
        return False
    if origin == "null":
        return site != "same-origin"
    return urlsplit(origin).netloc.lower() != host.strip().lower()


class KeylessGuard(HttpMiddleware):
    """See the module docstring; ``keyless()`` is asked per request (keys may be created or
    keyless access switched while the server runs)."""

    def __init__(
        self,
        app: ASGIApp,
        *,
        keyless: Callable[[], bool],
        allowed_hosts: tuple[str, ...] = (),
        cors_origins: tuple[str, ...] = (),
    ) -> None:
        super().__init__(app)
        self.keyless = keyless
        self.allowed_hosts = tuple(allowed_hosts)
        self.cors_origins = tuple(cors_origins)

    async def handle(self, scope: Scope, receive: Receive, send: Send) -> None:
        if not self.keyless():
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        host = headers.get("host")
        if not allowed_host(host, self.allowed_hosts):
            await send_error(send, 421, "host_not_allowed", HOST_REFUSED)
            return
        method = str(scope.get("method", "GET")).upper()
        if method not in SAFE_METHODS and cross_origin(headers, host or "", self.cors_origins):
            await send_error(send, 403, "cross_site_request", ORIGIN_REFUSED)
            return
        await self.app(scope, receive, send)

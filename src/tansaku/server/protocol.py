"""The HTTP protocol ``tansaku serve`` runs uvicorn with: uvicorn's own, answering a request it
cannot parse with the API's JSON error body instead of plain text.

uvicorn parses the request line and headers (h11, or httptools when installed) before the app
is called. A request it cannot parse — a ``Content-Length`` that is not a number (``abc``,
``-1``, ``1e3``), two different ones, a header line without a colon, bytes outside ASCII in the
URL — never reaches the app, its middleware or its exception handlers: uvicorn writes a
plain-text ``400 Invalid HTTP request received.`` and closes the connection. These subclasses
write, at the same point, a 400 ``{"error": {"code": "invalid_http_request", "message"}}``
with the security headers of every other answer, then close the connection as uvicorn does.

    uvicorn.run(app, http=http_protocol())

``send_400_response(msg)`` is the method uvicorn's h11 and httptools protocols (0.2x–0.5x)
call for this; a uvicorn without it keeps its plain-text answer (``http_protocol`` returns its
class unchanged). An app served by another ASGI server still answers a non-numeric
``Content-Length`` that reaches it with a JSON 400 (``BodyLimit``).
"""

from __future__ import annotations

import asyncio
from functools import cache
from typing import Any

from uvicorn.protocols.http.h11_impl import H11Protocol

from tansaku.server.errors import error_bytes
from tansaku.server.middleware import SECURITY_HEADERS

CODE = "invalid_http_request"
MESSAGE = (
    "HTTP リクエストを読めません。ヘッダー(Content-Length など)と URL を確かめてください"
    "(URL の日本語はパーセントエンコードして送ってください)"
)


def bad_request_bytes(default_headers: list[tuple[bytes, bytes]] | None = None) -> bytes:
    """The whole 400 answer (status line, headers, JSON body) as written to the socket."""
    body = error_bytes(CODE, MESSAGE)
    headers = [
        *(default_headers or []),
        (b"content-type", b"application/json"),
        (b"content-length", str(len(body)).encode("ascii")),
        (b"connection", b"close"),
        *SECURITY_HEADERS,
    ]
    head = b"".join(name + b": " + value + b"\r\n" for name, value in headers)
    return b"HTTP/1.1 400 Bad Request\r\n" + head + b"\r\n" + body


def _answer(protocol: Any) -> None:
    transport: asyncio.Transport = protocol.transport
    transport.write(bad_request_bytes(list(protocol.server_state.default_headers)))
    transport.close()


class JsonH11Protocol(H11Protocol):
    def send_400_response(self, msg: str) -> None:
        _answer(self)


@cache
def http_protocol() -> type[asyncio.Protocol]:
    """The protocol class for ``uvicorn.run(..., http=…)``: httptools' when it is installed
    (what uvicorn's ``auto`` picks), else h11's — each with the JSON 400."""
    try:
        from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol
    except ImportError:  # httptools is not installed: uvicorn runs h11
        base: type[asyncio.Protocol] = H11Protocol
        chosen: type[asyncio.Protocol] = JsonH11Protocol
    else:

        class JsonHttpToolsProtocol(HttpToolsProtocol):
            def send_400_response(self, msg: str) -> None:
                _answer(self)

        base, chosen = HttpToolsProtocol, JsonHttpToolsProtocol
    if not callable(getattr(base, "send_400_response", None)):
        return base  # a uvicorn that answers these some other way: keep its own
    return chosen

"""A request uvicorn cannot parse — a ``Content-Length`` that is not a number, two different
ones, raw UTF-8 in the URL — is refused by uvicorn before the app sees it (plain-text 400).
``tansaku serve`` runs uvicorn with :func:`tansaku.server.protocol.http_protocol`, which answers
it with the API's JSON error body; under an ASGI server that lets such a request through, the
app's ``BodyLimit`` answers a JSON 400 itself."""

from __future__ import annotations

import asyncio
import json
import socket
from types import SimpleNamespace
from typing import Any

import pytest
import uvicorn

from tansaku.server.middleware import BodyLimit
from tansaku.server.protocol import CODE, http_protocol

from .support import KEY_ALPHA, live_server

pytestmark = pytest.mark.integration

SEARCH = {"query": "冷蔵庫", "collection": "manuals"}
MALFORMED = {
    "letters": b"POST /api/search HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: abc\r\n\r\n",
    "negative": b"POST /api/search HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: -1\r\n\r\n",
    "exponent": b"POST /api/search HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 1e3\r\n\r\n",
    "two lengths": b"POST /api/search HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 3\r\n"
    b"Content-Length: 4\r\n\r\nabcd",
    "raw utf-8 url": "GET /api/collections/冷蔵庫/config HTTP/1.1\r\n".encode()
    + b"Host: 127.0.0.1\r\n\r\n",
}


def _exchange(base_url: str, raw: bytes) -> tuple[int, dict[str, str], bytes]:
    """Send ``raw`` on a new connection; the status, headers and body until the server closes."""
    port = int(base_url.rsplit(":", 1)[1])
    with socket.create_connection(("127.0.0.1", port), timeout=30) as sock:
        sock.sendall(raw)
        data = b""
        while chunk := sock.recv(65536):
            data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    headers = {k.strip().lower(): v.strip() for k, _, v in (h.partition(":") for h in lines[1:])}
    return int(lines[0].split()[1]), headers, body


@pytest.mark.parametrize("case", sorted(MALFORMED))
def test_a_request_uvicorn_cannot_parse_gets_the_json_400(live, case):
    status, headers, body = _exchange(live.base_url, MALFORMED[case])
    assert status == 400
    assert headers["content-type"] == "application/json"
    assert headers["x-content-type-options"] == "nosniff"
    assert headers["connection"] == "close"
    assert int(headers["content-length"]) == len(body)
    error = json.loads(body)["error"]
    assert error["code"] == CODE and "Content-Length" in error["message"]
    with live.client(KEY_ALPHA) as http:  # the server goes on serving
        assert http.post("/api/search", json=SEARCH).status_code == 200


def test_plain_uvicorn_answers_it_before_the_app_in_plain_text():
    """Why the protocol exists: uvicorn's own 400 — the app (its middleware, its handlers) is
    never called."""
    called: list[Any] = []

    async def app(scope: Any, receive: Any, send: Any) -> None:
        called.append(scope)

    with live_server(app, http="h11") as plain:
        status, headers, body = _exchange(plain.base_url, MALFORMED["letters"])
    assert status == 400
    assert headers["content-type"].startswith("text/plain")
    assert b"error" not in body
    assert [s for s in called if s["type"] == "http"] == []


def test_tansaku_serve_runs_uvicorn_with_the_protocol(tmp_path, monkeypatch):
    from typer.testing import CliRunner

    import tansaku.server
    from tansaku.cli.main import app

    seen: dict[str, Any] = {}
    served = SimpleNamespace(state=SimpleNamespace(tansaku=SimpleNamespace(keyless=lambda: True)))
    created = lambda home, settings, **kw: seen.update(created=kw) or served  # noqa: E731
    monkeypatch.setattr(tansaku.server, "create_app", created)
    monkeypatch.setattr(uvicorn, "run", lambda asgi, **kw: seen.update(kw, app=asgi))
    result = CliRunner().invoke(app, ["serve", "--home", str(tmp_path / "ws")])
    assert result.exit_code == 0, result.output
    assert seen["app"] is served and seen["http"] is http_protocol()
    assert seen["created"] == {"freeze_heap": True}  # a process that only serves freezes


def _call(middleware: Any, headers: list[tuple[bytes, bytes]]) -> list[dict[str, Any]]:
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b"{}", "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    scope = {"type": "http", "method": "POST", "path": "/api/search", "headers": headers}
    asyncio.run(middleware(scope, receive, send))
    return sent


def test_body_limit_answers_a_length_that_is_no_number_with_a_json_400():
    async def app(scope: Any, receive: Any, send: Any) -> None:
        raise AssertionError("the app must not be called")

    limit = BodyLimit(app, limit_for=lambda path: 1024)
    for value in (b"abc", b"-1", b"1e3", b"3, 4"):
        start, body = _call(limit, [(b"content-length", value)])
        assert start["status"] == 400
        assert json.loads(body["body"])["error"]["code"] == "invalid_content_length"
    start, _ = _call(limit, [(b"content-length", b"4096")])
    assert start["status"] == 413

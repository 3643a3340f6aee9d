"""The HTTP plumbing every fake protocol server shares: a threaded server on 127.0.0.1
(ephemeral port) run in a background thread, the request read into ``(method, path, query,
headers, body bytes)``, and the answer written whole (JSON) or streamed (SSE).

A fake subclasses :class:`HTTPFake` and implements :meth:`HTTPFake.handle`; it records what it
received in its own request type (``_record``) and sleeps with :meth:`HTTPFake.wait`, which a
closing server cuts short.
"""

from __future__ import annotations

import json
import threading
import unicodedata
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Generic, Self, TypeVar

Response = tuple[int, dict[str, str], bytes | Iterable[bytes]]
"""``(status, headers, body)``: bytes are sent with a ``Content-Length``, an iterable of bytes
is streamed chunk by chunk and the connection closed after it."""

R = TypeVar("R")

GOOGLE_STATUS = {
    400: "INVALID_ARGUMENT",
    401: "UNAUTHENTICATED",
    403: "PERMISSION_DENIED",
    404: "NOT_FOUND",
    429: "RESOURCE_EXHAUSTED",
    500: "INTERNAL",
    503: "UNAVAILABLE",
    504: "DEADLINE_EXCEEDED",
}
"""Google's ``error.status`` for an HTTP status (the Gemini API's error bodies)."""


def json_response(status: int, payload: Any, headers: Mapping[str, str] | None = None) -> Response:
    """``payload`` as UTF-8 JSON (Japanese unescaped) with ``headers`` added."""
    data = json.dumps(payload, ensure_ascii=False).encode("utf-8")
    return status, {"Content-Type": "application/json", **(headers or {})}, data


def openai_error_body(
    message: str, kind: str, param: str | None = None, code: str | None = None
) -> dict[str, Any]:
    """OpenAI's error body ``{"error": {"message", "type", "param", "code"}}``."""
    return {"error": {"message": message, "type": kind, "param": param, "code": code}}


def google_error_body(status: int, message: str, **extra: Any) -> dict[str, Any]:
    """Google's error body ``{"error": {"code", "message", "status", ...}}`` (the Gemini API)."""
    status_name = GOOGLE_STATUS.get(status, "UNKNOWN")
    return {"error": {"code": status, "message": message, "status": status_name, **extra}}


def json_body(raw: bytes) -> Any:
    """A request body parsed as UTF-8 JSON, or ``None`` when it is empty or not JSON."""
    try:
        return json.loads(raw.decode("utf-8")) if raw else None
    except (UnicodeDecodeError, ValueError):
        return None


def sse(payload: Any) -> bytes:
    """One server-sent event ``data: {json}``."""
    return b"data: " + json.dumps(payload, ensure_ascii=False).encode("utf-8") + b"\n\n"


def header(headers: Mapping[str, str], name: str) -> str:
    """The value of header ``name`` in any case, or ``""``."""
    return next((v for k, v in headers.items() if k.lower() == name.lower()), "")


def bearer_refused(headers: Mapping[str, str], api_key: str | None) -> bool:
    """True when the fake wants a key (``api_key`` set) and ``Authorization: Bearer`` lacks it."""
    return api_key is not None and header(headers, "authorization") != f"Bearer {api_key}"


def bigrams(text: str) -> list[str]:
    """The character bigrams of ``text`` (NFKC, lowercased, whitespace removed); a one-character
    text is its own bigram. What the fakes score and embed with: meaningful for Japanese without
    a tokenizer."""
    t = "".join(unicodedata.normalize("NFKC", text).lower().split())
    if len(t) < 2:
        return [t] if t else []
    return [t[i : i + 2] for i in range(len(t) - 1)]


class Reject(Exception):
    """A request the real server would refuse: its HTTP status, message and the field at fault
    (``""`` when none)."""

    def __init__(self, status: int, message: str, field: str = "") -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.field = field


@dataclass(frozen=True)
class ProtocolRequest:
    """One request a fake speaking several protocols received, recorded before any check."""

    method: str
    path: str
    protocol: str
    """The protocol of the path, or ``""`` for other paths."""
    headers: Mapping[str, str]
    body: Any
    """The parsed JSON body, or ``None`` when it was not JSON."""


@dataclass(frozen=True)
class HTTPRequest:
    """One request as the handler read it."""

    method: str
    path: str
    """Without the query string."""
    query: Mapping[str, str]
    headers: Mapping[str, str]
    """As sent (names in their original case)."""
    raw: bytes

    @property
    def route(self) -> str:
        """``path`` without a trailing slash (``/`` for the root)."""
        return self.path.rstrip("/") or "/"

    @property
    def body(self) -> Any:
        """The body parsed as JSON, or ``None`` (see :func:`json_body`)."""
        return json_body(self.raw)


class HTTPFake(Generic[R]):
    """A fake server's lifecycle and records; ``R`` is the type of a recorded request.

    Use it as a context manager, or call :meth:`start` and :meth:`close`.
    """

    server_name = "Fake/1.0"
    """The ``Server`` header."""
    keep_alive = False
    """Speak HTTP/1.1 with persistent connections (the embedding SDKs' pools expect it)."""
    request_queue_size = 5
    health = False
    """Answer ``GET /health`` with ``{"status": "ok"}`` (and record nothing)."""

    def __init__(self) -> None:
        self._requests: list[R] = []
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._httpd: _HTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle ------------------------------------------------------------------------------

    def start(self) -> Self:
        if self._httpd is None:
            self._stop.clear()
            handler = _KeepAliveHandler if self.keep_alive else _Handler
            self._httpd = _HTTPServer(("127.0.0.1", 0), handler, self)
            self._thread = threading.Thread(
                target=self._httpd.serve_forever,
                kwargs={"poll_interval": 0.01},
                name=type(self).__name__,
                daemon=True,
            )
            self._thread.start()
        return self

    def close(self) -> None:
        if self._httpd is None:
            return
        self._stop.set()  # wakes handlers sleeping in a delay
        self._httpd.shutdown()
        self._httpd.server_close()
        if self._thread is not None:
            self._thread.join()
        self._httpd = None
        self._thread = None

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def url(self) -> str:
        """``http://127.0.0.1:PORT`` (no trailing slash)."""
        if self._httpd is None:
            raise RuntimeError(f"{type(self).__name__} is not running: use `with` or start()")
        return f"http://127.0.0.1:{self._httpd.server_address[1]}"

    def wait(self, seconds: float) -> bool:
        """Sleep (woken early when the server closes); True when it is closing."""
        return seconds > 0 and self._stop.wait(seconds)

    # -- records --------------------------------------------------------------------------------

    @property
    def requests(self) -> list[R]:
        """Every request received so far, oldest first (a copy)."""
        with self._lock:
            return list(self._requests)

    def _record(self, request: R) -> int:
        """Append ``request``; its index."""
        with self._lock:
            self._requests.append(request)
            return len(self._requests) - 1

    # -- handling -------------------------------------------------------------------------------

    def answer(self, request: HTTPRequest) -> Response:
        if self.health and request.method == "GET" and request.route == "/health":
            return json_response(200, {"status": "ok"})
        return self.handle(request)

    def handle(self, request: HTTPRequest) -> Response:
        """Answer one request."""
        raise NotImplementedError


class ServiceFake(HTTPFake[R]):
    """A fake model service (embeddings, rerank): answers ``GET /health``, and has the knobs
    every such fake reads on each request, so a test may change them while it runs: the key it
    wants (``api_key``; ``None``: any), a delay before answering, an HTTP error to answer with."""

    health = True

    def __init__(
        self, *, api_key: str | None = None, delay_s: float = 0.0, status: int | None = None
    ) -> None:
        super().__init__()
        self.api_key = api_key
        self.delay_s = delay_s
        self.status = status

    def error_status(self, scripted: int | None = None) -> int | None:
        """The HTTP error to answer with: ``scripted`` (a fault for this request), else
        ``status``; ``None`` when neither is an error status."""
        status = scripted or self.status
        return status if status is not None and status >= 400 else None

    def reset(self) -> None:
        """Forget the requests received so far."""
        with self._lock:
            self._requests.clear()


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(
        self, address: tuple[str, int], handler: type[_Handler], fake: HTTPFake[Any]
    ) -> None:
        self.request_queue_size = fake.request_queue_size
        self.fake = fake
        super().__init__(address, handler)

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # a client that gave up (timeout) is expected; nothing to report


class _Handler(BaseHTTPRequestHandler):
    server: _HTTPServer

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def version_string(self) -> str:
        return self.server.fake.server_name

    def _dispatch(self, method: str) -> None:
        path, _, qs = self.path.partition("?")
        query = {k: v for k, _, v in (p.partition("=") for p in qs.split("&") if p)}
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length > 0 else b""
        request = HTTPRequest(method, path, query, dict(self.headers.items()), raw)
        status, out_headers, data = self.server.fake.answer(request)
        try:
            self.send_response(status)
            for key, value in out_headers.items():
                self.send_header(key, value)
            if isinstance(data, bytes):
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
                return
            self.send_header("Connection", "close")  # the body ends when the stream closes
            self.close_connection = True
            self.end_headers()
            for chunk in data:
                self.wfile.write(chunk)
                self.wfile.flush()
        except OSError:
            self.close_connection = True  # the client timed out and closed the connection

    def do_GET(self) -> None:
        self._dispatch("GET")

    def do_POST(self) -> None:
        self._dispatch("POST")


class _KeepAliveHandler(_Handler):
    protocol_version = "HTTP/1.1"

"""A local fake of a public dataset host (a static file server): files served whole or
streamed without a length, redirects, and a record of every request, so a download's checks can
be seen to refuse before any connection.

>>> with FakeDatasetServer({"/faq.jsonl": data}) as site:
...     download(f"{site.url}/faq.jsonl", folder, settings)
"""

from __future__ import annotations

import ssl
import threading
from collections.abc import Iterator, Mapping
from typing import Self

from tansaku.testing._http_fake import HTTPFake, HTTPRequest, Response, _Handler, _HTTPServer

TYPES = {
    ".jsonl": "application/jsonl",
    ".json": "application/json",
    ".csv": "text/csv; charset=utf-8",
    ".txt": "text/plain; charset=utf-8",
    ".md": "text/markdown; charset=utf-8",
    ".zip": "application/zip",
    ".html": "text/html; charset=utf-8",
}


class FakeDatasetServer(HTTPFake[HTTPRequest]):
    """Serves ``files`` (path → bytes) with a content type by suffix; ``streamed`` paths are
    sent in chunks with no ``Content-Length``; ``redirects`` (path → Location) answer 302;
    ``types`` (path → Content-Type) overrides the type of a suffix; ``tls`` (a server
    :class:`ssl.SSLContext`) serves HTTPS."""

    def __init__(
        self,
        files: Mapping[str, bytes],
        *,
        streamed: frozenset[str] = frozenset(),
        redirects: Mapping[str, str] | None = None,
        types: Mapping[str, str] | None = None,
        tls: ssl.SSLContext | None = None,
    ) -> None:
        super().__init__()
        self.files = dict(files)
        self.streamed = streamed
        self.redirects = dict(redirects or {})
        self.types = dict(types or {})
        self.tls = tls

    def start(self) -> Self:
        """As :meth:`HTTPFake.start`; with ``tls`` (a server context) the socket speaks TLS."""
        if self.tls is None or self._httpd is not None:
            return super().start()
        self._stop.clear()
        self._httpd = _HTTPServer(("127.0.0.1", 0), _Handler, self)
        self._httpd.socket = self.tls.wrap_socket(self._httpd.socket, server_side=True)
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True
        )
        self._thread.start()
        return self

    @property
    def port(self) -> int:
        return int(self.url.rsplit(":", 1)[1])

    def handle(self, request: HTTPRequest) -> Response:
        self._record(request)
        path = request.path
        if path in self.redirects:
            return 302, {"Location": self.redirects[path]}, b""
        data = self.files.get(path)
        if data is None:
            return 404, {"Content-Type": "text/plain"}, b"not found"
        suffix = path[path.rfind(".") :] if "." in path else ""
        kind = self.types.get(path) or TYPES.get(suffix, "application/octet-stream")
        headers = {"Content-Type": kind}
        if path in self.streamed:
            return 200, headers, _chunks(data)
        return 200, headers, data


def _chunks(data: bytes, size: int = 16 * 1024) -> Iterator[bytes]:
    for i in range(0, len(data), size):
        yield data[i : i + size]


__all__ = ["FakeDatasetServer"]

"""The HTTP clients of the load benchmarks: one keep-alive connection per client thread.

The load generator runs on the same cores as the server it measures, so what it spends on a
request is taken from the server. ``stdlib`` (the default of ``bench/serve_load.py``) is one
``http.client.HTTPConnection`` per thread: the request's JSON written with ``json.dumps``, the
answer read as bytes — measured at ~0.7 ms of the generator's CPU a request. ``httpx`` is one
``httpx.Client`` per thread (what the benchmark used before, and what a Python application
calling the API would use): ~4.5 ms a request, which at 150 requests a second is most of a core
of the two. ``--http-client stdlib,httpx`` runs both in turn to show what the choice moves.
"""

from __future__ import annotations

import http.client
import json
from typing import Any, Protocol
from urllib.parse import urlsplit

import httpx

KINDS = ("stdlib", "httpx")
ERRORS: tuple[type[BaseException], ...] = (OSError, http.client.HTTPException, httpx.HTTPError)
"""What a request may raise: counted as an error of the run, as a non-200 answer is."""


class LoadClient(Protocol):
    def post_json(self, path: str, body: dict[str, Any]) -> tuple[int, bytes]:
        """POST ``body`` as JSON; the answer's status and bytes."""

    def close(self) -> None: ...


class StdlibClient:
    """``http.client`` over one kept-alive connection, opened again after a failure."""

    def __init__(self, base: str, timeout: float) -> None:
        parts = urlsplit(base)
        self._host, self._port = parts.hostname or "127.0.0.1", parts.port or 80
        self._timeout = timeout
        self._conn: http.client.HTTPConnection | None = None

    def post_json(self, path: str, body: dict[str, Any]) -> tuple[int, bytes]:
        if self._conn is None:
            self._conn = http.client.HTTPConnection(self._host, self._port, timeout=self._timeout)
        data = json.dumps(body, ensure_ascii=False).encode("utf-8")
        headers = {"content-type": "application/json"}
        try:
            self._conn.request("POST", path, data, headers)
            answer = self._conn.getresponse()
            return answer.status, answer.read()
        except BaseException:
            self.close()
            raise

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None


class HttpxClient:
    """``httpx.Client`` with one connection."""

    def __init__(self, base: str, timeout: float) -> None:
        limits = httpx.Limits(max_keepalive_connections=1, max_connections=1)
        self._http = httpx.Client(base_url=base, timeout=timeout, limits=limits)

    def post_json(self, path: str, body: dict[str, Any]) -> tuple[int, bytes]:
        answer = self._http.post(path, json=body)
        return answer.status_code, answer.content

    def close(self) -> None:
        self._http.close()


def open_client(kind: str, base: str, timeout: float = 120.0) -> LoadClient:
    """A client of ``kind`` (:data:`KINDS`) to the server at ``base``."""
    if kind == "stdlib":
        return StdlibClient(base, timeout)
    if kind == "httpx":
        return HttpxClient(base, timeout)
    raise SystemExit(f"--http-client: {kind!r} is not one of {', '.join(KINDS)}")


def parse_kinds(value: str) -> list[str]:
    kinds = [k.strip() for k in value.split(",") if k.strip()]
    bad = [k for k in kinds if k not in KINDS]
    if not kinds or bad:
        raise SystemExit(f"--http-client: choose from {', '.join(KINDS)} (got {value!r})")
    return kinds

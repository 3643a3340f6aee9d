"""A local fake embedding server: real HTTP on 127.0.0.1, two protocols, misbehaviour on demand.

It ships with the library (like the fake rerank server) so that remote embedders can be tested
and benchmarked with no model, no GPU and no network::

    with FakeEmbeddingServer(dim=64) as srv:
        emb = OpenAIEmbedder(base_url=f"{srv.url}/v1", model="fake-e5")
        emb.embed_passages(["料理が冷めていた", "駐車場の案内"])
        assert srv.requests[-1].body["input"] == ["料理が冷めていた", "駐車場の案内"]

Endpoints: ``POST /v1/embeddings`` (the OpenAI API, also served by TEI, vLLM, Infinity and
Ollama: ``input`` a string or a list of strings, ``encoding_format`` ``float`` or ``base64``,
``dimensions``), ``POST /v1beta/models/{model}:batchEmbedContents`` and ``…:embedContent``
(the Gemini API, ``taskType`` and ``outputDimensionality``), ``GET /health``.

Vectors are deterministic: a signed hashed bag of the text's character bigrams (NFKC,
lowercased, no whitespace), so texts sharing wording are near each other, Japanese included.

Behaviour knobs are attributes read on every request, so a test may change them while the
server runs: ``status`` and ``delay_s`` (every request), ``max_batch`` (more inputs than that:
413 on the OpenAI path as TEI answers, 400 ``INVALID_ARGUMENT`` on Gemini's), ``rate`` (a
service rate in texts per second: the server embeds one batch at a time, each taking
``len(batch) / rate`` seconds, like one GPU) and ``latency_s`` (per-request time that does not
hold the device, like a network round trip). :meth:`fail_next` scripts the next requests'
faults (:class:`Fault`: an HTTP status with ``Retry-After``, a delay, a wrong dimension, fewer
vectors than inputs). Every request is recorded (:attr:`requests`), with the peak number of
requests in flight (:attr:`max_in_flight`) and the texts embedded (:attr:`texts_embedded`).
"""

from __future__ import annotations

import base64
import hashlib
import json
import math
import re
import threading
import time
import unicodedata
from collections import deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import numpy as np

_GEMINI_PATH = re.compile(r"^/v1(?:beta|alpha)?/models/([^/:]+):(batchEmbedContents|embedContent)$")
_GEMINI_STATUS = {
    400: "INVALID_ARGUMENT",
    401: "UNAUTHENTICATED",
    403: "PERMISSION_DENIED",
    404: "NOT_FOUND",
    429: "RESOURCE_EXHAUSTED",
    500: "INTERNAL",
    503: "UNAVAILABLE",
}


def _bigrams(text: str) -> list[str]:
    t = "".join(unicodedata.normalize("NFKC", text).lower().split())
    if len(t) < 2:
        return [t] if t else []
    return [t[i : i + 2] for i in range(len(t) - 1)]


def fake_vector(text: str, dim: int) -> np.ndarray:
    """The fake's embedding of ``text``: a signed hashed bag of character bigrams, L2-normalised
    (float32, shape ``(dim,)``). Deterministic across processes and platforms."""
    v = np.zeros(dim, dtype=np.float32)
    for gram in _bigrams(text):
        h = int.from_bytes(hashlib.blake2b(gram.encode("utf-8"), digest_size=8).digest(), "little")
        v[h % dim] += 1.0 if (h >> 63) & 1 else -1.0
    norm = float(np.linalg.norm(v))
    if norm == 0.0:
        v[0] = 1.0
        return v
    return v / norm


@dataclass(frozen=True, kw_only=True)
class Fault:
    """One scripted misbehaviour for one request (see :meth:`FakeEmbeddingServer.fail_next`)."""

    status: int | None = None
    """Answer with this HTTP error (e.g. 429, 500, 503)."""
    retry_after: float | None = None
    """With a 429/503: ``Retry-After`` (whole seconds, rounded up) and ``retry-after-ms``
    headers on the OpenAI path, a ``RetryInfo`` detail on Gemini's."""
    delay_s: float = 0.0
    """Sleep before answering (past the client's timeout, to test timeouts)."""
    wrong_dim: int | None = None
    """Answer vectors of this many dimensions instead of the requested ones."""
    drop: int = 0
    """Answer this many vectors fewer than inputs."""


@dataclass(frozen=True)
class FakeRequest:
    """One request the fake server received, recorded before any check."""

    method: str
    path: str
    protocol: str
    """``"openai"``, ``"gemini"``, or ``""`` for other paths."""
    headers: Mapping[str, str]
    body: Any
    """The parsed JSON body, or ``None`` when it was not JSON."""
    texts: tuple[str, ...] = field(default=())
    """The input texts, when the body could be parsed."""


class _Reject(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


def _openai_error(status: int, message: str) -> dict[str, Any]:
    kind = "invalid_request_error" if status < 500 else "server_error"
    if status == 429:
        kind = "rate_limit_exceeded"
    return {"error": {"message": message, "type": kind, "param": None, "code": None}}


def _gemini_error(status: int, message: str, retry_after: float | None = None) -> dict[str, Any]:
    error: dict[str, Any] = {
        "code": status,
        "message": message,
        "status": _GEMINI_STATUS.get(status, "UNKNOWN"),
    }
    if retry_after is not None:
        error["details"] = [
            {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": f"{retry_after}s"}
        ]
    return {"error": error}


def _parse_openai(body: Any) -> tuple[str, list[str], int | None, str]:
    """(model, texts, dimensions, encoding_format) as the API accepts them, or :class:`_Reject`."""
    if not isinstance(body, dict):
        raise _Reject(400, "request body must be a JSON object")
    model = body.get("model")
    if not isinstance(model, str) or not model:
        raise _Reject(400, "'model' is a required property")
    raw = body.get("input")
    texts = [raw] if isinstance(raw, str) else raw
    if not isinstance(texts, list) or not texts or not all(isinstance(t, str) for t in texts):
        raise _Reject(400, "'input' must be a non-empty string or list of strings")
    if any(t == "" for t in texts):
        raise _Reject(400, "'input' cannot contain an empty string")
    dims = body.get("dimensions")
    if dims is not None and (isinstance(dims, bool) or not isinstance(dims, int) or dims < 1):
        raise _Reject(400, f"'dimensions' must be a positive integer, got {dims!r}")
    fmt = body.get("encoding_format", "float")
    if fmt not in ("float", "base64"):
        raise _Reject(400, f"'encoding_format' must be 'float' or 'base64', got {fmt!r}")
    return model, texts, dims, fmt


def _gemini_text(content: Any) -> str:
    if not isinstance(content, dict) or not isinstance(content.get("parts"), list):
        raise _Reject(400, "content.parts is required")
    parts = content["parts"]
    if not parts or not all(isinstance(p, dict) and isinstance(p.get("text"), str) for p in parts):
        raise _Reject(400, "only text parts are supported")
    return "".join(p["text"] for p in parts)


def _parse_gemini(method: str, model: str, body: Any) -> tuple[list[str], list[int | None]]:
    """(texts, output dimensionality per text), or :class:`_Reject` with Gemini's 400."""
    if not isinstance(body, dict):
        raise _Reject(400, "Invalid JSON payload received.")
    requests = body.get("requests") if method == "batchEmbedContents" else [body]
    if not isinstance(requests, list) or not requests:
        raise _Reject(400, "* BatchEmbedContentsRequest.requests: requests is required")
    texts, dims = [], []
    for i, req in enumerate(requests):
        if not isinstance(req, dict):
            raise _Reject(400, f"requests[{i}] must be an object")
        if method == "batchEmbedContents" and req.get("model") not in (None, f"models/{model}"):
            raise _Reject(
                400, f"requests[{i}].model {req.get('model')!r} differs from models/{model}"
            )
        task = req.get("taskType")
        if task is not None and not isinstance(task, str):
            raise _Reject(400, f"requests[{i}].taskType must be a string")
        dim = req.get("outputDimensionality")
        if dim is not None and (isinstance(dim, bool) or not isinstance(dim, int) or dim < 1):
            raise _Reject(400, f"requests[{i}].outputDimensionality must be a positive integer")
        texts.append(_gemini_text(req.get("content")))
        dims.append(dim)
    return texts, dims


class FakeEmbeddingServer:
    """An embedding server on 127.0.0.1 (ephemeral port) in a background thread.

    Use it as a context manager, or call :meth:`start` and :meth:`close`.
    """

    def __init__(
        self,
        *,
        dim: int = 256,
        api_key: str | None = None,
        max_batch: int | None = 128,
        rate: float | None = None,
        latency_s: float = 0.0,
        delay_s: float = 0.0,
        status: int | None = None,
    ) -> None:
        if dim < 1:
            raise ValueError(f"dim must be positive, not {dim!r}")
        if rate is not None and rate <= 0:
            raise ValueError(f"rate must be positive texts per second, not {rate!r}")
        self.dim = dim
        self.api_key = api_key
        self.max_batch = max_batch
        self.rate = rate
        self.latency_s = latency_s
        self.delay_s = delay_s
        self.status = status
        self.texts_embedded = 0
        self.busy_s = 0.0
        """Seconds the simulated device spent embedding (with ``rate``)."""
        self._faults: deque[Fault] = deque()
        self._requests: list[FakeRequest] = []
        self._in_flight = 0
        self.max_in_flight = 0
        self._lock = threading.Lock()
        self._device = threading.Lock()
        self._stop = threading.Event()
        self._httpd: _HTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle ------------------------------------------------------------------------------

    def start(self) -> FakeEmbeddingServer:
        if self._httpd is None:
            self._stop.clear()
            self._httpd = _HTTPServer(("127.0.0.1", 0), _Handler)
            self._httpd.fake = self
            self._thread = threading.Thread(
                target=self._httpd.serve_forever,
                kwargs={"poll_interval": 0.01},
                name="fake-embedding-server",
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

    def __enter__(self) -> FakeEmbeddingServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def url(self) -> str:
        """``http://127.0.0.1:PORT`` (no trailing slash; the OpenAI base URL is ``url + "/v1"``)."""
        if self._httpd is None:
            raise RuntimeError("FakeEmbeddingServer is not running: use `with` or call start()")
        return f"http://127.0.0.1:{self._httpd.server_address[1]}"

    # -- scripting and records ------------------------------------------------------------------

    def fail_next(self, *faults: Fault) -> None:
        """Queue faults: each of the next requests to an embedding path takes one, in order."""
        with self._lock:
            self._faults.extend(faults)

    @property
    def requests(self) -> list[FakeRequest]:
        """Every request received so far, oldest first (a copy)."""
        with self._lock:
            return list(self._requests)

    @property
    def embedding_requests(self) -> list[FakeRequest]:
        """The requests to an embedding path (not ``/health`` or unknown paths)."""
        return [r for r in self.requests if r.protocol]

    def reset(self) -> None:
        with self._lock:
            self._requests.clear()
            self._faults.clear()
            self.max_in_flight = 0
            self.texts_embedded = 0
            self.busy_s = 0.0

    # -- handling -------------------------------------------------------------------------------

    def _respond(
        self, path: str, headers: Mapping[str, str], raw: bytes
    ) -> tuple[int, bytes, dict[str, str]]:
        gemini = _GEMINI_PATH.match(path)
        protocol = "openai" if path == "/v1/embeddings" else "gemini" if gemini else ""
        try:
            body: Any = json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, ValueError):
            body = None
        with self._lock:
            fault = self._faults.popleft() if protocol and self._faults else Fault()
            self._in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self._in_flight)
        try:
            if gemini is not None:
                result = self._gemini(gemini.group(1), gemini.group(2), headers, body, fault)
            elif protocol:
                result = self._openai(headers, body, fault)
            else:
                self._record(path, "", headers, body, [])
                result = _json(404, {"error": {"message": f"no route for {path}"}})
        finally:
            with self._lock:
                self._in_flight -= 1
        return result

    def _record(
        self, path: str, protocol: str, headers: Mapping[str, str], body: Any, texts: Sequence[str]
    ) -> None:
        with self._lock:
            self._requests.append(
                FakeRequest("POST", path, protocol, dict(headers), body, tuple(texts))
            )

    def _wait(self, seconds: float) -> None:
        if seconds > 0:
            self._stop.wait(seconds)

    def _serve(self, n_texts: int) -> None:
        """Hold the simulated device for ``n_texts / rate`` seconds (one batch at a time)."""
        self._wait(self.latency_s)
        if self.rate is None:
            return
        with self._device:
            start = time.perf_counter()
            self._wait(n_texts / self.rate)
            with self._lock:
                self.busy_s += time.perf_counter() - start

    def _vectors(
        self, texts: Sequence[str], dims: Sequence[int | None], fault: Fault
    ) -> list[np.ndarray]:
        self._serve(len(texts))
        out = [
            fake_vector(t, fault.wrong_dim or d or self.dim)
            for t, d in zip(texts, dims, strict=True)
        ]
        with self._lock:
            self.texts_embedded += len(texts)
        return out[: max(len(out) - fault.drop, 0)]

    def _openai(
        self, headers: Mapping[str, str], body: Any, fault: Fault
    ) -> tuple[int, bytes, dict[str, str]]:
        try:
            model, texts, dims, fmt = _parse_openai(body)
        except _Reject as bad:
            self._record("/v1/embeddings", "openai", headers, body, [])
            return _json(bad.status, _openai_error(bad.status, bad.message))
        self._record("/v1/embeddings", "openai", headers, body, texts)
        self._wait(max(self.delay_s, fault.delay_s))
        auth = next((v for k, v in headers.items() if k.lower() == "authorization"), "")
        if self.api_key is not None and auth != f"Bearer {self.api_key}":
            return _json(401, _openai_error(401, "Incorrect API key provided."))
        status = fault.status or self.status
        if status is not None and status >= 400:
            extra: dict[str, str] = {}
            if fault.retry_after is not None:
                extra["Retry-After"] = str(math.ceil(fault.retry_after))
                extra["retry-after-ms"] = str(round(fault.retry_after * 1000))
            message = "Rate limit reached" if status == 429 else "fake server error"
            return _json(status, _openai_error(status, message), extra)
        if self.max_batch is not None and len(texts) > self.max_batch:
            message = f"batch size {len(texts)} > maximum allowed batch size {self.max_batch}"
            return _json(413, _openai_error(413, message))
        vectors = self._vectors(texts, [dims] * len(texts), fault)
        data = [
            {
                "object": "embedding",
                "index": i,
                "embedding": base64.b64encode(v.astype("<f4").tobytes()).decode("ascii")
                if fmt == "base64"
                else [float(x) for x in v],
            }
            for i, v in enumerate(vectors)
        ]
        tokens = sum(len(t) for t in texts)
        usage = {"prompt_tokens": tokens, "total_tokens": tokens}
        return _json(200, {"object": "list", "data": data, "model": model, "usage": usage})

    def _gemini(
        self, model: str, method: str, headers: Mapping[str, str], body: Any, fault: Fault
    ) -> tuple[int, bytes, dict[str, str]]:
        path = f"/v1beta/models/{model}:{method}"
        try:
            texts, dims = _parse_gemini(method, model, body)
        except _Reject as bad:
            self._record(path, "gemini", headers, body, [])
            return _json(bad.status, _gemini_error(bad.status, bad.message))
        self._record(path, "gemini", headers, body, texts)
        self._wait(max(self.delay_s, fault.delay_s))
        key = next((v for k, v in headers.items() if k.lower() == "x-goog-api-key"), "")
        if self.api_key is not None and key != self.api_key:
            message = "API key not valid. Please pass a valid API key."
            return _json(400, _gemini_error(400, message))
        status = fault.status or self.status
        if status is not None and status >= 400:
            message = "Resource has been exhausted" if status == 429 else "fake server error"
            return _json(status, _gemini_error(status, message, fault.retry_after))
        if self.max_batch is not None and len(texts) > self.max_batch:
            message = f"* BatchEmbedContentsRequest.requests: at most {self.max_batch} requests"
            return _json(400, _gemini_error(400, message))
        vectors = self._vectors(texts, dims, fault)
        if method == "embedContent":
            return _json(200, {"embedding": {"values": [float(x) for x in vectors[0]]}})
        return _json(200, {"embeddings": [{"values": [float(x) for x in v]} for v in vectors]})


def _json(
    status: int, payload: Any, headers: Mapping[str, str] | None = None
) -> tuple[int, bytes, dict[str, str]]:
    data = json.dumps(payload, ensure_ascii=False).encode("utf-8")
    return status, data, {"Content-Type": "application/json", **(headers or {})}


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 64
    fake: FakeEmbeddingServer

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # a client that gave up (timeout) is expected; nothing to report


class _Handler(BaseHTTPRequestHandler):
    server: _HTTPServer
    server_version = "FakeEmbedding/1.0"
    protocol_version = "HTTP/1.1"  # keep-alive, as the SDKs' connection pools expect

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def _path(self) -> str:
        return self.path.split("?", 1)[0].rstrip("/") or "/"

    def _write(self, status: int, data: bytes, headers: Mapping[str, str]) -> None:
        try:
            self.send_response(status)
            for key, value in headers.items():
                self.send_header(key, value)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
        except OSError:
            self.close_connection = True  # the client timed out and closed the connection

    def do_GET(self) -> None:
        if self._path() == "/health":
            self._write(*_json(200, {"status": "ok"}))
        else:
            self._write(*_json(404, {"error": {"message": "Not Found"}}))

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length > 0 else b""
        headers = {k: v for k, v in self.headers.items()}
        self._write(*self.server.fake._respond(self._path(), headers, raw))

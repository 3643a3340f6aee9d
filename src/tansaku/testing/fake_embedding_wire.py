"""The wire formats the fake embedding server speaks: request parsing and error bodies as the
OpenAI API (and TEI, vLLM, Infinity, Ollama) and the Gemini API shape them, and the fake's
deterministic vectors and its HTTP handler. Used by :mod:`tansaku.testing.fake_embedding_server`.
"""

from __future__ import annotations

import hashlib
import json
import re
import unicodedata
from collections.abc import Mapping
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import numpy as np

GEMINI_PATH = re.compile(r"^/v1(?:beta|alpha)?/models/([^/:]+):(batchEmbedContents|embedContent)$")
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


class Reject(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


def openai_error(status: int, message: str) -> dict[str, Any]:
    kind = "invalid_request_error" if status < 500 else "server_error"
    if status == 429:
        kind = "rate_limit_exceeded"
    return {"error": {"message": message, "type": kind, "param": None, "code": None}}


def gemini_error(status: int, message: str, retry_after: float | None = None) -> dict[str, Any]:
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


def parse_openai(body: Any) -> tuple[str, list[str], int | None, str]:
    """(model, texts, dimensions, encoding_format) as the API accepts them, or :class:`Reject`."""
    if not isinstance(body, dict):
        raise Reject(400, "request body must be a JSON object")
    model = body.get("model")
    if not isinstance(model, str) or not model:
        raise Reject(400, "'model' is a required property")
    raw = body.get("input")
    texts = [raw] if isinstance(raw, str) else raw
    if not isinstance(texts, list) or not texts or not all(isinstance(t, str) for t in texts):
        raise Reject(400, "'input' must be a non-empty string or list of strings")
    if any(t == "" for t in texts):
        raise Reject(400, "'input' cannot contain an empty string")
    dims = body.get("dimensions")
    if dims is not None and (isinstance(dims, bool) or not isinstance(dims, int) or dims < 1):
        raise Reject(400, f"'dimensions' must be a positive integer, got {dims!r}")
    fmt = body.get("encoding_format", "float")
    if fmt not in ("float", "base64"):
        raise Reject(400, f"'encoding_format' must be 'float' or 'base64', got {fmt!r}")
    return model, texts, dims, fmt


def _gemini_text(content: Any) -> str:
    if not isinstance(content, dict) or not isinstance(content.get("parts"), list):
        raise Reject(400, "content.parts is required")
    parts = content["parts"]
    if not parts or not all(isinstance(p, dict) and isinstance(p.get("text"), str) for p in parts):
        raise Reject(400, "only text parts are supported")
    return "".join(p["text"] for p in parts)


def parse_gemini(method: str, model: str, body: Any) -> tuple[list[str], list[int | None]]:
    """(texts, output dimensionality per text), or :class:`Reject` with Gemini's 400."""
    if not isinstance(body, dict):
        raise Reject(400, "Invalid JSON payload received.")
    requests = body.get("requests") if method == "batchEmbedContents" else [body]
    if not isinstance(requests, list) or not requests:
        raise Reject(400, "* BatchEmbedContentsRequest.requests: requests is required")
    texts, dims = [], []
    for i, req in enumerate(requests):
        if not isinstance(req, dict):
            raise Reject(400, f"requests[{i}] must be an object")
        if method == "batchEmbedContents" and req.get("model") not in (None, f"models/{model}"):
            raise Reject(
                400, f"requests[{i}].model {req.get('model')!r} differs from models/{model}"
            )
        task = req.get("taskType")
        if task is not None and not isinstance(task, str):
            raise Reject(400, f"requests[{i}].taskType must be a string")
        dim = req.get("outputDimensionality")
        if dim is not None and (isinstance(dim, bool) or not isinstance(dim, int) or dim < 1):
            raise Reject(400, f"requests[{i}].outputDimensionality must be a positive integer")
        texts.append(_gemini_text(req.get("content")))
        dims.append(dim)
    return texts, dims


# -- HTTP plumbing ------------------------------------------------------------------------------


def json_response(
    status: int, payload: Any, headers: Mapping[str, str] | None = None
) -> tuple[int, bytes, dict[str, str]]:
    data = json.dumps(payload, ensure_ascii=False).encode("utf-8")
    return status, data, {"Content-Type": "application/json", **(headers or {})}


class FakeHTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 64
    fake: Any  # the FakeEmbeddingServer: _respond(path, headers, raw), stats(), reset()

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # a client that gave up (timeout) is expected; nothing to report


class FakeHandler(BaseHTTPRequestHandler):
    server: FakeHTTPServer
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
            self._write(*json_response(200, {"status": "ok"}))
        elif self._path() == "/stats":
            self._write(*json_response(200, self.server.fake.stats()))
        else:
            self._write(*json_response(404, {"error": {"message": "Not Found"}}))

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length > 0 else b""
        headers = {k: v for k, v in self.headers.items()}
        if self._path() == "/reset":
            self.server.fake.reset()
            self._write(*json_response(200, self.server.fake.stats()))
            return
        self._write(*self.server.fake._respond(self._path(), headers, raw))

"""The wire formats the fake embedding server speaks: request parsing and error bodies as the
OpenAI API (and TEI, vLLM, Infinity, Ollama) and the Gemini API shape them, and the fake's
deterministic vectors. Used by :mod:`tansaku.testing.fake_embedding_server`.
"""

from __future__ import annotations

import hashlib
import re
from typing import Any

import numpy as np

from tansaku.testing._http_fake import Reject, bigrams, google_error_body, openai_error_body

GEMINI_PATH = re.compile(r"^/v1(?:beta|alpha)?/models/([^/:]+):(batchEmbedContents|embedContent)$")


def fake_vector(text: str, dim: int) -> np.ndarray:
    """The fake's embedding of ``text``: a signed hashed bag of character bigrams, L2-normalised
    (float32, shape ``(dim,)``). Deterministic across processes and platforms."""
    v = np.zeros(dim, dtype=np.float32)
    for gram in bigrams(text):
        h = int.from_bytes(hashlib.blake2b(gram.encode("utf-8"), digest_size=8).digest(), "little")
        v[h % dim] += 1.0 if (h >> 63) & 1 else -1.0
    norm = float(np.linalg.norm(v))
    if norm == 0.0:
        v[0] = 1.0
        return v
    return v / norm


def openai_error(status: int, message: str) -> dict[str, Any]:
    kind = "invalid_request_error" if status < 500 else "server_error"
    if status == 429:
        kind = "rate_limit_exceeded"
    return openai_error_body(message, kind)


def gemini_error(status: int, message: str, retry_after: float | None = None) -> dict[str, Any]:
    if retry_after is None:
        return google_error_body(status, message)
    retry = {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": f"{retry_after}s"}
    return google_error_body(status, message, details=[retry])


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

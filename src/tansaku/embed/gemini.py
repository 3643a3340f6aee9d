"""Embeddings from the Gemini API (``batchEmbedContents``) through the official ``google-genai``
SDK (the ``llm`` extra), with the SDK's own retries off: batching, parallel requests, retries
and checks are :mod:`tansaku.embed.remote`'s.

Queries are embedded with task type ``RETRIEVAL_QUERY``, passages with ``RETRIEVAL_DOCUMENT``
(Gemini's counterpart of e5's prefixes)::

    emb = GeminiEmbedder(model="gemini-embedding-001", dimensions=768)   # $GEMINI_API_KEY
    emb.embed_passages(["冷蔵庫の温度が上がらない"]).shape   # (1, 768)
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from typing import Any

import numpy as np

from tansaku.embed.remote import (
    EmbeddingError,
    RemoteEmbedder,
    RemoteOptions,
    Retryable,
    check_settings,
    status_cause,
)
from tansaku.errors import MissingExtra

GEMINI_BASE_URL = "https://generativelanguage.googleapis.com"
_DELAY = re.compile(r"^\s*([0-9.]+)s\s*$")


def _retry_delay(details: Any) -> float | None:
    """Seconds from a ``google.rpc.RetryInfo`` detail (``"retryDelay": "37s"``), if any."""
    error = details.get("error", details) if isinstance(details, dict) else None
    for item in (error or {}).get("details") or []:
        if isinstance(item, dict) and str(item.get("@type", "")).endswith("RetryInfo"):
            match = _DELAY.match(str(item.get("retryDelay", "")))
            if match:
                return float(match.group(1))
    return None


def _names(err: BaseException) -> set[str]:
    return {cls.__name__ for cls in type(err).__mro__}


class GeminiEmbedder(RemoteEmbedder):
    """An :class:`~tansaku.embed.base.Embedder` over the Gemini API.

    ``api_key`` defaults to ``$GEMINI_API_KEY`` / ``$GOOGLE_API_KEY`` (read by the SDK);
    ``dimensions`` (``outputDimensionality``: 768, 1536 or 3072 for ``gemini-embedding-001``)
    shortens the vectors; ``base_url`` points at a proxy or a test server. Gemini allows at
    most 100 texts per request: keep ``options.batch_size`` at or below that.
    """

    provider = "gemini"

    def __init__(
        self,
        *,
        model: str = "gemini-embedding-001",
        api_key: str | None = None,
        base_url: str | None = None,
        dimensions: int | None = None,
        dim: int | None = None,
        options: RemoteOptions | None = None,
    ) -> None:
        check_settings(model, base_url, dimensions, dim)
        self.model = model.removeprefix("models/")
        self.base_url = base_url.rstrip("/") if base_url else None
        self.dimensions = dimensions
        path = f"/v1beta/models/{self.model}:batchEmbedContents"
        self._setup(self.base_url or GEMINI_BASE_URL, path, api_key, dim, options)

    def _make_client(self) -> Any:
        try:
            from google import genai
            from google.genai import types
        except ImportError as err:
            raise MissingExtra("google-genai", "llm", "Gemini での埋め込み") from err
        key = self._api_key or os.environ.get("GEMINI_API_KEY") or os.environ.get("GOOGLE_API_KEY")
        if not key:
            raise EmbeddingError(
                self.endpoint,
                "APIキーがありません。GEMINI_API_KEY か TANSAKU_EMBED_API_KEY を設定してください",
            )
        return genai.Client(
            api_key=key,
            http_options=types.HttpOptions(
                base_url=self.base_url,
                timeout=max(int(self.options.timeout * 1000), 1),
                retry_options=types.HttpRetryOptions(attempts=1),
            ),
        )

    def _send_as(self, task: str) -> Any:
        def send(texts: list[str]) -> list[Any]:
            return self._send(texts, task)

        return send

    def _send(self, texts: list[str], task: str) -> list[Any]:
        from google.genai import errors

        config: dict[str, Any] = {"task_type": task}
        if self.dimensions:
            config["output_dimensionality"] = self.dimensions
        client = self._sdk()
        try:
            response = client.models.embed_content(model=self.model, contents=texts, config=config)
        except errors.APIError as err:
            status = int(err.code or 0)
            cause = status_cause(status, str(err.message or ""))
            if status == 400 and "API key" in str(err.message or ""):
                cause = f"認証に失敗しました(HTTP 400)。APIキーを確認してください: {err.message}"
            raise self._refused(status, cause, _retry_delay(err.details)) from None
        except Exception as err:
            names = _names(err)
            if "TimeoutException" in names or isinstance(err, TimeoutError):
                raise self._timed_out() from None
            if "TransportError" in names or isinstance(err, ConnectionError):
                raise Retryable(f"接続できません({err})") from None
            raise EmbeddingError(self.endpoint, f"応答を読めません({err!r})") from None
        return [e.values or [] for e in response.embeddings or []]

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        return self._runner.run(list(texts), self._send_as("RETRIEVAL_QUERY"))

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        return self._runner.run(list(texts), self._send_as("RETRIEVAL_DOCUMENT"))

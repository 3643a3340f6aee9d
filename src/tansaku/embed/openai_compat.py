"""Embeddings from any server speaking OpenAI's ``POST /v1/embeddings``.

OpenAI itself, and the self-hosted servers teams run on a GPU box: Hugging Face TEI, vLLM,
Infinity, Ollama. Uses the official ``openai`` SDK (the ``llm`` extra) with its own retries
off: batching, parallel requests, retries and checks are :mod:`tansaku.embed.remote`'s, the
same for every provider::

    emb = OpenAIEmbedder(base_url="http://gpu-box:8080/v1", model="intfloat/multilingual-e5-large")
    emb.embed_queries(["冷蔵庫の温度異常"]).shape   # (1, 1024)
"""

from __future__ import annotations

import base64
import email.utils
import os
import re
import time
from collections.abc import Sequence
from typing import Any

import numpy as np

from tansaku.embed.remote import (
    E5_PREFIXES,
    EmbeddingError,
    RemoteEmbedder,
    RemoteOptions,
    Retryable,
    check_settings,
    status_cause,
)
from tansaku.errors import ConfigError, MissingExtra

OPENAI_BASE_URL = "https://api.openai.com/v1"
_E5_MODEL = re.compile(r"(^|/)(multilingual-)?e5-(small|base|large)(-v2)?($|[-_:])", re.I)


def default_prefixes(model: str) -> tuple[str, str]:
    """``("query: ", "passage: ")`` for the e5 family (which was trained with them), else none.
    Instruction-tuned variants (``e5-mistral``, ``-instruct``) take instructions instead."""
    if _E5_MODEL.search(model) and "instruct" not in model.lower():
        return E5_PREFIXES
    return ("", "")


def retry_after(headers: Any) -> float | None:
    """Seconds from ``retry-after-ms`` or ``Retry-After`` (seconds or an HTTP date); ``None``
    when absent or unreadable."""
    if headers is None:
        return None
    raw_ms, raw = headers.get("retry-after-ms"), headers.get("retry-after")
    for value, scale in ((raw_ms, 1000.0), (raw, 1.0)):
        try:
            if value is not None:
                return max(float(value) / scale, 0.0)
        except ValueError:
            continue
    try:
        when = email.utils.parsedate_to_datetime(raw) if raw else None
    except (TypeError, ValueError):
        return None
    return max(when.timestamp() - time.time(), 0.0) if when else None


def error_detail(body: Any) -> str:
    """The server's own words from an error body (OpenAI, TEI, vLLM and Ollama shapes)."""
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict):
            inner = inner.get("message") or inner.get("detail") or ""
        return str(inner or body.get("message") or body.get("detail") or "")
    return str(body or "")


class OpenAIEmbedder(RemoteEmbedder):
    """An :class:`~tansaku.embed.base.Embedder` over an OpenAI-compatible server.

    ``dimensions`` asks the server for shorter vectors (OpenAI's ``text-embedding-3`` models;
    most self-hosted servers refuse it). ``dim`` is the expected dimension; when neither is
    given it is learned from the first answer (reading :attr:`dim` first sends one short
    request). ``query_prefix``/``passage_prefix`` default to ``"query: "``/``"passage: "`` for
    e5 models and to nothing otherwise. ``encoding_format`` ``"base64"`` (what the SDK sends by
    default: a quarter of the JSON) or ``"float"`` for servers that only speak that.
    """

    provider = "openai"

    def __init__(
        self,
        *,
        model: str,
        base_url: str = OPENAI_BASE_URL,
        api_key: str | None = None,
        dimensions: int | None = None,
        dim: int | None = None,
        query_prefix: str | None = None,
        passage_prefix: str | None = None,
        encoding_format: str = "base64",
        options: RemoteOptions | None = None,
    ) -> None:
        check_settings(model, base_url, dimensions, dim)
        if encoding_format not in ("base64", "float"):
            raise ConfigError(f"encoding_format は base64 か float です(現在: {encoding_format!r})")
        q, p = default_prefixes(model)
        self.model = model
        self.base_url = base_url.rstrip("/")
        self.dimensions = dimensions
        self.prefixes = (q if query_prefix is None else query_prefix,
                         p if passage_prefix is None else passage_prefix)  # fmt: skip
        self.encoding_format = encoding_format
        self._setup(self.base_url, "/embeddings", api_key, dim, options)

    def _make_client(self) -> Any:
        try:
            import openai
        except ImportError as err:
            raise MissingExtra("openai", "llm", "OpenAI 互換サーバーでの埋め込み") from err
        key = self._api_key
        if not key and self.base_url == OPENAI_BASE_URL:
            key = os.environ.get("OPENAI_API_KEY")
        return openai.OpenAI(
            base_url=self.base_url,
            api_key=key or "unused",  # self-hosted servers without auth ignore it
            timeout=self.options.timeout,
            max_retries=0,
        )

    def _send(self, texts: list[str]) -> list[Any]:
        import openai

        extra: dict[str, Any] = {"dimensions": self.dimensions} if self.dimensions else {}
        try:
            response = self._sdk().embeddings.create(
                model=self.model, input=texts, encoding_format=self.encoding_format, **extra
            )
        except openai.APITimeoutError:
            raise self._timed_out() from None
        except openai.APIConnectionError as err:
            raise Retryable(f"接続できません({err.__cause__ or err})") from None
        except openai.APIStatusError as err:
            cause = status_cause(err.status_code, error_detail(err.body))
            hint = retry_after(err.response.headers)
            raise self._refused(err.status_code, cause, hint) from None
        except openai.OpenAIError as err:  # e.g. a body that is not an embedding list
            raise EmbeddingError(self.endpoint, f"応答を読めません({err})") from None
        data = sorted(response.data or [], key=lambda d: d.index)
        if [d.index for d in data] != list(range(len(data))):
            raise EmbeddingError(self.endpoint, "応答の index が 0 から連続していません")
        return [_decode(self.endpoint, d.embedding) for d in data]

    def _embed(self, texts: Sequence[str], prefix: str) -> np.ndarray:
        return self._runner.run([prefix + t for t in texts], self._send)

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        return self._embed(texts, self.prefixes[0])

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        return self._embed(texts, self.prefixes[1])


def _decode(endpoint: str, value: Any) -> Any:
    """A base64 string of little-endian float32s, or a list of numbers as it came."""
    if isinstance(value, str):
        try:
            raw = base64.b64decode(value, validate=True)
        except ValueError:
            raise EmbeddingError(endpoint, "base64 のベクトルを読めません") from None
        if len(raw) % 4:
            raise EmbeddingError(endpoint, "base64 のベクトルの長さが float32 の倍数ではありません")
        return np.frombuffer(raw, dtype="<f4")
    return value

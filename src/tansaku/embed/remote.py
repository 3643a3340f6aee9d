"""What every remote embedder shares: batching, parallel batches, retries, checks, errors.

A provider module (:mod:`tansaku.embed.openai_compat`, :mod:`tansaku.embed.gemini`) only turns
one batch of texts into one request and classifies its failures: a :class:`Retryable` (429,
5xx, a timeout, a dropped connection) or a final :class:`EmbeddingError`. :class:`BatchRunner`
does the rest: split the texts into batches of ``batch_size``, send up to ``concurrency``
batches at once, retry a retryable failure with exponential backoff (at most ``max_retries``
times, honouring the server's ``Retry-After``), check every answer's shape and dimension, and
return one L2-normalised float32 array in input order.
"""

from __future__ import annotations

import hashlib
import math
import random
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import KW_ONLY, dataclass
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import numpy as np

from tansaku.embed.base import l2_normalize
from tansaku.errors import ConfigError, TansakuError, http_status_cause

TIMEOUT_CAUSE = "時間内に応答しませんでした"
E5_PREFIXES = ("query: ", "passage: ")


@dataclass(eq=False, repr=False)
class EmbeddingError(TansakuError):
    """A remote embedder failed for good: bad settings, unreachable, refused, or an unusable
    answer. The message names the endpoint (never the key) and what to check."""

    endpoint: str
    cause: str
    _: KW_ONLY
    status: int | None = None
    timed_out: bool = False
    attempts: int = 1

    def __post_init__(self) -> None:
        tried = f"({self.attempts} 回試行)" if self.attempts > 1 else ""
        super().__init__(f"埋め込みサーバー {self.endpoint}: {self.cause}{tried}")


@dataclass(eq=False, repr=False)
class Retryable(Exception):
    """A failure worth another try: ``retry_after`` is the server's hint in seconds."""

    cause: str
    _: KW_ONLY
    status: int | None = None
    retry_after: float | None = None
    timed_out: bool = False

    def __post_init__(self) -> None:
        super().__init__(self.cause)


_HINTS = {
    404: "エンドポイントかモデルが見つかりません(HTTP 404)。base_url と model を確認してください",
    413: "バッチが大きすぎます(HTTP 413)。batch_size を小さくしてください",
    429: "レート制限に達しました(HTTP 429)。concurrency を下げるか、時間をおいてください",
}


def status_cause(status: int, detail: str = "") -> str:
    """The Japanese cause for an HTTP error status (with the server's detail, if any)."""
    return http_status_cause(status, detail, _HINTS)


def is_retryable_status(status: int) -> bool:
    return status == 429 or status == 408 or status >= 500


@dataclass(frozen=True, kw_only=True)
class RemoteOptions:
    """How a remote embedder talks to its server (validated on construction)."""

    batch_size: int = 64
    """Texts per request (TEI's default limit is 32 per request, OpenAI's 2048, Gemini's 100)."""
    concurrency: int = 4
    """Requests in flight at once; 1 sends batches one after another."""
    timeout: float = 60.0
    """Seconds one request may take before it counts as failed (and is retried)."""
    max_retries: int = 3
    """Retries of one batch after a 429, a 5xx, a timeout or a lost connection (0 to 3)."""
    backoff_s: float = 0.5
    """First wait before a retry; doubled for each further retry (with jitter)."""
    max_backoff_s: float = 30.0
    """Longest wait before a retry, even when the server's ``Retry-After`` asks for more."""

    def __post_init__(self) -> None:
        for name, minimum in (("batch_size", 1), ("concurrency", 1)):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
                raise ConfigError(f"{name} は {minimum} 以上の整数にしてください(現在: {value!r})")
        if not isinstance(self.max_retries, int) or not 0 <= self.max_retries <= 3:
            raise ConfigError(
                f"max_retries は 0 から 3 の整数にしてください(現在: {self.max_retries!r})"
            )
        for name in ("timeout", "backoff_s", "max_backoff_s"):
            value = getattr(self, name)
            ok = isinstance(value, int | float) and not isinstance(value, bool)
            if not ok or not math.isfinite(value) or value < 0 or (name == "timeout" and not value):
                raise ConfigError(f"{name} は正の秒数にしてください(現在: {value!r})")

    def delay(self, attempt: int, hint: float | None) -> float:
        """Seconds to wait before retry number ``attempt`` (1-based): ``backoff_s·2^(attempt-1)``
        with ±25% jitter, or the server's hint if longer, never past ``max_backoff_s``."""
        base = self.backoff_s * 2 ** (attempt - 1) * random.uniform(0.75, 1.25)
        return min(max(base, hint or 0.0), self.max_backoff_s)


SendFn = Callable[[list[str]], list[Any]]
"""One request: a batch of texts in, one vector (any float sequence) per text out, in order.
Raises :class:`Retryable` or :class:`EmbeddingError`."""


class BatchRunner:
    """Runs a provider's ``send`` over batches: parallel, retried, checked, normalised.

    ``dim`` is the expected dimension, or ``None`` to learn it from the first answer (every
    later answer must then agree). Thread-safe; the worker threads start on first use.
    """

    def __init__(self, endpoint: str, options: RemoteOptions, dim: int | None = None) -> None:
        self.endpoint = endpoint
        self.options = options
        self.dim = dim
        self.requests = 0
        """Requests sent, retries included."""
        self.retries = 0
        self._lock = threading.Lock()
        self._slots = threading.BoundedSemaphore(options.concurrency)  # across all callers
        self._pool: ThreadPoolExecutor | None = None

    def _executor(self) -> ThreadPoolExecutor:
        with self._lock:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(
                    max_workers=self.options.concurrency, thread_name_prefix="tansaku-embed"
                )
            return self._pool

    def close(self) -> None:
        with self._lock:
            pool, self._pool = self._pool, None
        if pool is not None:
            pool.shutdown(wait=True, cancel_futures=True)

    def probe_dim(self, probe: Callable[[], object]) -> int:
        """The expected dimension; when still unknown, ``probe()`` embeds something to learn it."""
        if self.dim is None:
            probe()
        if self.dim is None:
            raise EmbeddingError(self.endpoint, "ベクトルの次元を確認できませんでした")
        return self.dim

    def run(self, texts: Sequence[str], send: SendFn) -> np.ndarray:
        """Embed ``texts`` (empty or blank texts are sent as one space, which every server
        accepts) and return a ``(len(texts), dim)`` float32 array, L2-normalised."""
        if not texts:
            return np.zeros((0, self.dim or 0), dtype=np.float32)
        clean = [t if t.strip() else " " for t in texts]
        size = self.options.batch_size
        batches = [clean[i : i + size] for i in range(0, len(clean), size)]
        if len(batches) == 1 or self.options.concurrency == 1:
            parts = [self._one(b, send) for b in batches]
        else:
            pool = self._executor()
            futures: list[Future[np.ndarray]] = [pool.submit(self._one, b, send) for b in batches]
            try:
                parts = [f.result() for f in futures]
            except BaseException:
                for f in futures:
                    f.cancel()
                raise
        return np.concatenate(parts)

    def _one(self, batch: list[str], send: SendFn) -> np.ndarray:
        opts = self.options
        attempt = 0
        while True:
            with self._lock:
                self.requests += 1
            try:
                with self._slots:
                    vectors = send(batch)
                return self._checked(batch, vectors)
            except Retryable as err:
                attempt += 1
                if attempt > opts.max_retries:
                    raise EmbeddingError(
                        self.endpoint,
                        err.cause,
                        status=err.status,
                        timed_out=err.timed_out,
                        attempts=attempt,
                    ) from None
                with self._lock:
                    self.retries += 1
                time.sleep(opts.delay(attempt, err.retry_after))

    def _checked(self, batch: list[str], vectors: list[Any]) -> np.ndarray:
        if len(vectors) != len(batch):
            raise EmbeddingError(
                self.endpoint,
                f"{len(batch)} 件のテキストに {len(vectors)} 件のベクトルが返りました",
            )
        try:
            arr = np.asarray(vectors, dtype=np.float32)
        except (TypeError, ValueError):
            lengths = sorted({len(v) for v in vectors if hasattr(v, "__len__")})
            raise EmbeddingError(
                self.endpoint, f"ベクトルの次元がそろっていません(次元: {lengths})"
            ) from None
        if arr.ndim != 2 or arr.shape[1] == 0:
            raise EmbeddingError(self.endpoint, f"ベクトルの形が不正です(shape {arr.shape})")
        with self._lock:
            if self.dim is None:
                self.dim = int(arr.shape[1])
            expected = self.dim
        if arr.shape[1] != expected:
            raise EmbeddingError(
                self.endpoint,
                f"ベクトルの次元が {arr.shape[1]} です({expected} のはず)。"
                "model と dimensions の設定を確認してください",
            )
        if not np.all(np.isfinite(arr)):
            raise EmbeddingError(self.endpoint, "ベクトルに NaN か無限大が含まれています")
        return l2_normalize(arr)


def model_name(provider: str, model: str, dimensions: int | None, prefixes: tuple[str, str]) -> str:
    """``provider/model[@dims][+e5|+p<hash>]``: different vectors get different names (the
    cache key and a collection's guard)."""
    name = f"{provider}/{model}"
    if dimensions:
        name += f"@{dimensions}"
    if prefixes == E5_PREFIXES:
        name += "+e5"
    elif prefixes != ("", ""):
        digest = hashlib.sha256("\x00".join(prefixes).encode("utf-8")).hexdigest()[:8]
        name += f"+p{digest}"
    return name


def redact_url(url: str) -> str:
    """``url`` without credentials or a query string (which may hold a ``key=``)."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    if parts.port:
        host = f"{host}:{parts.port}"
    return urlunsplit((parts.scheme, host, parts.path.rstrip("/"), "", ""))


def check_settings(
    model: str, base_url: str | None, dimensions: int | None, dim: int | None
) -> None:
    """The settings every remote embedder takes, checked (:class:`ConfigError` in Japanese)."""
    if not model:
        raise ConfigError("埋め込みモデル名(model)を指定してください")
    if base_url is not None and not base_url.startswith(("http://", "https://")):
        raise ConfigError(
            f"base_url は http:// か https:// で始まる URL にしてください(現在: {base_url!r})"
        )
    for label, value in (("dimensions", dimensions), ("dim", dim)):
        if value is not None and (not isinstance(value, int) or value < 1):
            raise ConfigError(f"{label} は 1 以上の整数にしてください(現在: {value!r})")
    if dimensions and dim and dimensions != dim:
        raise ConfigError(f"dimensions ({dimensions}) と dim ({dim}) が食い違っています")


class RemoteEmbedder:
    """What a remote embedder class shares: its batch runner, the SDK client made on first
    use (``_client`` under ``_lock``), ``name``, ``dim``, ``call_size``, ``stats`` and
    ``close``. A provider sets ``provider`` and calls :meth:`_setup` from ``__init__``."""

    provider = ""
    model: str
    dimensions: int | None
    options: RemoteOptions
    endpoint: str
    prefixes: tuple[str, str] = ("", "")

    def _setup(
        self,
        base_url: str,
        path: str,
        api_key: str | None,
        dim: int | None,
        options: RemoteOptions | None,
    ) -> None:
        """``endpoint`` is ``base_url`` + ``path`` as messages show it (no credentials)."""
        self.options = options or RemoteOptions()
        self.endpoint = endpoint = redact_url(base_url) + path
        self._api_key = api_key
        self._runner = BatchRunner(endpoint, self.options, self.dimensions or dim)
        self._client: Any = None
        self._lock = threading.Lock()

    def _sdk(self) -> Any:
        """The SDK client, made on first use by :meth:`_make_client`."""
        with self._lock:
            if self._client is None:
                self._client = self._make_client()
            return self._client

    def _make_client(self) -> Any:
        raise NotImplementedError

    def _timed_out(self) -> Retryable:
        return Retryable(f"{TIMEOUT_CAUSE}({self.options.timeout:g} 秒)", timed_out=True)

    def _refused(self, status: int, cause: str, retry_after: float | None) -> Exception:
        """An HTTP error status as the exception to raise: a :class:`Retryable` with the
        server's hint when another try may succeed, else the final :class:`EmbeddingError`."""
        if is_retryable_status(status):
            return Retryable(cause, status=status, retry_after=retry_after)
        return EmbeddingError(self.endpoint, cause, status=status)

    def __repr__(self) -> str:  # never shows the key
        return f"{type(self).__name__}(model={self.model!r}, endpoint={self.endpoint!r})"

    @property
    def name(self) -> str:
        return model_name(self.provider, self.model, self.dimensions, self.prefixes)

    @property
    def dim(self) -> int:
        return self._runner.probe_dim(lambda: self.embed_queries(["次元の確認"]))

    @property
    def call_size(self) -> int:
        """Texts per call that keep every parallel request busy (``batch_size × concurrency``);
        :class:`~tansaku.embed.cache.CachedEmbedder` passes its misses in chunks this large."""
        return self.options.batch_size * self.options.concurrency

    @property
    def stats(self) -> dict[str, int]:
        """Requests sent and retries so far (for reports and benchmarks)."""
        return {"requests": self._runner.requests, "retries": self._runner.retries}

    def close(self) -> None:
        self._runner.close()
        with self._lock:
            client, self._client = self._client, None
        if client is not None:
            client.close()

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        raise NotImplementedError

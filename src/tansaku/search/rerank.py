"""Rerank: reorder the fused candidates with a cross-encoder served over HTTP.

Clients for Cohere's rerank API v2 (:class:`CohereReranker`) and for self-hosted servers
(:class:`HttpReranker`: Hugging Face TEI's ``/rerank``, or the Jina/Cohere-style ``/v1/rerank``
that Infinity and vLLM serve), and :func:`rerank_candidates`, which applies any
:class:`Reranker` to a capped candidate set within a hard time budget and falls back to the fused
order on every provider failure. No reranker model ships offline, so rerank is off by default;
see docs/rerank.md.
"""

from __future__ import annotations

import http.client
import ipaddress
import json
import math
import os
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Protocol

from tansaku.errors import ConfigError, TansakuError

MAX_RESPONSE_BYTES = 16 * 1024 * 1024
TIMEOUT_CAUSE = "リランカーが時間内に応答しませんでした"


class RerankError(TansakuError):
    """A reranker failed: bad settings, unreachable, timed out, refused, or an unusable answer."""

    def __init__(
        self, provider: str, cause: str, *, status: int | None = None, timed_out: bool = False
    ) -> None:
        self.provider = provider
        self.cause = cause
        self.status = status  # the HTTP status, when the server answered with an error
        self.timed_out = timed_out
        super().__init__(f"リランカー「{provider}」: {cause}")


@dataclass(frozen=True)
class RerankScore:
    index: int
    """Position in the ``documents`` list passed to :meth:`Reranker.rerank`."""
    score: float
    """Relevance given by the reranker; higher is better (scales differ between models)."""


class Reranker(Protocol):
    @property
    def name(self) -> str: ...

    def rerank(
        self,
        query: str,
        documents: Sequence[str],
        *,
        top_n: int | None = None,
        timeout: float | None = None,
    ) -> list[RerankScore]:
        """Scores best first (at most ``top_n``); raises :class:`RerankError`."""
        ...


class RerankProtocol(StrEnum):
    TEI = "tei"  # Hugging Face text-embeddings-inference: POST /rerank {query, texts}
    OPENAI = "openai"  # Jina/Cohere style served by Infinity and vLLM: POST /v1/rerank

    @classmethod
    def from_str(cls, value: str) -> RerankProtocol:
        try:
            return cls(str(value).strip().lower())
        except ValueError:
            valid = ", ".join(p.value for p in cls)
            raise RerankError(
                "http", f"protocol は {valid} のいずれかです(現在: {value!r})"
            ) from None


# -- HTTP ---------------------------------------------------------------------------------------

_DIRECT = urllib.request.build_opener(urllib.request.ProxyHandler({}))
_DEFAULT = urllib.request.build_opener()


def _is_loopback(host: str) -> bool:
    if host in ("localhost", "localhost.localdomain"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _endpoint(provider: str, base_url: str, version: str | None) -> str:
    """``base/{version}/rerank``; a base already ending in ``/{version}`` or ``/rerank`` is kept."""
    parts = urllib.parse.urlsplit(base_url or "")
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise RerankError(
            provider,
            f"base_url は http:// か https:// で始まる URL にしてください(現在: {base_url!r})",
        )
    base = base_url.rstrip("/")
    if base.endswith("/rerank"):
        return base
    if version is None or base.endswith(f"/{version}"):
        return f"{base}/rerank"
    return f"{base}/{version}/rerank"


def _positive(value: object, *, integer: bool = False) -> bool:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return False
    return math.isfinite(value) and value > 0 and (isinstance(value, int) or not integer)


def _check_timeout(provider: str, timeout: float) -> float:
    if not _positive(timeout):
        raise RerankError(provider, f"timeout は正の秒数にしてください(現在: {timeout!r})")
    return float(timeout)


def _error_detail(err: urllib.error.HTTPError) -> str:
    try:
        raw = err.read(2000).decode("utf-8", "replace")
    except Exception:  # the error body is only a hint
        return ""
    try:
        data = json.loads(raw)
    except ValueError:
        return raw.strip()[:200]
    if isinstance(data, dict):
        for key in ("message", "error", "detail"):
            if data.get(key):
                value = data[key]
                return (value if isinstance(value, str) else json.dumps(value, ensure_ascii=False))[
                    :200
                ]
    return raw.strip()[:200]


def _http_error(provider: str, url: str, err: urllib.error.HTTPError) -> RerankError:
    status = err.code
    if status in (401, 403):
        cause = f"認証に失敗しました(HTTP {status})。APIキーを確認してください"
    elif status == 404:
        cause = (
            f"エンドポイント {url} がありません(HTTP 404)。base_url と protocol を確認してください"
        )
    elif status == 429:
        cause = "レート制限に達しました(HTTP 429)。しばらく待ってから再試行してください"
    elif status >= 500:
        cause = f"サーバーエラーです(HTTP {status})"
    else:
        cause = f"リクエストが拒否されました(HTTP {status})"
    detail = _error_detail(err)
    return RerankError(provider, f"{cause}: {detail}" if detail else cause, status=status)


def _post_json(
    provider: str, url: str, body: Mapping[str, Any], *, api_key: str | None, timeout: float
) -> Any:
    headers = {
        "Content-Type": "application/json",
        "Accept": "application/json",
        "User-Agent": "tansaku-rerank",
    }
    if api_key:
        headers["Authorization"] = f"Bearer {api_key}"
    data = json.dumps(body, ensure_ascii=False).encode("utf-8")
    request = urllib.request.Request(url, data=data, headers=headers, method="POST")
    # A self-hosted server on this machine is never reached through a proxy.
    opener = _DIRECT if _is_loopback(urllib.parse.urlsplit(url).hostname or "") else _DEFAULT
    try:
        with opener.open(request, timeout=timeout) as response:
            raw = response.read(MAX_RESPONSE_BYTES + 1)
    except urllib.error.HTTPError as err:
        raise _http_error(provider, url, err) from None
    except urllib.error.URLError as err:
        if isinstance(err.reason, TimeoutError):
            raise RerankError(
                provider, f"{TIMEOUT_CAUSE}({timeout:g} 秒)", timed_out=True
            ) from None
        raise RerankError(provider, f"{url} に接続できません({err.reason})") from None
    except TimeoutError:
        raise RerankError(provider, f"{TIMEOUT_CAUSE}({timeout:g} 秒)", timed_out=True) from None
    except (OSError, http.client.HTTPException) as err:
        raise RerankError(provider, f"{url} との通信に失敗しました({err!r})") from None
    if len(raw) > MAX_RESPONSE_BYTES:
        raise RerankError(provider, f"応答が大きすぎます({MAX_RESPONSE_BYTES} バイト超)")
    try:
        return json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        snippet = raw[:80].decode("utf-8", "replace")
        raise RerankError(provider, f"応答が JSON ではありません: {snippet!r}") from None


# -- responses ----------------------------------------------------------------------------------


def _validated(provider: str, pairs: Iterable[tuple[Any, Any]], n_docs: int) -> list[RerankScore]:
    """(index, score) pairs -> scores best first; rejects bad types, out-of-range and duplicates."""
    out: list[RerankScore] = []
    seen: set[int] = set()
    for index, score in pairs:
        if isinstance(index, bool) or not isinstance(index, int):
            raise RerankError(provider, f"応答の index が整数ではありません: {index!r}")
        if (
            isinstance(score, bool)
            or not isinstance(score, int | float)
            or not math.isfinite(score)
        ):
            raise RerankError(provider, f"応答のスコアが有限の数値ではありません: {score!r}")
        if not 0 <= index < n_docs:
            raise RerankError(provider, f"範囲外の index {index} が返されました(文書数 {n_docs})")
        if index in seen:
            raise RerankError(provider, f"index {index} が重複して返されました")
        seen.add(index)
        out.append(RerankScore(index=index, score=float(score)))
    out.sort(key=lambda s: -s.score)  # stable: ties keep the server's order
    return out


# -- clients ------------------------------------------------------------------------------------


def _tei_body(model: str | None, query: str, docs: list[str], top_n: int | None) -> dict[str, Any]:
    # TEI has no top_n (the client cuts) and serves one model (``model`` only names it).
    return {"query": query, "texts": docs, "raw_scores": False, "truncate": True}


def _results_body(
    model: str | None, query: str, docs: list[str], top_n: int | None
) -> dict[str, Any]:
    body: dict[str, Any] = {"query": query, "documents": docs}
    if model:
        body["model"] = model
    if top_n is not None:
        body["top_n"] = min(top_n, len(docs))
    return body


# protocol -> (request body, list key of the response (None: the response is the list), score key)
_WIRE = {
    "cohere": (_results_body, "results", "relevance_score"),
    "openai": (_results_body, "results", "relevance_score"),
    "tei": (_tei_body, None, "score"),
}


def _rerank_http(
    protocol: str,
    url: str,
    api_key: str | None,
    model: str | None,
    query: str,
    documents: Sequence[str],
    top_n: int | None,
    timeout: float,
) -> list[RerankScore]:
    if top_n is not None and not _positive(top_n, integer=True):
        raise RerankError(protocol, f"top_n は 1 以上の整数にしてください(現在: {top_n!r})")
    docs = list(documents)
    if not docs:
        return []
    make_body, list_key, score_key = _WIRE[protocol]
    body = make_body(model, query, docs, top_n)
    payload = _post_json(protocol, url, body, api_key=api_key, timeout=timeout)
    items = payload.get(list_key) if list_key and isinstance(payload, dict) else payload
    if not isinstance(items, list) or not all(isinstance(i, dict) for i in items):
        raise RerankError(protocol, f"応答の形式が正しくありません: {str(payload)[:120]!r}")
    pairs = ((i.get("index"), i.get(score_key)) for i in items)
    return _validated(protocol, pairs, len(docs))[:top_n]


class CohereReranker:
    """Cohere's rerank API v2: ``POST {base_url}/v2/rerank`` with ``Authorization: Bearer``."""

    def __init__(
        self,
        *,
        api_key: str | None = None,
        model: str = "rerank-v3.5",
        base_url: str = "https://api.cohere.com",
        timeout: float = 10.0,
    ) -> None:
        key = api_key or os.environ.get("CO_API_KEY") or os.environ.get("COHERE_API_KEY")
        if not key:
            raise RerankError(
                "cohere",
                "APIキーがありません。api_key を渡すか、環境変数 CO_API_KEY"
                "(または COHERE_API_KEY)を設定してください",
            )
        self._api_key = key
        self.model = model
        self.timeout = _check_timeout("cohere", timeout)
        self.url = _endpoint("cohere", base_url, "v2")

    @property
    def name(self) -> str:
        return f"cohere:{self.model}"

    def __repr__(self) -> str:  # never shows the key
        return f"CohereReranker(model={self.model!r}, url={self.url!r})"

    def rerank(
        self,
        query: str,
        documents: Sequence[str],
        *,
        top_n: int | None = None,
        timeout: float | None = None,
    ) -> list[RerankScore]:
        t = self.timeout if timeout is None else _check_timeout("cohere", timeout)
        return _rerank_http(
            "cohere", self.url, self._api_key, self.model, query, documents, top_n, t
        )


class HttpReranker:
    """A self-hosted rerank server: ``protocol="tei"`` (text-embeddings-inference) or
    ``"openai"`` (the Jina/Cohere-style ``/v1/rerank`` of Infinity and vLLM)."""

    def __init__(
        self,
        base_url: str,
        *,
        protocol: str = "openai",
        model: str | None = None,
        api_key: str | None = None,
        timeout: float = 10.0,
    ) -> None:
        self.protocol = RerankProtocol.from_str(protocol)
        self.model = model
        self._api_key = api_key
        self.timeout = _check_timeout(self.protocol, timeout)
        version = "v1" if self.protocol is RerankProtocol.OPENAI else None
        self.url = _endpoint(self.protocol, base_url, version)

    @property
    def name(self) -> str:
        return f"{self.protocol}:{self.model or self.url}"

    def __repr__(self) -> str:  # never shows the key
        return f"HttpReranker(protocol={self.protocol!s}, model={self.model!r}, url={self.url!r})"

    def rerank(
        self,
        query: str,
        documents: Sequence[str],
        *,
        top_n: int | None = None,
        timeout: float | None = None,
    ) -> list[RerankScore]:
        t = self.timeout if timeout is None else _check_timeout(self.protocol, timeout)
        key = self._api_key
        return _rerank_http(self.protocol, self.url, key, self.model, query, documents, top_n, t)


# -- configuration ------------------------------------------------------------------------------

# provider -> protocol; "infinity" and "vllm" are aliases of "openai"
_PROVIDERS = {
    "cohere": "cohere",
    "tei": "tei",
    "openai": "openai",
    "infinity": "openai",
    "vllm": "openai",
}
_CONFIG_KEYS = ("provider", "base_url", "model", "api_key_env", "timeout")
_ENGINE_KEYS = ("enabled", "max_candidates", "budget_s")  # read by the search engine


def _config_str(cfg: Mapping[str, Any], key: str) -> str | None:
    value = cfg.get(key)
    if value is None or value == "":
        return None
    if not isinstance(value, str):
        raise ConfigError(f"[rerank] {key} は文字列にしてください(現在: {value!r})")
    return value


def _config_number(cfg: Mapping[str, Any], key: str, *, integer: bool = False) -> None:
    value = cfg.get(key)
    if value is not None and not _positive(value, integer=integer):
        what = "1 以上の整数" if integer else "正の数"
        raise ConfigError(f"[rerank] {key} は{what}にしてください(現在: {value!r})")


def reranker_from_config(cfg: Mapping[str, Any] | None) -> Reranker | None:
    """Build a reranker from a collection's ``[rerank]`` table; ``None`` when no provider is set.

    ``{"provider": "cohere"|"tei"|"openai" (aliases "infinity", "vllm"), "base_url", "model",
    "api_key_env": "CO_API_KEY", "timeout": 5}``; ``enabled``, ``max_candidates`` and ``budget_s``
    are validated here and used by the search engine. Bad values raise :class:`ConfigError`; a
    named key variable that is not set, or a Cohere key that cannot be found, :class:`RerankError`.
    """
    if not cfg:
        return None
    unknown = sorted(set(cfg) - set(_CONFIG_KEYS) - set(_ENGINE_KEYS))
    if unknown:
        hint = (
            "(APIキーは設定に書かず api_key_env で環境変数名を指定します)"
            if "api_key" in unknown
            else ""
        )
        valid = ", ".join(_CONFIG_KEYS + _ENGINE_KEYS)
        raise ConfigError(
            f"[rerank] に不明なキーがあります: {', '.join(unknown)}{hint}。有効なキー: {valid}"
        )
    if not isinstance(cfg.get("enabled", False), bool):
        raise ConfigError(
            f"[rerank] enabled は true/false にしてください(現在: {cfg['enabled']!r})"
        )
    _config_number(cfg, "max_candidates", integer=True)
    _config_number(cfg, "budget_s")
    _config_number(cfg, "timeout")
    provider_name = _config_str(cfg, "provider")
    base_url = _config_str(cfg, "base_url")
    model = _config_str(cfg, "model")
    key_env = _config_str(cfg, "api_key_env")
    if provider_name is None:
        if base_url or model or key_env:
            raise ConfigError(
                f"[rerank] provider がありません。{', '.join(sorted(set(_PROVIDERS.values())))} "
                "のいずれかを指定してください"
            )
        return None
    provider = _PROVIDERS.get(provider_name.strip().lower())
    if provider is None:
        raise ConfigError(
            f"[rerank] provider は {', '.join(_PROVIDERS)} のいずれかです(現在: {provider_name!r})"
        )
    api_key = None
    if key_env:
        api_key = os.environ.get(key_env)
        if not api_key:
            raise RerankError(provider, f"環境変数 {key_env} が設定されていません(api_key_env)")
    timeout = float(cfg.get("timeout") or 10.0)
    if provider == "cohere":
        return CohereReranker(
            api_key=api_key,
            model=model or "rerank-v3.5",
            base_url=base_url or "https://api.cohere.com",
            timeout=timeout,
        )
    if base_url is None:
        raise ConfigError(f"[rerank] provider = {provider_name!r} には base_url が必要です")
    return HttpReranker(base_url, protocol=provider, model=model, api_key=api_key, timeout=timeout)


# -- applying a reranker ------------------------------------------------------------------------


@dataclass(frozen=True)
class RerankOutcome:
    order: tuple[int, ...]
    """Indices into ``texts``, best first; on fallback the original order."""
    scores: tuple[float | None, ...]
    """Rerank score per original index; ``None`` for candidates not sent, and on fallback."""
    applied: bool
    """False when nothing was reranked (fallback, or no candidates)."""
    reason: str
    """Empty, or why it fell back (Japanese)."""
    elapsed_ms: float


def _fallback(n: int, reason: str, started: float) -> RerankOutcome:
    elapsed = (time.perf_counter() - started) * 1000.0
    return RerankOutcome(tuple(range(n)), (None,) * n, False, reason, elapsed)


def rerank_candidates(
    reranker: Reranker,
    query: str,
    texts: Sequence[str],
    *,
    max_candidates: int = 50,
    budget_s: float = 2.0,
) -> RerankOutcome:
    """Rerank the first ``max_candidates`` texts (the fused top); the rest follow in their order.

    The reranker runs in a worker thread with ``budget_s`` as its HTTP timeout, and the call
    returns after at most ``budget_s`` whatever the provider does. A timeout, an HTTP or network
    error, a malformed answer, an out-of-range or duplicate index, or any exception from the
    reranker gives the original order with ``applied=False`` and the reason: never an exception.
    Scored candidates come best first (ties keep the reranker's order); sent candidates the
    reranker left out follow in their original order, then the candidates beyond the cap.
    """
    if not _positive(max_candidates, integer=True):
        raise ConfigError(f"max_candidates は 1 以上の整数にしてください(現在: {max_candidates!r})")
    if not _positive(budget_s):
        raise ConfigError(f"budget_s は正の秒数にしてください(現在: {budget_s!r})")
    started = time.perf_counter()
    n = len(texts)
    if n == 0:
        return _fallback(0, "リランクする候補がありません", started)
    sent = list(texts[:max_candidates])
    box: dict[str, Any] = {}

    def work() -> None:
        try:
            box["scores"] = reranker.rerank(query, sent, timeout=float(budget_s))
        except Exception as err:  # provider failures become a fallback, never a failed search
            box["error"] = err

    worker = threading.Thread(target=work, name="tansaku-rerank", daemon=True)
    worker.start()
    worker.join(budget_s)
    if worker.is_alive():
        return _fallback(n, f"{TIMEOUT_CAUSE}(予算 {budget_s:g} 秒)", started)
    err = box.get("error")
    if isinstance(err, TansakuError):
        return _fallback(n, str(err), started)
    if err is not None:
        return _fallback(
            n, f"リランカー「{reranker.name}」でエラーが発生しました: {err!r}", started
        )
    try:
        pairs = ((s.index, s.score) for s in box["scores"])
        ranked = _validated(reranker.name, pairs, len(sent))
    except RerankError as bad:
        return _fallback(n, str(bad), started)
    except (AttributeError, TypeError) as bad:
        return _fallback(n, f"リランカー「{reranker.name}」の戻り値が不正です: {bad}", started)
    scores: list[float | None] = [None] * n
    for s in ranked:
        scores[s.index] = s.score
    scored = [s.index for s in ranked]
    rest = [i for i in range(len(sent)) if scores[i] is None]
    order = (*scored, *rest, *range(len(sent), n))
    elapsed = (time.perf_counter() - started) * 1000.0
    return RerankOutcome(order, tuple(scores), True, "", elapsed)

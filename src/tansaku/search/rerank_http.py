"""Rerankers over HTTP: the :class:`Reranker` protocol and its wire clients.

:class:`CohereReranker` speaks Cohere's rerank API v2; :class:`HttpReranker` speaks to
self-hosted servers (Hugging Face TEI's ``/rerank``, or the Jina/Cohere-style ``/v1/rerank``
that Infinity and vLLM serve). Every failure is a :class:`RerankError`; answers are validated
(:func:`validated_scores`) before anyone uses them. Applying a reranker to search hits, with its
time budget and fallback, is :mod:`tansaku.search.rerank`.
"""

from __future__ import annotations

import http.client
import ipaddress
import json
import math
import os
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import KW_ONLY, dataclass
from enum import StrEnum
from typing import Any, Protocol, TypedDict, Unpack

from tansaku.errors import TansakuError, check_keywords, http_status_cause

MAX_RESPONSE_BYTES = 16 * 1024 * 1024
TIMEOUT_CAUSE = "リランカーが時間内に応答しませんでした"


@dataclass(eq=False, repr=False)
class RerankError(TansakuError):
    """A reranker failed: bad settings, unreachable, timed out, refused, or an unusable answer."""

    provider: str
    cause: str
    _: KW_ONLY
    status: int | None = None
    """The HTTP status, when the server answered with an error."""
    timed_out: bool = False

    def __post_init__(self) -> None:
        super().__init__(f"リランカー「{self.provider}」: {self.cause}")


@dataclass(frozen=True)
class RerankScore:
    index: int
    """Position in the ``documents`` list passed to :meth:`Reranker.rerank`."""
    score: float
    """Relevance given by the reranker; higher is better (scales differ between models)."""


class RerankOptions(TypedDict, total=False):
    """What a rerank asks besides the query and the documents, each optional."""

    top_n: int | None
    """Scores at most (default: none, one per document)."""
    timeout: float | None
    """Seconds the reranker may take (default: its own)."""


class Reranker(Protocol):
    @property
    def name(self) -> str: ...

    def rerank(
        self, query: str, documents: Sequence[str], **options: Unpack[RerankOptions]
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


def is_positive(value: object, *, integer: bool = False) -> bool:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return False
    return math.isfinite(value) and value > 0 and (isinstance(value, int) or not integer)


def _check_timeout(provider: str, timeout: float) -> float:
    if not is_positive(timeout):
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
    hints = {
        404: f"エンドポイント {url} がありません(HTTP 404)。"
        "base_url と protocol を確認してください",
        429: "レート制限に達しました(HTTP 429)。しばらく待ってから再試行してください",
    }
    cause = http_status_cause(err.code, _error_detail(err), hints)
    return RerankError(provider, cause, status=err.code)


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


def validated_scores(
    provider: str, pairs: Iterable[tuple[Any, Any]], n_docs: int
) -> list[RerankScore]:
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


class _WireReranker:
    """What the HTTP rerankers share: one endpoint spoken to in one wire protocol (a key of
    ``_WIRE``), with a key, a model and a default timeout; :meth:`rerank` posts the request and
    validates the answer. A subclass calls :meth:`_connect` from ``__init__``."""

    model: str | None

    def _connect(
        self, wire: str, base_url: str, version: str | None, api_key: str | None, timeout: float
    ) -> None:
        self._wire = wire
        self._api_key = api_key
        self.timeout = _check_timeout(wire, timeout)
        self.url = _endpoint(wire, base_url, version)

    def rerank(
        self, query: str, documents: Sequence[str], **options: Unpack[RerankOptions]
    ) -> list[RerankScore]:
        check_keywords("rerank", options, RerankOptions)
        wire = self._wire
        timeout, top_n = options.get("timeout"), options.get("top_n")
        t = self.timeout if timeout is None else _check_timeout(wire, timeout)
        if top_n is not None and not is_positive(top_n, integer=True):
            raise RerankError(wire, f"top_n は 1 以上の整数にしてください(現在: {top_n!r})")
        docs = list(documents)
        if not docs:
            return []
        make_body, list_key, score_key = _WIRE[wire]
        body = make_body(self.model, query, docs, top_n)
        payload = _post_json(wire, self.url, body, api_key=self._api_key, timeout=t)
        items = payload.get(list_key) if list_key and isinstance(payload, dict) else payload
        if not isinstance(items, list) or not all(isinstance(i, dict) for i in items):
            raise RerankError(wire, f"応答の形式が正しくありません: {str(payload)[:120]!r}")
        pairs = ((i.get("index"), i.get(score_key)) for i in items)
        return validated_scores(wire, pairs, len(docs))[:top_n]


class CohereReranker(_WireReranker):
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
        self.model = model
        self._connect("cohere", base_url, "v2", key, timeout)

    @property
    def name(self) -> str:
        return f"cohere:{self.model}"

    def __repr__(self) -> str:  # never shows the key
        return f"CohereReranker(model={self.model!r}, url={self.url!r})"


class HttpReranker(_WireReranker):
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
        version = "v1" if self.protocol is RerankProtocol.OPENAI else None
        self._connect(self.protocol, base_url, version, api_key, timeout)

    @property
    def name(self) -> str:
        return f"{self.protocol}:{self.model or self.url}"

    def __repr__(self) -> str:  # never shows the key
        return f"HttpReranker(protocol={self.protocol!s}, model={self.model!r}, url={self.url!r})"

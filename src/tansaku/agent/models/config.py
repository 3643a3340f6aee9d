"""Which chat model the agent uses: the environment, then ``<home>/tansaku.toml`` ``[llm]``.

>>> model = load_model(home)          # None: nothing configured, the agent answers offline

Environment (wins over the file, field by field)::

    TANSAKU_LLM_PROVIDER   openai | gemini | llamacpp | none  (or ollama, vllm, lmstudio:
                           OpenAI-compatible servers with their usual local base URL)
    TANSAKU_LLM_BASE_URL   an OpenAI-compatible server (http://localhost:11434/v1 …)
    TANSAKU_LLM_MODEL      the model name (llamacpp: an installed model's name or a .gguf path)
    TANSAKU_LLM_API_KEY    the key; else the variable named by api_key_env, else
                           OPENAI_API_KEY (only for api.openai.com) / GEMINI_API_KEY

The file::

    [llm]
    provider = "ollama"
    model = "qwen2.5:7b-instruct"
    base_url = "http://localhost:11434/v1"
    api_key_env = "MY_LLM_KEY"     # the key itself never goes in a file
    timeout = 60                    # seconds per request
    max_retries = 2                 # on 429 / 5xx / timeouts, with backoff
    temperature = 0.2
    context_size = 8192             # llamacpp: the model's context window in tokens
    threads = 1                     # llamacpp: generation threads (default: every core)
"""

from __future__ import annotations

import os
import threading
from collections.abc import Mapping
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import Any

from tansaku.agent.models.base import ChatModel
from tansaku.errors import ConfigError
from tansaku.workspace import Workspace, settings_table

CONFIG_FILE = "tansaku.toml"
PROVIDERS = ("openai", "gemini", "llamacpp", "none")
LOCAL_SERVERS = {
    "ollama": "http://localhost:11434/v1",
    "vllm": "http://localhost:8000/v1",
    "lmstudio": "http://localhost:1234/v1",
}
ENV = {
    "provider": "TANSAKU_LLM_PROVIDER",
    "base_url": "TANSAKU_LLM_BASE_URL",
    "model": "TANSAKU_LLM_MODEL",
    "api_key": "TANSAKU_LLM_API_KEY",
}
_FILE_KEYS = (
    "provider",
    "base_url",
    "model",
    "api_key_env",
    "timeout",
    "max_retries",
    "temperature",
    "context_size",
    "threads",
)


@dataclass(frozen=True, kw_only=True)
class ModelSettings:
    """A chat-model configuration, resolved (``load_model`` builds the model from it)."""

    provider: str = ""
    """``openai`` (any OpenAI-compatible server), ``gemini``, ``llamacpp``, ``none``, or an
    alias of a local server (``ollama``, ``vllm``, ``lmstudio``)."""
    model: str = ""
    base_url: str | None = None
    api_key: str | None = None
    api_key_env: str | None = None
    """The environment variable that holds the key (files never hold keys)."""
    timeout: float = 60.0
    max_retries: int = 2
    temperature: float | None = None
    context_size: int = 4096
    """A local (llamacpp) model's context window in tokens: an agent step's prompt with a
    long tool result needs more than 4,096."""
    threads: int | None = None
    """A local model's generation threads (None: every core; on a shared machine 1 can be
    several times faster than threads that wait for each other)."""

    @property
    def kind(self) -> str:
        """The implementation: ``openai``, ``gemini``, ``llamacpp`` or ``none``."""
        return "openai" if self.provider in LOCAL_SERVERS else self.provider

    def public(self) -> dict[str, Any]:
        """The settings without the key (for ``tansaku models list`` and logs)."""
        out = {f.name: getattr(self, f.name) for f in fields(self) if f.name != "api_key"}
        out["api_key_set"] = bool(self.api_key)
        return out


def _number(value: Any, key: str, lo: float, hi: float, *, integer: bool = False) -> Any:
    ok = isinstance(value, int) if integer else isinstance(value, int | float)
    if isinstance(value, bool) or not ok or not lo <= value <= hi:
        kind = "整数" if integer else "数値"
        raise ConfigError(f"[llm] {key} は {lo:g}〜{hi:g} の{kind}にしてください(値: {value!r})")
    return int(value) if integer else float(value)


def _from_mapping(raw: Mapping[str, Any], where: str) -> dict[str, Any]:
    unknown = sorted(set(raw) - set(_FILE_KEYS) - {"api_key"})
    if unknown:
        raise ConfigError(
            f"{where} の [llm] に不明な項目があります: {', '.join(unknown)}"
            f"(使える項目: {', '.join(_FILE_KEYS)})"
        )
    out: dict[str, Any] = {}
    for key in ("provider", "base_url", "model", "api_key_env", "api_key"):
        if raw.get(key) is not None:
            if not isinstance(raw[key], str):
                raise ConfigError(f"{where} の [llm] {key} は文字列にしてください")
            out[key] = raw[key].strip()
    if raw.get("timeout") is not None:
        out["timeout"] = _number(raw["timeout"], "timeout", 0.1, 3600)
    if raw.get("max_retries") is not None:
        out["max_retries"] = _number(raw["max_retries"], "max_retries", 0, 10, integer=True)
    if raw.get("temperature") is not None:
        out["temperature"] = _number(raw["temperature"], "temperature", 0, 2)
    if raw.get("context_size") is not None:
        out["context_size"] = _number(
            raw["context_size"], "context_size", 512, 131072, integer=True
        )
    if raw.get("threads") is not None:
        out["threads"] = _number(raw["threads"], "threads", 1, 256, integer=True)
    return out


def _file_settings(home: Path) -> dict[str, Any]:
    path = home / CONFIG_FILE
    section = settings_table(home, "llm")
    if not isinstance(section, dict):
        raise ConfigError(f"{path} の llm は [llm] セクションにしてください")
    if "api_key" in section:
        raise ConfigError(
            f'{path} に API キーを書かないでください。api_key_env = "環境変数名" で'
            "キーを持つ環境変数を指定してください"
        )
    return _from_mapping(section, str(path))


def _key(s: ModelSettings, env: Mapping[str, str]) -> str | None:
    if s.api_key:
        return s.api_key
    if s.api_key_env:
        value = env.get(s.api_key_env)
        if not value:
            raise ConfigError(
                f"api_key_env で指定した環境変数 {s.api_key_env} が設定されていません"
            )
        return value
    if s.kind == "openai" and (s.base_url is None or "api.openai.com" in s.base_url):
        return env.get("OPENAI_API_KEY") or None  # never sent to another server
    if s.kind == "gemini":
        return env.get("GEMINI_API_KEY") or env.get("GOOGLE_API_KEY") or None
    return None


def resolve_settings(
    home: str | Path | None = None,
    *,
    override: ModelSettings | Mapping[str, Any] | None = None,
    env: Mapping[str, str] | None = None,
) -> ModelSettings | None:
    """The configured settings (file < environment < ``override``), or None when no model is
    configured or the provider is ``none``. Raises :class:`ConfigError` for a bad value."""
    environ = os.environ if env is None else env
    merged = _file_settings(Workspace.from_env(home).home)
    from_env = {k: environ[v].strip() for k, v in ENV.items() if environ.get(v, "").strip()}
    merged.update(from_env)
    if isinstance(override, ModelSettings):
        merged.update(
            {
                f.name: getattr(override, f.name)
                for f in fields(override)
                if getattr(override, f.name) != f.default
            }
        )
    elif override:
        merged.update(
            _from_mapping({k: v for k, v in override.items() if v is not None}, "override")
        )
    provider = str(merged.get("provider") or "").lower()
    if not provider:
        if not merged.get("model") and not merged.get("base_url"):
            return None
        provider = "openai"
    if provider not in PROVIDERS and provider not in LOCAL_SERVERS:
        valid = ", ".join([*PROVIDERS, *LOCAL_SERVERS])
        raise ConfigError(f"LLM のプロバイダー「{provider}」は使えません(使えるもの: {valid})")
    if provider == "none":
        return None
    settings = ModelSettings(**{**merged, "provider": provider})
    if provider in LOCAL_SERVERS and not settings.base_url:
        settings = replace(settings, base_url=LOCAL_SERVERS[provider])
    if not settings.model and settings.kind != "llamacpp":
        raise ConfigError(
            f"LLM のモデル名がありません。TANSAKU_LLM_MODEL か {CONFIG_FILE} の [llm] model で"
            "指定してください"
        )
    return replace(settings, api_key=_key(settings, environ))


def _endpoint_kwargs(settings: ModelSettings) -> dict[str, Any]:
    """What every model behind an HTTP endpoint (OpenAI-compatible, Gemini) takes from
    ``settings``."""
    return {
        "model": settings.model,
        "api_key": settings.api_key,
        "base_url": settings.base_url,
        "timeout": settings.timeout,
        "max_retries": settings.max_retries,
        "temperature": settings.temperature,
    }


def build_model(settings: ModelSettings, home: str | Path | None = None) -> ChatModel:
    """The chat model of ``settings`` (its SDK imported now; a missing one: MissingExtra)."""
    if settings.kind == "gemini":
        from tansaku.agent.models.gemini import GeminiChatModel

        return GeminiChatModel(**_endpoint_kwargs(settings))
    if settings.kind == "llamacpp":
        from tansaku.agent.models.install import resolve_gguf
        from tansaku.agent.models.llamacpp import LlamaCppChatModel

        path = resolve_gguf(settings.model, Workspace.from_env(home).home)
        return LlamaCppChatModel(
            path,
            temperature=settings.temperature,
            n_ctx=settings.context_size,
            n_threads=settings.threads,
        )
    if settings.kind == "openai" and settings.base_url is None and not settings.api_key:
        raise ConfigError(
            "OpenAI の API には API キーが必要です。OPENAI_API_KEY か TANSAKU_LLM_API_KEY を"
            "設定するか、ローカルのサーバーなら TANSAKU_LLM_BASE_URL を指定してください"
        )
    from tansaku.agent.models.openai_compat import OpenAIChatModel

    return OpenAIChatModel(**_endpoint_kwargs(settings), provider=settings.provider)


def load_model(
    home: str | Path | None = None,
    *,
    override: ModelSettings | Mapping[str, Any] | None = None,
) -> ChatModel | None:
    """The configured chat model, or None when none is configured (the agent then uses its
    offline router). Raises ``ConfigError`` (bad configuration, in Japanese) or ``MissingExtra``
    (``pip install 'tansaku[llm]'`` / ``'tansaku[local]'``)."""
    settings = resolve_settings(home, override=override)
    if settings is None:
        return None
    # One model per configuration and process: an agent turn asks for it each time, and a new
    # one would mean a new HTTP connection pool (or a GGUF loaded again) per question. A changed
    # configuration is a new key, so a running server picks it up.
    key = (settings, str(Workspace.from_env(home).home))
    with _BUILT_LOCK:
        model = _BUILT.get(key)
        if model is None:
            if len(_BUILT) >= _MAX_BUILT:
                _BUILT.pop(next(iter(_BUILT)))
            model = _BUILT[key] = build_model(settings, home)
        return model


_BUILT: dict[tuple[ModelSettings, str], ChatModel] = {}
_BUILT_LOCK = threading.Lock()
_MAX_BUILT = 4

"""load_model / resolve_settings: environment over the workspace's tansaku.toml, keys from the
environment only, clear Japanese errors for bad values."""

from __future__ import annotations

from pathlib import Path

import pytest

from tansaku.agent.models import Message
from tansaku.agent.models.config import ModelSettings, load_model, resolve_settings
from tansaku.agent.models.gemini import GeminiChatModel
from tansaku.agent.models.openai_compat import OpenAIChatModel
from tansaku.errors import ConfigError, MissingExtra
from tansaku.testing import FakeOpenAIServer, Reply


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for var in (
        "TANSAKU_LLM_PROVIDER",
        "TANSAKU_LLM_BASE_URL",
        "TANSAKU_LLM_MODEL",
        "TANSAKU_LLM_API_KEY",
        "OPENAI_API_KEY",
        "GEMINI_API_KEY",
        "GOOGLE_API_KEY",
    ):
        monkeypatch.delenv(var, raising=False)
    h = tmp_path / "ws"
    h.mkdir()
    return h


def write(home: Path, text: str) -> None:
    (home / "tansaku.toml").write_text(text, encoding="utf-8")


def test_nothing_configured_is_none(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-present-but-not-a-choice")
    assert load_model(home) is None  # a key alone never turns a paid model on


def test_provider_none_is_none(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write(home, '[llm]\nprovider = "openai"\nmodel = "gpt-4o-mini"\n')
    monkeypatch.setenv("TANSAKU_LLM_PROVIDER", "none")
    assert load_model(home) is None


def test_the_file(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write(
        home,
        '[llm]\nprovider = "ollama"\nmodel = "qwen2.5:7b-instruct"\ntimeout = 30\n'
        'max_retries = 1\ntemperature = 0.2\napi_key_env = "MY_LLM_KEY"\n',
    )
    monkeypatch.setenv("MY_LLM_KEY", "local-secret")
    s = resolve_settings(home)
    assert s == ModelSettings(
        provider="ollama",
        model="qwen2.5:7b-instruct",
        base_url="http://localhost:11434/v1",
        api_key="local-secret",
        api_key_env="MY_LLM_KEY",
        timeout=30.0,
        max_retries=1,
        temperature=0.2,
    )
    assert "local-secret" not in str(s.public())
    model = load_model(home)
    assert isinstance(model, OpenAIChatModel) and model.name == "ollama:qwen2.5:7b-instruct"


def test_the_environment_wins_field_by_field(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write(home, '[llm]\nprovider = "openai"\nmodel = "gpt-4o-mini"\ntimeout = 5\n')
    monkeypatch.setenv("TANSAKU_LLM_BASE_URL", "http://127.0.0.1:8000/v1")
    monkeypatch.setenv("TANSAKU_LLM_MODEL", "Qwen/Qwen2.5-7B-Instruct")
    s = resolve_settings(home)
    assert s is not None
    assert (s.model, s.base_url, s.timeout) == (
        "Qwen/Qwen2.5-7B-Instruct",
        "http://127.0.0.1:8000/v1",
        5.0,
    )


def test_override_wins(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TANSAKU_LLM_MODEL", "gpt-4o-mini")
    monkeypatch.setenv("TANSAKU_LLM_BASE_URL", "http://127.0.0.1:9/v1")
    s = resolve_settings(home, override={"model": "llama3.1:8b", "temperature": 0})
    assert s is not None and s.model == "llama3.1:8b" and s.temperature == 0.0
    s2 = resolve_settings(home, override=ModelSettings(provider="vllm"))
    assert s2 is not None and s2.provider == "vllm" and s2.model == "gpt-4o-mini"


def test_a_model_or_url_alone_means_openai_compatible(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TANSAKU_LLM_BASE_URL", "http://127.0.0.1:8080/v1")
    monkeypatch.setenv("TANSAKU_LLM_MODEL", "local")
    s = resolve_settings(home)
    assert s is not None and s.kind == "openai" and s.api_key is None


def test_openai_key_is_only_sent_to_openai(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-real-openai")
    monkeypatch.setenv("TANSAKU_LLM_MODEL", "gpt-4o-mini")
    s = resolve_settings(home)
    assert s is not None and s.api_key == "sk-real-openai" and s.base_url is None
    monkeypatch.setenv("TANSAKU_LLM_BASE_URL", "http://example.invalid/v1")
    s = resolve_settings(home)
    assert s is not None and s.api_key is None


def test_gemini_key_fallback(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TANSAKU_LLM_PROVIDER", "gemini")
    monkeypatch.setenv("TANSAKU_LLM_MODEL", "gemini-2.5-flash")
    monkeypatch.setenv("GEMINI_API_KEY", "AIza-from-env")
    model = load_model(home)
    assert isinstance(model, GeminiChatModel) and model.name == "gemini:gemini-2.5-flash"


def test_the_loaded_model_answers(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with FakeOpenAIServer([Reply.say("はい、設定どおりです。")], api_key="k-123") as srv:
        monkeypatch.setenv("TANSAKU_LLM_BASE_URL", srv.base_url)
        monkeypatch.setenv("TANSAKU_LLM_MODEL", "fake")
        monkeypatch.setenv("TANSAKU_LLM_API_KEY", "k-123")
        model = load_model(home)
        assert model is not None
        assert model.chat([Message.user("設定を確認して")]).content == "はい、設定どおりです。"


@pytest.mark.parametrize(
    ("toml", "message"),
    [
        ('[llm]\nprovider = "claude"\nmodel = "x"\n', "プロバイダー「claude」は使えません"),
        ('[llm]\nprovider = "openai"\n', "モデル名がありません"),
        ('[llm]\nmodel = "m"\ntimeout = -1\n', "timeout は 0.1〜3600"),
        ('[llm]\nmodel = "m"\nmax_retries = 2.5\n', "max_retries は 0〜10 の整数"),
        ('[llm]\nmodel = "m"\ntemprature = 0.1\n', "不明な項目があります: temprature"),
        ('[llm]\nmodel = "m"\ncontext_size = 100\n', "context_size は 512〜131072 の整数"),
        ('[llm]\nmodel = "m"\nthreads = 0\n', "threads は 1〜256 の整数"),
        ('[llm]\nmodel = "m"\napi_key = "sk-in-a-file"\n', "API キーを書かないでください"),
        ('[llm]\nmodel = "m"\napi_key_env = "NOT_SET_ANYWHERE"\n', "NOT_SET_ANYWHERE"),
        ("[llm\nmodel = 1\n", "TOML が不正です"),
    ],
)
def test_bad_configuration(home: Path, toml: str, message: str) -> None:
    write(home, toml)
    with pytest.raises(ConfigError, match=message):
        load_model(home)


def test_openai_without_a_key_is_a_config_error(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TANSAKU_LLM_MODEL", "gpt-4o-mini")
    with pytest.raises(ConfigError, match="OPENAI_API_KEY"):
        load_model(home)


def test_llamacpp_not_installed_is_a_clear_error(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TANSAKU_LLM_PROVIDER", "llamacpp")
    monkeypatch.setenv("TANSAKU_LLM_MODEL", "qwen2.5-0.5b")
    with pytest.raises((ConfigError, MissingExtra)) as info:
        load_model(home)
    text = str(info.value)
    assert "tansaku models install qwen2.5-0.5b" in text or "tansaku[local]" in text


def test_a_missing_sdk_names_the_extra(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    monkeypatch.setitem(sys.modules, "openai", None)  # as if `tansaku[llm]` were not installed
    monkeypatch.setenv("TANSAKU_LLM_BASE_URL", "http://127.0.0.1:9/v1")
    monkeypatch.setenv("TANSAKU_LLM_MODEL", "m")
    with pytest.raises(MissingExtra, match=r"pip install 'tansaku\[llm\]'"):
        load_model(home)


def test_one_model_per_configuration(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every agent turn asks for the configured model: the same configuration gives the same
    instance (its connection pool, or a loaded GGUF, is kept); a changed one a new model."""
    monkeypatch.setenv("TANSAKU_LLM_PROVIDER", "ollama")
    monkeypatch.setenv("TANSAKU_LLM_MODEL", "qwen2.5:7b-instruct")
    first = load_model(home)
    assert first is not None and load_model(home) is first
    monkeypatch.setenv("TANSAKU_LLM_MODEL", "llama3.1:8b")
    other = load_model(home)
    assert other is not first and other is not None and other.name == "ollama:llama3.1:8b"


def test_a_local_models_context_and_threads(home: Path) -> None:
    """A local model's context window and threads come from the file (an agent step's prompt
    with a long tool result overflows the default 4,096 tokens)."""
    write(home, '[llm]\nprovider = "llamacpp"\nmodel = "m"\ncontext_size = 8192\nthreads = 1\n')
    s = resolve_settings(home)
    assert (s.context_size, s.threads) == (8192, 1)
    assert (ModelSettings().context_size, ModelSettings().threads) == (4096, None)

"""load_embedder: the [embedder] table of tansaku.toml and the TANSAKU_EMBED* variables."""

from __future__ import annotations

from pathlib import Path

import pytest

from tansaku.embed import GeminiEmbedder, OpenAIEmbedder, load_embedder
from tansaku.errors import ConfigError


def write(home: Path, text: str) -> Path:
    home.mkdir(parents=True, exist_ok=True)
    (home / "tansaku.toml").write_text(text, encoding="utf-8")
    return home


def test_nothing_configured_means_the_default(tmp_path) -> None:
    assert load_embedder(tmp_path, env={}) is None
    assert load_embedder(write(tmp_path, '[embedder]\nprovider = "default"\n'), env={}) is None


def test_the_file_describes_a_tei_server(tmp_path) -> None:
    home = write(
        tmp_path,
        """
[embedder]
provider = "tei"
base_url = "http://gpu-box:8080/v1"
model = "intfloat/multilingual-e5-large"
api_key_env = "TEI_TOKEN"
batch_size = 32
concurrency = 6
timeout = 20
dim = 1024
""",
    )
    emb = load_embedder(home, env={"TEI_TOKEN": "tok"})
    assert isinstance(emb, OpenAIEmbedder)
    assert emb.name == "openai/intfloat/multilingual-e5-large+e5" and emb.dim == 1024
    assert emb.endpoint == "http://gpu-box:8080/v1/embeddings"
    assert (emb.options.batch_size, emb.options.concurrency, emb.options.timeout) == (32, 6, 20.0)
    assert "tok" not in repr(emb)


def test_the_environment_wins_key_by_key(tmp_path) -> None:
    home = write(tmp_path, '[embedder]\nprovider = "openai"\nmodel = "text-embedding-3-small"\n')
    env = {
        "TANSAKU_EMBEDDER": "ollama",
        "TANSAKU_EMBED_BASE_URL": "http://127.0.0.1:11434/v1",
        "TANSAKU_EMBED_MODEL": "bge-m3",
        "TANSAKU_EMBED_BATCH_SIZE": "16",
        "TANSAKU_EMBED_CONCURRENCY": "2",
        "TANSAKU_EMBED_API_KEY": "secret",
    }
    emb = load_embedder(home, env=env)
    assert isinstance(emb, OpenAIEmbedder) and emb.name == "openai/bge-m3"
    assert emb.endpoint == "http://127.0.0.1:11434/v1/embeddings"
    assert (emb.options.batch_size, emb.options.concurrency) == (16, 2)


def test_gemini_from_the_environment_alone(tmp_path) -> None:
    env = {"TANSAKU_EMBEDDER": "gemini", "TANSAKU_EMBED_DIMENSIONS": "768"}
    emb = load_embedder(tmp_path, env=env)
    assert isinstance(emb, GeminiEmbedder)
    assert emb.name == "gemini/gemini-embedding-001@768" and emb.dim == 768


def test_home_defaults_to_tansaku_home(tmp_path, monkeypatch) -> None:
    home = write(tmp_path / "ws", '[embedder]\nprovider = "gemini"\ndim = 3072\n')
    monkeypatch.setenv("TANSAKU_HOME", str(home))
    assert isinstance(load_embedder(env={}), GeminiEmbedder)


@pytest.mark.parametrize(
    ("toml", "env", "message"),
    [
        ('[embedder]\nprovider = "cohere"\n', {}, "provider「cohere」は使えません"),
        ('[embedder]\nprovider = "openai"\n', {}, "TANSAKU_EMBED_MODEL"),
        ('[embedder]\nprovider = "vllm"\nmodel = "m"\n', {}, "base_url が必要"),
        ('[embedder]\napi_key = "sk-123"\n', {}, "api_key_env で環境変数名を指定"),
        ('[embedder]\nprovider = "gemini"\napi_key_env = "NOPE"\n', {}, "環境変数 NOPE"),
        ('[embedder]\nprovider = "gemini"\n', {"TANSAKU_EMBED_BATCH_SIZE": "多め"}, "整数"),
        ('[embedder]\nprovider = "gemini"\nconcurrency = 0\n', {}, "concurrency は 1 以上"),
        ('[embedder]\nprovider = "gemini"\ntimeout = "x"\n', {}, "正の秒数"),
        ("[embedder\n", {}, "を読めません"),
    ],
)
def test_bad_settings_are_named(tmp_path, toml, env, message) -> None:
    with pytest.raises(ConfigError, match=message):
        load_embedder(write(tmp_path, toml), env=env)

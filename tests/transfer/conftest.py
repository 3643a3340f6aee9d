"""Fixtures of the transfer tests: the fake embedding server, the environment that makes
``tansaku`` use it, and the source workspace (see :mod:`.support`)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tansaku.testing.fake_embedding_server import FakeEmbeddingServer

from .support import CONFIGS, DIM, TEAMS, cli_json, env_for, write_sources


@pytest.fixture(scope="module")
def server() -> Iterator[FakeEmbeddingServer]:
    with FakeEmbeddingServer(dim=DIM, max_batch=None) as srv:
        yield srv


@pytest.fixture(scope="module")
def embed_env(server: FakeEmbeddingServer) -> Iterator[dict[str, str]]:
    env = env_for(server)
    with pytest.MonkeyPatch.context() as mp:
        for key, value in env.items():
            mp.setenv(key, value)
        mp.delenv("TANSAKU_QDRANT_URL", raising=False)
        yield env


@pytest.fixture(scope="module")
def work(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("transfer")
    for name, axes in CONFIGS.items():
        (root / f"{name}.toml").write_text(axes, encoding="utf-8")
    return root


@pytest.fixture(scope="module")
def source_home(work: Path, embed_env: dict[str, str]) -> Path:
    """The source workspace: every collection of :data:`CONFIGS` for both teams."""
    home = work / "home-source"
    sources = write_sources(work / "src")
    for name in CONFIGS:
        cfg = str(work / f"{name}.toml")
        for team in TEAMS:
            report = cli_json(
                "ingest", str(sources[team]), "-c", name, "-t", team, "--config", cfg,
                "--home", str(home),
            )  # fmt: skip
            assert report["inserted"] >= 25 and not report["failed"], report
    return home


@pytest.fixture(scope="module")
def exported(source_home: Path, work: Path) -> dict[str, Path]:
    out = work / "exports"
    out.mkdir()
    files = {}
    for name in CONFIGS:
        report = cli_json("export", name, "-o", str(out), "--home", str(source_home))
        files[name] = Path(report["path"])
        assert files[name] == out / f"{name}.tansaku.tar"
    return files

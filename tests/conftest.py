from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
EXAMPLES = REPO / "examples"


@pytest.fixture(autouse=True)
def _isolated_home(tmp_path, monkeypatch):
    """No test touches ./.tansaku: TANSAKU_HOME points at a fresh folder per test."""
    monkeypatch.setenv("TANSAKU_HOME", str(tmp_path / "home"))


@pytest.fixture(scope="session")
def embedding_cache_dir(tmp_path_factory) -> Path:
    """One embedding cache for the whole run, so real-model tests embed each text once."""
    shared = os.environ.get("TANSAKU_TEST_CACHE")
    return Path(shared) if shared else tmp_path_factory.mktemp("embed-cache")

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


# What a test needs, by the fixtures it asks for: the markers `make test-fast` leaves out.
NEEDS = {
    "postgres": ("postgres", "integration"),  # a PostgreSQL server started for the run
    "pg_url": ("postgres", "integration"),
    "browser": ("browser", "e2e"),  # Debian's Chromium driven by Playwright
    "watched": ("browser", "e2e"),
    "real_home": ("integration",),  # the bundled embedding model
    "embedding_cache_dir": ("integration",),
}


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark each test by what it needs (a marker written on the test stays as it is)."""
    for item in items:
        names = set(getattr(item, "fixturenames", ()))
        marks = {m for name in names & NEEDS.keys() for m in NEEDS[name]}
        if "backend" in names and "postgresql" in item.name:
            marks |= {"postgres", "integration"}
        for mark in sorted(marks - {m.name for m in item.iter_markers()}):
            item.add_marker(getattr(pytest.mark, mark))

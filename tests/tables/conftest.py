"""Shared fixtures: a workspace with the demo tables installed, and its locked database."""

from __future__ import annotations

from pathlib import Path

import pytest

from tansaku.demo.tables import install_demo_tables
from tansaku.tables import TableDatabase, load_tables_config


@pytest.fixture(scope="session")
def demo_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    home = tmp_path_factory.mktemp("tables-home")
    install_demo_tables(home)
    return home


@pytest.fixture(scope="session")
def demo_config(demo_home: Path):
    return load_tables_config(demo_home / "tables.toml")


@pytest.fixture(scope="session")
def db(demo_config):
    with TableDatabase(demo_config) as database:
        yield database

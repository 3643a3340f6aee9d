"""Every appdb test runs against SQLite and against a real PostgreSQL server started here.

The PostgreSQL leg is marked ``integration``; it is skipped, with the reason, only when the
server cannot start on this machine.
"""

from __future__ import annotations

import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from tansaku.appdb import AppDB, open_appdb
from tansaku.testing.postgres import TemporaryPostgres


@pytest.fixture(autouse=True)
def _no_database_url(monkeypatch):
    monkeypatch.delenv("TANSAKU_DATABASE_URL", raising=False)


@pytest.fixture(scope="session")
def postgres() -> Iterator[TemporaryPostgres]:
    root = Path(tempfile.mkdtemp(prefix="tansaku-pg-"))
    server = TemporaryPostgres(root)
    try:
        server.start()
    except Exception as exc:  # the reason goes to the skip message
        pytest.skip(f"embedded PostgreSQL could not start: {type(exc).__name__}: {exc}")
    yield server
    server.stop()


@pytest.fixture
def pg_url(postgres: TemporaryPostgres) -> Iterator[str]:
    name = f"t_{uuid.uuid4().hex[:12]}"
    url = postgres.create_database(name)
    yield url
    postgres.drop_database(name)


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.integration)])
def backend(request) -> str:
    return str(request.param)


@pytest.fixture
def db_target(backend: str, tmp_path: Path, request) -> str | Path:
    """What ``open_appdb`` is given: a workspace folder (SQLite) or a PostgreSQL URL."""
    if backend == "sqlite":
        return tmp_path / "home"
    return str(request.getfixturevalue("pg_url"))


@pytest.fixture
def db(db_target: str | Path) -> Iterator[AppDB]:
    appdb = open_appdb(db_target)
    yield appdb
    appdb.close()

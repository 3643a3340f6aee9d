from __future__ import annotations

import ipaddress
import os
import shutil
import socket
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[1]
EXAMPLES = REPO / "examples"


@pytest.fixture(autouse=True)
def _isolated_home(tmp_path, monkeypatch):
    """No test touches ./.tansaku: TANSAKU_HOME points at a fresh folder per test."""
    monkeypatch.setenv("TANSAKU_HOME", str(tmp_path / "home"))


@pytest.fixture(scope="module")
def qdrant_dir(work: Path) -> Iterator[Path]:
    """A module's Qdrant local-mode store (``work``: the module's own folder): on /dev/shm when
    there is one (local mode commits every point to SQLite, ~10 ms a point on disk), else
    beside the module's workspaces."""
    shm = Path("/dev/shm")
    if not (shm.is_dir() and os.access(shm, os.W_OK)):
        yield work / "qdrant"
        return
    folder = Path(tempfile.mkdtemp(prefix="tansaku-qdrant-", dir=shm))
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


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


SLOW_MARKS = {"integration", "e2e"}


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark each test by what it needs (a marker written on the test stays as it is), then run
    the modules with integration or e2e tests first, each module whole and in its order: under
    pytest-xdist the long tests start early and the short ones fill the cores at the end (the
    order is the same on every worker, as xdist requires). The folders' own hooks (tests/ui)
    have run before this one, and `-m` deselects after it."""
    for item in items:
        names = set(getattr(item, "fixturenames", ()))
        marks = {m for name in names & NEEDS.keys() for m in NEEDS[name]}
        if "backend" in names and "postgresql" in item.name:
            marks |= {"postgres", "integration"}
        for mark in sorted(marks - {m.name for m in item.iter_markers()}):
            item.add_marker(getattr(pytest.mark, mark))
    slow = {
        item.nodeid.split("::")[0]
        for item in items
        if any(m.name in SLOW_MARKS for m in item.iter_markers())
    }
    items.sort(key=lambda item: item.nodeid.split("::")[0] not in slow)


# -- no test reaches the network -------------------------------------------------------------
# Every provider (LLM, embedding, rerank, Qdrant) is tested against a local fake server on
# 127.0.0.1; a test that would reach another host fails here, in this process, at once.
_connect = socket.socket.connect
_connect_ex = socket.socket.connect_ex
_getaddrinfo = socket.getaddrinfo
LOCAL_NAMES = {"localhost", "localhost.localdomain", ""}


def _local(address: Any) -> bool:
    if not isinstance(address, tuple):  # a Unix socket path
        return True
    host = str(address[0]).split("%")[0]
    if host in LOCAL_NAMES:
        return True
    try:
        ip = ipaddress.ip_address(host)
    except ValueError:
        return False
    return ip.is_loopback or ip.is_unspecified


def _refuse(address: Any) -> OSError:
    return ConnectionRefusedError(
        f"tests never leave this machine: connection to {address!r} refused"
    )


def _guarded_connect(self: socket.socket, address: Any) -> None:
    if not _local(address):
        raise _refuse(address)
    _connect(self, address)


def _guarded_connect_ex(self: socket.socket, address: Any) -> int:
    if not _local(address):
        raise _refuse(address)
    return _connect_ex(self, address)


def _guarded_getaddrinfo(host: Any, *args: Any, **kwargs: Any) -> Any:
    name = host.decode() if isinstance(host, bytes) else str(host or "")
    if name not in LOCAL_NAMES and not _local((name, 0)):
        raise socket.gaierror(socket.EAI_NONAME, f"tests never leave this machine: {name!r}")
    return _getaddrinfo(host, *args, **kwargs)


def pytest_configure(config: pytest.Config) -> None:
    socket.socket.connect = _guarded_connect  # type: ignore[method-assign]
    socket.socket.connect_ex = _guarded_connect_ex  # type: ignore[method-assign]
    socket.getaddrinfo = _guarded_getaddrinfo

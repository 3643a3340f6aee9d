from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

import tansaku
from tansaku.testing import HashEmbedder

from .support import KEY_ALPHA, KEY_BETA, Live, build_workspace, live_server, make_app

KEYS = {KEY_ALPHA: "alpha", KEY_BETA: "beta"}


@pytest.fixture(scope="session")
def template_workspace(tmp_path_factory):
    """The two teams' workspace, built once; servers serve copies of it."""
    home = tmp_path_factory.mktemp("server-template") / "ws"
    build_workspace(home).close()
    return home


def _serve(template: Path, home: Path) -> Iterator[Live]:
    shutil.copytree(template, home)
    client = tansaku.connect(home, embedder=HashEmbedder(32))
    try:
        with live_server(make_app(client, KEYS)) as server:
            yield server
    finally:
        client.close()


@pytest.fixture(scope="module")
def live(template_workspace, tmp_path_factory) -> Iterator[Live]:
    """A server with two teams' keys (alpha, beta) on a free port of 127.0.0.1, shared by the
    tests of a module that change nothing another test reads."""
    yield from _serve(template_workspace, tmp_path_factory.mktemp("live") / "ws")


@pytest.fixture
def fresh(template_workspace, tmp_path) -> Iterator[Live]:
    """A server of its own, for a test that changes the workspace."""
    yield from _serve(template_workspace, tmp_path / "ws")

"""Embedded → Qdrant (qdrant-client's local mode, ``--qdrant-url qdrant+local://…``) →
embedded, through ``tansaku export`` / ``tansaku import``: no embedding request on either
import, and every axis mode answers ``search --json`` as the source workspace does."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tansaku.testing.fake_embedding_server import FakeEmbeddingServer

from .support import CONFIGS, QUERIES, TEAMS, assert_same_hits, cli_json, hits

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def qdrant(qdrant_dir: Path) -> Iterator[list[str]]:
    """The root option that puts a command's collections in a local-mode Qdrant folder."""
    from tansaku.store.qdrant.settings import forget_shared_clients

    yield ["--qdrant-url", f"qdrant+local://{qdrant_dir}"]
    forget_shared_clients()


@pytest.fixture(scope="module")
def through_qdrant(
    exported: dict[str, Path], work: Path, server: FakeEmbeddingServer, qdrant: list[str]
) -> dict[str, Any]:
    q_home = work / "home-qdrant"  # the server backend's local workspace: caches and logs
    back_home = work / "home-back"
    out = work / "exports-from-qdrant"
    out.mkdir()
    before = len(server.requests)
    into = {
        name: cli_json(*qdrant, "import", str(path), "--home", str(q_home))
        for name, path in exported.items()
    }
    after_first = len(server.requests)
    again = {
        name: cli_json(*qdrant, "export", name, "-o", str(out), "--home", str(q_home))
        for name in exported
    }
    back = {
        name: cli_json("import", str(report["path"]), "--home", str(back_home))
        for name, report in again.items()
    }
    return {
        "q_home": q_home,
        "back_home": back_home,
        "into": into,
        "exports": again,
        "back": back,
        "requests": (after_first - before, len(server.requests) - after_first),
    }


def test_neither_import_sends_anything_to_the_embedding_server(
    through_qdrant: dict[str, Any],
) -> None:
    assert through_qdrant["requests"] == (0, 0)


def test_the_collections_live_in_qdrant_not_in_the_workspace(
    through_qdrant: dict[str, Any], qdrant_dir: Path, qdrant: list[str]
) -> None:
    assert not any((through_qdrant["q_home"] / "collections").glob("*/config.toml"))
    assert (qdrant_dir / "collection" / "tansaku_meta").is_dir()
    listed = cli_json(*qdrant, "collections", "--home", str(through_qdrant["q_home"]))
    assert sorted(c["name"] for c in listed["collections"]) == sorted(CONFIGS)


def test_counts_per_team_survive_both_ways(through_qdrant: dict[str, Any]) -> None:
    for name in CONFIGS:
        into, out, back = (through_qdrant[k][name] for k in ("into", "exports", "back"))
        assert into["teams"] == out["teams"] == back["teams"]
        assert set(back["teams"]) == set(TEAMS)
        assert into["units"] == back["units"]


@pytest.mark.parametrize("collection", sorted(CONFIGS))
def test_every_axis_mode_answers_as_the_source_in_qdrant_and_back(
    source_home: Path, through_qdrant: dict[str, Any], qdrant: list[str], collection: str
) -> None:
    for team in TEAMS:
        for query in QUERIES:
            want = hits(source_home, collection, query, team)
            assert want, (collection, team, query)
            in_qdrant = hits(through_qdrant["q_home"], collection, query, team, *qdrant)
            assert_same_hits(want, in_qdrant, ("qdrant", collection, team, query))
            back = hits(through_qdrant["back_home"], collection, query, team)
            assert_same_hits(want, back, ("back", collection, team, query))

"""``tansaku export`` / ``tansaku import`` between embedded workspaces: real Japanese
Markdown and CSV ingested through ``tansaku ingest`` for two teams, embeddings from the fake
OpenAI-compatible server over HTTP. The import makes no request to it, and every axis mode
answers ``search --json`` as the source does."""

from __future__ import annotations

import io
import json
import tarfile
from pathlib import Path
from typing import Any

import pytest

from tansaku.testing.fake_embedding_server import FakeEmbeddingServer

from .support import CONFIGS, QUERIES, TEAMS, assert_same_hits, cli, cli_json, hits

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def imported(exported: dict[str, Path], work: Path, server: FakeEmbeddingServer) -> dict[str, Any]:
    home = work / "home-imported"
    before = len(server.requests)
    reports = {
        name: cli_json("import", str(path), "--home", str(home)) for name, path in exported.items()
    }
    return {"home": home, "reports": reports, "requests": len(server.requests) - before}


def test_the_import_sends_nothing_to_the_embedding_server(imported: dict[str, Any]) -> None:
    assert imported["requests"] == 0
    for name, report in imported["reports"].items():
        assert report["collection"] == name and not report["replaced"]
        assert report["embedder"] == {"model": "openai/fake-ja@32", "dim": 32}


def test_counts_per_team_travel_with_the_file(source_home: Path, imported: dict[str, Any]) -> None:
    source = {
        c["name"]: c for c in cli_json("collections", "--home", str(source_home))["collections"]
    }
    target = {
        c["name"]: c
        for c in cli_json("collections", "--home", str(imported["home"]))["collections"]
    }
    assert target == source
    for name, report in imported["reports"].items():
        assert set(report["teams"]) == set(TEAMS)
        assert sum(report["teams"].values()) == source[name]["points"]
        assert (report["units"] > 0) == (name in ("bi", "hybrid"))


@pytest.mark.parametrize("collection", sorted(CONFIGS))
def test_every_axis_mode_answers_as_the_source(
    source_home: Path, imported: dict[str, Any], collection: str
) -> None:
    for team in TEAMS:
        for query in QUERIES:
            a = hits(source_home, collection, query, team)
            b = hits(imported["home"], collection, query, team)
            assert a, (collection, team, query)
            assert_same_hits(a, b, (collection, team, query))


def test_teams_stay_apart(imported: dict[str, Any]) -> None:
    home = imported["home"]
    kansai = hits(home, "hybrid", "関西エリア長に連絡", "kansai")
    assert kansai and all(h["doc_id"].startswith("K") for h in kansai)  # kansai's CSV rows
    assert all("関西エリア長" in h["text"] for h in kansai[:3])
    honbu = hits(home, "kw", "関西エリア長", "honbu")
    assert not any(h["doc_id"].startswith("K") for h in honbu)  # kansai's rows: kansai's
    manuals = hits(home, "kw", "手洗いの手順", "kansai")
    assert manuals and all(h["doc_id"].startswith("K") for h in manuals)  # no honbu manual


def test_an_existing_collection_is_refused_unless_replaced(
    exported: dict[str, Path], imported: dict[str, Any], source_home: Path
) -> None:
    home = imported["home"]
    refused = cli("import", str(exported["kw"]), "--as", "hybrid", "--home", str(home), ok=False)
    assert refused.exit_code == 1
    assert "既にあります" in refused.stderr and "--replace" in refused.stderr
    assert_same_hits(
        hits(source_home, "hybrid", QUERIES[0], "honbu"), hits(home, "hybrid", QUERIES[0], "honbu")
    )
    report = cli_json(
        "import", str(exported["kw"]), "--as", "hybrid", "--replace", "--home", str(home)
    )
    assert report["replaced"] and report["collection"] == "hybrid"
    for team in TEAMS:
        assert_same_hits(
            hits(source_home, "kw", QUERIES[1], team), hits(home, "hybrid", QUERIES[1], team)
        )
    again = cli_json("import", str(exported["hybrid"]), "--replace", "--home", str(home))
    assert again["units"] > 0
    assert_same_hits(
        hits(source_home, "hybrid", QUERIES[2], "kansai"),
        hits(home, "hybrid", QUERIES[2], "kansai"),
    )


def test_an_existing_output_file_is_kept_unless_forced(
    exported: dict[str, Path], source_home: Path
) -> None:
    path = exported["vec"]
    before = path.read_bytes()
    kept = cli("export", "vec", "-o", str(path), "--home", str(source_home), ok=False)
    assert kept.exit_code == 1 and "--force" in kept.stderr
    assert path.read_bytes() == before
    cli("export", "vec", "-o", str(path), "--force", "--home", str(source_home))
    with tarfile.open(path) as tar:
        names = tar.getnames()
    assert names[0] == "config.toml" and names[-1] == "manifest.json"
    assert "state.json" in names and "points/00000.jsonl.gz" in names


def test_an_unknown_collection_is_an_error(source_home: Path, work: Path) -> None:
    res = cli("export", "nothing", "-o", str(work), "--home", str(source_home), ok=False)
    assert res.exit_code == 1 and "nothing" in res.stderr


def _damaged_copy(src: Path, dest: Path, how: str) -> Path:
    data = bytearray(src.read_bytes())
    if how == "truncated":
        data = data[: len(data) // 2]
    else:  # one byte changed inside the first part's compressed data
        with tarfile.open(src) as tar:
            part = next(m for m in tar.getmembers() if m.name.startswith("points/"))
        data[part.offset_data + part.size // 2] ^= 0xFF
    dest.write_bytes(bytes(data))
    return dest


@pytest.mark.parametrize("how", ["truncated", "corrupted"])
def test_a_damaged_file_imports_nothing(
    exported: dict[str, Path], tmp_path: Path, server: FakeEmbeddingServer, how: str
) -> None:
    bad = _damaged_copy(exported["hybrid"], tmp_path / f"{how}.tansaku.tar", how)
    home = tmp_path / "home"
    res = cli("import", str(bad), "--home", str(home), ok=False)
    assert res.exit_code == 1
    assert "壊れているか途中で切れています" in res.stderr or "manifest.json がありません" in (
        res.stderr
    )
    assert "何も取り込んでいません" in res.stderr
    assert cli_json("collections", "--home", str(home))["collections"] == []
    assert not (home / "collections" / "hybrid" / "config.toml").exists()


def _rewritten(src: Path, dest: Path, change: Any) -> Path:
    """A copy of an export whose manifest ``change(manifest_dict)`` edited (checksums of
    the parts left as they are)."""
    with tarfile.open(src) as tar, tarfile.open(dest, "w") as out:
        for member in tar.getmembers():
            data = tar.extractfile(member).read()  # type: ignore[union-attr]
            if member.name == "manifest.json":
                manifest = json.loads(data)
                change(manifest)
                data = json.dumps(manifest, ensure_ascii=False).encode("utf-8")
                member.size = len(data)
            out.addfile(member, io.BytesIO(data))
    return dest


def test_a_newer_format_is_refused(exported: dict[str, Path], tmp_path: Path) -> None:
    newer = _rewritten(
        exported["kw"], tmp_path / "newer.tansaku.tar", lambda m: m.update(format_version=99)
    )
    home = tmp_path / "home"
    res = cli("import", str(newer), "--home", str(home), ok=False)
    assert res.exit_code == 1
    assert "新しい形式(バージョン 99)" in res.stderr and "tansaku を更新" in res.stderr
    assert cli_json("collections", "--home", str(home))["collections"] == []


def test_another_embedding_dimension_is_refused(
    exported: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TANSAKU_EMBED_MODEL", "fake-other")
    monkeypatch.setenv("TANSAKU_EMBED_DIMENSIONS", "16")
    home = tmp_path / "home"
    res = cli("import", str(exported["vec"]), "--home", str(home), ok=False)
    assert res.exit_code == 1
    assert "32次元" in res.stderr and "16次元" in res.stderr
    assert cli_json("collections", "--home", str(home))["collections"] == []
    # a collection without a dense axis carries no vector to compare: imported
    report = cli_json("import", str(exported["kw"]), "--home", str(home))
    assert report["collection"] == "kw"

"""The ``tansaku`` command in fresh processes against the Qdrant backend (qdrant-client's local
mode, ``--qdrant-url qdrant+local://…``) and against an embedded workspace: the same ingest of
real Japanese Markdown and CSV, the same searches in every axis mode (bm25, dense, bigram,
hybrid; with field, metadata and date filters) — the ``--json`` top-10 must be identical on
both backends (docs/storage.md, "Congruence"); ``collections`` and ``delete`` too.
Embeddings come from the fake OpenAI-compatible server over HTTP."""

from __future__ import annotations

import csv
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("qdrant_client")

from tansaku.testing.fake_embedding_server import FakeEmbeddingServer

pytestmark = pytest.mark.e2e

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
DIM = 32
AXES = {
    "bm25": '[[axes]]\nname = "keyword"\nmode = "bm25"\n',
    "dense": '[[axes]]\nname = "semantic"\nmode = "dense"\n',
    "bigram": '[[axes]]\nname = "sentence"\nmode = "bigram"\n',
}
CONFIGS = {
    "kw": AXES["bm25"],
    "vec": AXES["dense"],
    "bi": AXES["bigram"],
    "hybrid": AXES["bm25"] + AXES["dense"] + AXES["bigram"] + '[fusion]\nmethod = "rrf"\n',
}
QUERIES = [
    "冷蔵庫の温度管理",
    "クレームへの対応",
    "子ども向けのワークショップ",
    "シリカ薄膜の焼成温度",
]
FILTERED = [  # (collection, query, options)
    ("hybrid", "週末のイベント", ["--from", "2025-11-01", "--to", "2025-11-30"]),
    ("hybrid", "家族で楽しめる催し", ["--where", "category=kids,festival"]),
    ("kw", "マーケット", ["--field", "body", "--from", "2025-12-01"]),
    ("bi", "ジャズライブ", ["--where", "category=festival,music"]),
    ("vec", "手作り体験", ["--to", "2025-11-15"]),
]


def write_source(root: Path) -> Path:
    """The example manuals and lab notes (Markdown) and the example events as CSV, with the
    start date under 日付 (the loader makes it the record's date)."""
    shutil.copytree(EXAMPLES / "manuals", root / "manuals")
    shutil.copytree(EXAMPLES / "notes", root / "notes")
    with (EXAMPLES / "tables" / "events.csv").open(encoding="utf-8", newline="") as fh:
        rows = list(csv.reader(fh))
    header = ["日付" if c == "start_date" else c for c in rows[0]]
    with (root / "events.csv").open("w", encoding="utf-8", newline="") as fh:
        csv.writer(fh).writerows([header, *rows[1:]])
    return root


@pytest.fixture(scope="module")
def server() -> Iterator[FakeEmbeddingServer]:
    with FakeEmbeddingServer(dim=DIM, max_batch=None) as srv:
        yield srv


@pytest.fixture(scope="module")
def work(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("qdrant-e2e")
    write_source(root / "src")
    for name, axes in CONFIGS.items():
        (root / f"{name}.toml").write_text(axes, encoding="utf-8")
    return root


class Cli:
    """``tansaku`` in a fresh process, on one backend."""

    def __init__(self, home: Path, server: FakeEmbeddingServer, qdrant: str | None) -> None:
        self.home = home
        self.qdrant = qdrant
        self.env = {k: v for k, v in os.environ.items() if not k.startswith("TANSAKU_")}
        self.env.update(
            PYTHONUTF8="1",
            TANSAKU_EMBEDDER="openai",
            TANSAKU_EMBED_BASE_URL=f"{server.url}/v1",
            TANSAKU_EMBED_MODEL="fake-ja",
            TANSAKU_EMBED_DIMENSIONS=str(DIM),
        )

    def run(self, *args: str, ok: bool = True) -> subprocess.CompletedProcess[str]:
        root = ["--qdrant-url", self.qdrant] if self.qdrant else []
        cmd = [sys.executable, "-m", "tansaku.cli.main", *root, *args, "--home", str(self.home)]
        proc = subprocess.run(cmd, capture_output=True, text=True, env=self.env, timeout=600)
        if ok:
            assert proc.returncode == 0, proc.stderr[-3000:]
        return proc

    def json(self, *args: str) -> Any:
        return json.loads(self.run(*args, "--json").stdout)


@pytest.fixture(scope="module")
def clis(work: Path, qdrant_dir: Path, server: FakeEmbeddingServer) -> dict[str, Cli]:
    out = {
        "embedded": Cli(work / "home-embedded", server, None),
        "qdrant": Cli(work / "home-qdrant", server, f"qdrant+local://{qdrant_dir}"),
    }
    for cli in out.values():
        for name in CONFIGS:
            cfg = str(work / f"{name}.toml")
            report = cli.json("ingest", str(work / "src"), "-c", name, "--config", cfg)
            assert report["inserted"] > 80 and not report["failed"]
    return out


def top10(cli: Cli, collection: str, query: str, *options: str) -> list[tuple[str, float]]:
    data = cli.json("search", query, "-c", collection, "-k", "10", "--no-expand", *options)
    return [(h["id"], h["score"]) for h in data["hits"]]


def same(a: list[tuple[str, float]], b: list[tuple[str, float]]) -> bool:
    return [i for i, _ in a] == [i for i, _ in b] and all(
        abs(x - y) <= 1e-4 * max(1.0, abs(x)) for (_, x), (_, y) in zip(a, b, strict=True)
    )


def test_the_qdrant_workspace_holds_no_collections_locally(
    clis: dict[str, Cli], work: Path, qdrant_dir: Path
) -> None:
    assert not any((work / "home-qdrant" / "collections").iterdir())
    assert (work / "home-qdrant" / "cache" / "embeddings.sqlite").is_file()
    assert (qdrant_dir / "collection" / "tansaku_meta").is_dir()


def test_collections_list_the_same_on_both(clis: dict[str, Cli]) -> None:
    lists = {k: c.json("collections")["collections"] for k, c in clis.items()}
    assert [c["name"] for c in lists["qdrant"]] == sorted(CONFIGS)
    assert lists["qdrant"] == lists["embedded"]


@pytest.mark.parametrize("collection", sorted(CONFIGS))
def test_every_axis_mode_gives_the_same_top10(clis: dict[str, Cli], collection: str) -> None:
    for query in QUERIES:
        a = top10(clis["embedded"], collection, query)
        b = top10(clis["qdrant"], collection, query)
        assert a, (collection, query)
        assert same(a, b), (collection, query, a, b)


@pytest.mark.parametrize(("collection", "query", "options"), FILTERED)
def test_filters_and_dates_give_the_same_top10(
    clis: dict[str, Cli], collection: str, query: str, options: list[str]
) -> None:
    a = top10(clis["embedded"], collection, query, *options)
    b = top10(clis["qdrant"], collection, query, *options)
    assert a and same(a, b), (a, b)


def test_delete_a_collection_on_the_server(clis: dict[str, Cli]) -> None:
    cli = clis["qdrant"]
    cli.run("collections", "delete", "vec", "--yes")
    names = [c["name"] for c in cli.json("collections")["collections"]]
    assert names == sorted(set(CONFIGS) - {"vec"})
    gone = cli.run("search", "冷蔵庫", "-c", "vec", ok=False)
    assert gone.returncode == 1 and "vec" in gone.stderr

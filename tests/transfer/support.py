"""Helpers of the transfer tests: the fake OpenAI-compatible embedding server (over HTTP on
127.0.0.1, counting every request), the environment that makes ``tansaku`` use it, real
Japanese sources (the example manuals as Markdown, daily reports as CSV) and a source
workspace with one collection per axis mode, ingested through ``tansaku ingest`` for two
teams."""

from __future__ import annotations

import csv
import json
import shutil
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from tansaku.testing.fake_embedding_server import FakeEmbeddingServer

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
DIM = 32
MODEL = "fake-ja"
STORES = ["新宿店", "渋谷店", "池袋店", "横浜店", "大宮店"]
EVENTS = [
    "冷蔵庫の温度が上がらず、食材の一部を廃棄した",
    "お客様から料理の提供が遅いとのクレームがあった",
    "レジの現金が千円合わなかった",
    "食洗機から水漏れがあり、業者に修理を依頼した",
    "新人スタッフの研修を行い、接客の手順を確認した",
    "雨のため客数が少なく、売上が目標を下回った",
    "異物混入の指摘があり、店長が謝罪して返金した",
    "製氷機が止まり、近くの店舗から氷を借りた",
]
KANSAI = ["梅田店", "難波店", "京都店"]
AXES = {
    "bm25": '[[axes]]\nname = "keyword"\nmode = "bm25"\n',
    "dense": '[[axes]]\nname = "semantic"\nmode = "dense"\n',
    "bigram": '[[axes]]\nname = "sentence"\nmode = "bigram"\n',
}
CONFIGS = {
    "kw": AXES["bm25"],
    "vec": AXES["dense"],
    "bi": AXES["bigram"],
    "hybrid": AXES["bm25"] + AXES["dense"] + AXES["bigram"],
}
TEAMS = ("honbu", "kansai")
QUERIES = ["冷蔵庫の温度管理", "手洗いの手順", "クレームへの対応"]

runner = CliRunner()


def env_for(server: FakeEmbeddingServer, *, model: str = MODEL, dim: int = DIM) -> dict[str, str]:
    """The ``[embedder]`` settings, as environment variables, of a remote model served by
    ``server`` (its dimension given: nothing is sent to learn it)."""
    return {
        "TANSAKU_EMBEDDER": "openai",
        "TANSAKU_EMBED_BASE_URL": f"{server.url}/v1",
        "TANSAKU_EMBED_MODEL": model,
        "TANSAKU_EMBED_DIMENSIONS": str(dim),
    }


def cli(*args: str, ok: bool = True) -> Any:
    """``tansaku ARGS`` in this process; with ``ok`` the exit code must be 0."""
    from tansaku.cli.main import app

    result = runner.invoke(app, list(args))
    if ok:
        assert result.exit_code == 0, (args, result.output, result.exception)
    return result


def cli_json(*args: str) -> Any:
    return json.loads(cli(*args, "--json").stdout)


def write_sources(root: Path) -> dict[str, Path]:
    """Per team: a folder of Markdown manuals and a CSV of daily reports (date, store)."""
    honbu = root / "honbu"
    shutil.copytree(EXAMPLES / "manuals", honbu / "manuals")
    with (honbu / "nippo.csv").open("w", encoding="utf-8", newline="") as fh:
        out = csv.writer(fh)
        out.writerow(["id", "日付", "店舗", "内容"])
        for i in range(40):
            a, b = EVENTS[(i * 3) % len(EVENTS)], EVENTS[(i * 5 + 1) % len(EVENTS)]
            day = f"2026-04-{1 + i % 28:02d}"
            out.writerow([f"N{i:03d}", day, STORES[i % 5], f"{a}。{b}。本部に報告した。"])
    kansai = root / "kansai"
    kansai.mkdir()
    with (kansai / "nippo.csv").open("w", encoding="utf-8", newline="") as fh:
        out = csv.writer(fh)
        out.writerow(["id", "日付", "店舗", "内容"])
        for i in range(25):
            a = EVENTS[(i * 7 + 2) % len(EVENTS)]
            day = f"2026-05-{1 + i % 28:02d}"
            out.writerow([f"K{i:03d}", day, KANSAI[i % 3], f"{a}。関西エリア長に連絡した。"])
    return {"honbu": honbu, "kansai": kansai}


def hits(home: Path, collection: str, query: str, team: str, *root: str) -> list[Any]:
    """The ``search --json`` hits of a query (``root``: options before the command)."""
    data = cli_json(
        *root, "search", query, "-c", collection, "-t", team, "-k", "10", "--no-expand",
        "--home", str(home),
    )  # fmt: skip
    return list(data["hits"])


def _close(x: float, y: float) -> bool:
    return abs(x - y) <= 1e-5 * max(1.0, abs(x))


def assert_same_hits(a: list[Any], b: list[Any], context: object = None) -> None:
    """``b`` answers as ``a``: the same records with the same scores (final and per axis,
    up to float noise), text and metadata, best first. Records of equal score may come in
    another order — the engine orders ties by insertion, which an import cannot reproduce —
    and a run of equal scores cut by the top-k may hold other records of that score. A hit
    whose score is zero up to float noise (a cosine of ~1e-9 one engine computes as -1e-9)
    may be kept by one engine and dropped by another (hits need a score > 0): left out."""
    a = [h for h in a if h["score"] > 1e-5]
    b = [h for h in b if h["score"] > 1e-5]
    assert len(a) == len(b), (context, a, b)
    for x, y in zip(a, b, strict=True):
        assert _close(x["score"], y["score"]), (context, x["id"], y["id"])
    groups: list[list[int]] = []
    for i, h in enumerate(a):
        if groups and _close(a[groups[-1][0]]["score"], h["score"]):
            groups[-1].append(i)
        else:
            groups.append([i])
    for n, group in enumerate(groups):
        ids_a = {a[i]["id"] for i in group}
        ids_b = {b[i]["id"] for i in group}
        if n < len(groups) - 1:
            assert ids_a == ids_b, (context, ids_a, ids_b)
    by_id = {h["id"]: h for h in b}
    for x in a:
        y = by_id.get(x["id"])
        if y is None:
            continue  # a tie cut by the top-k (checked above)
        for key in ("doc_id", "field", "text", "metadata"):
            assert x[key] == y[key], (context, x["id"], key)
        assert set(x["axes"]) == set(y["axes"]), (context, x["id"])
        for axis, score in x["axes"].items():
            assert _close(score["score"], y["axes"][axis]["score"]), (context, x["id"], axis)

"""``tansaku.transfer`` as a library: the line format, the manifest's checks, parts of
bounded size, an empty collection, and a file that passes its checksums but breaks while
it is written (nothing stays half-written)."""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import tarfile
from pathlib import Path

import numpy as np
import pytest

import tansaku
from tansaku.config import Axis, AxisMode, CollectionConfig
from tansaku.embed.hash import HashEmbedder
from tansaku.records import Record
from tansaku.store.base import StoredPoint
from tansaku.store.sparse import SparseVec
from tansaku.transfer import (
    FORMAT_VERSION,
    Manifest,
    TransferError,
    export_collection,
    import_collection,
)
from tansaku.transfer import format as fmt

DIM = 16
CONFIG = CollectionConfig(
    name="nippo",
    axes=(
        Axis(name="kw", mode=AxisMode.BM25),
        Axis(name="vec", mode=AxisMode.DENSE),
        Axis(name="bi", mode=AxisMode.BIGRAM),
    ),
)
TEXTS = [
    "冷蔵庫の温度が上がらず、食材の一部を廃棄した。",
    "お客様から料理の提供が遅いとのクレームがあった。",
    "食洗機から水漏れがあり、業者に修理を依頼した。",
    "新人スタッフの研修を行い、接客の手順を確認した。",
    "異物混入の指摘があり、店長が謝罪して返金した。",
]


def records(team_tag: str, n: int = 23) -> list[Record]:
    return [
        Record(
            id=f"{team_tag}{i:03d}:body",
            doc_id=f"{team_tag}{i:03d}",
            field="body",
            text=f"{TEXTS[i % len(TEXTS)]}{TEXTS[(i * 3 + 1) % len(TEXTS)]}({team_tag}{i})",
            metadata={"date": f"2026-04-{1 + i % 28:02d}", "store": ["新宿店", "梅田店"][i % 2]},
        )
        for i in range(n)
    ]


@pytest.fixture
def source(tmp_path: Path) -> tansaku.Tansaku:
    ts = tansaku.connect(tmp_path / "a", embedder=HashEmbedder(DIM))
    ts.with_services(events=None)
    ts.ingest_records(records("H"), collection="nippo", team="honbu", config=CONFIG)
    ts.ingest_records(records("K", 11), collection="nippo", team="kansai")
    yield ts
    ts.close()


def target(tmp_path: Path, name: str = "b") -> tansaku.Tansaku:
    ts = tansaku.connect(tmp_path / name, embedder=HashEmbedder(DIM))
    ts.with_services(events=None)
    return ts


def answers(ts: tansaku.Tansaku, team: str) -> list[tuple[str, float]]:
    res = ts.search("冷蔵庫の温度とクレーム", collection="nippo", team=team, top_k=8)
    return [(h.record.id, round(h.score, 5)) for h in res.hits]


def test_a_point_line_round_trips_exactly() -> None:
    dense = np.random.default_rng(7).standard_normal(DIM).astype(np.float32)
    point = StoredPoint(
        Record(
            "r1:body", "r1", "body", "冷蔵庫の故障で食材を廃棄しました", {"店舗": "新宿店", "n": 3}
        ),
        SparseVec((5, 17, 2**31 - 1), (0.25, 1.0 / 3.0, 2.5)),
        dense,
        "abc123",
        14,
    )
    team, back = fmt.parse_point(fmt.point_line("honbu", point), DIM)
    assert team == "honbu"
    assert back.record == point.record
    assert (back.content_hash, back.bm25_len) == ("abc123", 14)
    assert back.sparse.indices == point.sparse.indices
    assert back.sparse.values == point.sparse.values
    assert back.dense is not None and back.dense.tobytes() == dense.tobytes()
    line = json.loads(fmt.point_line("honbu", point))
    assert line["text"] == "冷蔵庫の故障で食材を廃棄しました"  # readable, not escaped
    none = StoredPoint(point.record, point.sparse, None, "h", 1)
    assert fmt.parse_point(fmt.point_line("t", none), DIM)[1].dense is None
    with pytest.raises(ValueError):
        fmt.parse_point(fmt.point_line("t", point), DIM * 2)  # another dimension
    with pytest.raises(ValueError):
        fmt.parse_point('{"team": "t"}', DIM)


def test_the_manifest_refuses_other_files_and_newer_formats() -> None:
    m = Manifest("c", "m", 4, {"t": 1}, "2026-11-23T00:00:00+00:00", "0.1.0")
    assert Manifest.from_json(m.to_json()) == m
    newer = json.loads(m.to_json()) | {"format_version": FORMAT_VERSION + 1}
    with pytest.raises(TransferError, match="新しい形式"):
        Manifest.from_json(json.dumps(newer))
    with pytest.raises(TransferError, match="エクスポートファイルではありません"):
        Manifest.from_json(json.dumps({"format": "something-else"}))
    with pytest.raises(TransferError, match="読めません"):
        Manifest.from_json("{not json")
    broken = json.loads(m.to_json())
    del broken["teams"]
    with pytest.raises(TransferError, match="内容が不正"):
        Manifest.from_json(json.dumps(broken))


def test_parts_are_bounded_and_read_back_in_order(
    source: tansaku.Tansaku, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("tansaku.transfer.export.PART_RECORDS", 7)
    report = export_collection(source, "nippo", tmp_path)
    assert report.records == 34 and report.parts == 5  # 7 + 7 + 7 + 7 + 6
    (tmp_path / "plain").touch()  # the file gets the mode any new file gets (not 0600)
    assert report.path.stat().st_mode == (tmp_path / "plain").stat().st_mode
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []  # no leftovers
    assert report.teams == {"honbu": 23, "kansai": 11}
    with tarfile.open(report.path) as tar:
        manifest = json.loads(tar.extractfile("manifest.json").read())  # type: ignore[union-attr]
    parts = [f for f in manifest["files"] if f["name"].startswith("points/")]
    assert [p["records"] for p in parts] == [7, 7, 7, 7, 6]
    assert manifest["embedder"] == {"model": "hash-ngram-16", "dim": 16}
    assert manifest["teams"] == {"honbu": 23, "kansai": 11}
    assert any("埋め込みキャッシュ" in n for n in manifest["notes"])
    seen: list[str] = []
    ts = target(tmp_path)
    got = import_collection(ts, report.path, progress=lambda stage, d, t: seen.append(stage))
    assert got.records == 34 and got.units > 0 and not got.replaced
    assert {"verify", "import"} <= set(seen)
    for team in ("honbu", "kansai"):
        assert answers(ts, team) == answers(source, team)
    col = ts.collection("nippo")
    assert col.state.units == {"honbu", "kansai"}
    assert col.state.bm25["honbu"]["body"].count == 23
    ts.close()


def test_an_empty_collection_travels_too(tmp_path: Path) -> None:
    ts = target(tmp_path, "a")
    ts.create_collection(CONFIG)
    report = export_collection(ts, "nippo", tmp_path / "empty.tansaku.tar")
    assert report.records == 0 and report.parts == 0
    other = target(tmp_path)
    got = import_collection(other, report.path, name="kara")
    assert got.records == 0 and other.has_collection("kara")
    assert other.collection("kara").config.axes == CONFIG.axes
    ts.close()
    other.close()


def _with_bad_line(src: Path, dest: Path) -> Path:
    """A copy whose last part ends in a malformed line, checksums recomputed: it passes the
    checks and fails while the points are written."""
    with tarfile.open(src) as tar:
        members = [(m, tar.extractfile(m).read()) for m in tar.getmembers()]  # type: ignore[union-attr]
    manifest = json.loads(members[-1][1])
    last = [n for n, (m, _) in enumerate(members) if m.name.startswith("points/")][-1]
    lines = gzip.decompress(members[last][1]) + b'{"team": "honbu", "id": "x"}\n'
    data = gzip.compress(lines)
    members[last] = (members[last][0], data)
    for f in manifest["files"]:
        if f["name"] == members[last][0].name:
            f["bytes"], f["sha256"] = len(data), hashlib.sha256(data).hexdigest()
    members[-1] = (members[-1][0], json.dumps(manifest).encode("utf-8"))
    with tarfile.open(dest, "w") as out:
        for m, payload in members:
            m.size = len(payload)
            out.addfile(m, io.BytesIO(payload))
    return dest


def test_a_file_that_breaks_mid_write_leaves_nothing_half_written(
    source: tansaku.Tansaku, tmp_path: Path
) -> None:
    good = export_collection(source, "nippo", tmp_path)
    bad = _with_bad_line(good.path, tmp_path / "bad.tansaku.tar")
    ts = target(tmp_path)
    with pytest.raises(TransferError, match="行目が不正"):
        import_collection(ts, bad)
    assert not ts.has_collection("nippo")  # a new collection: gone
    import_collection(ts, good.path)
    before = answers(ts, "honbu")
    with pytest.raises(TransferError, match="行目が不正"):
        import_collection(ts, bad, replace=True)
    assert answers(ts, "honbu") == before  # a replaced one: as it was
    assert ts.collection("nippo").store.count("kansai") == 11
    ts.close()


def test_a_missing_or_foreign_file_is_refused(tmp_path: Path) -> None:
    ts = target(tmp_path)
    with pytest.raises(TransferError, match="ありません"):
        import_collection(ts, tmp_path / "none.tansaku.tar")
    foreign = tmp_path / "foreign.tar"
    with tarfile.open(foreign, "w") as tar:
        data = "ただのテキスト".encode()
        info = tarfile.TarInfo("memo.txt")
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
    with pytest.raises(TransferError, match=r"manifest\.json がありません"):
        import_collection(ts, foreign)
    not_tar = tmp_path / "plain.tansaku.tar"
    not_tar.write_text("これは tar ではありません", encoding="utf-8")
    with pytest.raises(TransferError, match="壊れているか"):
        import_collection(ts, not_tar)
    assert ts.backend.names() == []
    ts.close()

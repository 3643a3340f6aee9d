"""What one file may cost, set for a whole workspace in ``[ingest]`` of its ``tansaku.toml``:
each limit applies to the library's ingest and to the bulk pipeline the server's uploads use, a
collection's own caps still win for it, and a bad value is refused with a Japanese message
naming the key and its range (the CLI exits non-zero with it)."""

from __future__ import annotations

import io
import json
import os
import zipfile
from pathlib import Path

import pytest
from typer.testing import CliRunner

import tansaku
from tansaku.cli import main as cli
from tansaku.errors import ConfigError
from tansaku.ingest.bulk import bulk_ingest
from tansaku.ingest.limits import limits_from, workspace_limits
from tansaku.ingest.loaders.settings import IngestLimits
from tansaku.testing import HashEmbedder

HEADER = ["店舗", "日付", "担当", "件名", "本文", "対応"]
ROW = ["新宿店", "2025-12-10", "佐藤", "冷蔵庫", "冷蔵庫の温度が上がらない", "業者に連絡"]


def workspace(tmp_path: Path, ingest: str) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    text = f'[embedder]\nprovider = "hash"\ndim = 32\n\n[ingest]\n{ingest}\n'
    (home / "tansaku.toml").write_text(text, encoding="utf-8")
    return home


def table(tmp_path: Path, columns: int) -> Path:
    path = tmp_path / "src" / f"日報{columns}.csv"
    path.parent.mkdir(exist_ok=True)
    lines = [",".join(HEADER[:columns]), ",".join(ROW[:columns])]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def reasons(report) -> list[str]:
    return [f.reason for f in report.failed]


def test_defaults_are_the_built_in_limits(tmp_path: Path) -> None:
    assert workspace_limits(tmp_path) == IngestLimits()  # no tansaku.toml
    (tmp_path / "tansaku.toml").write_text("[qdrant]\n", encoding="utf-8")
    assert workspace_limits(tmp_path) == IngestLimits()  # no [ingest]


def test_every_key_maps_onto_its_limit() -> None:
    limits = limits_from(
        {
            "max_file_mb": 0.5,
            "max_chunks_per_document": 100,
            "max_columns": 20,
            "max_metadata_keys": 10,
            "max_metadata_bytes": 4096,
            "max_inflated_mb": 20,
            "max_inflate_ratio": 50,
        }
    )
    assert limits == IngestLimits(
        max_file_bytes=500_000,
        max_chunks_per_document=100,
        max_columns=20,
        max_metadata_keys=10,
        max_metadata_bytes=4096,
        max_inflated_bytes=20_000_000,
        max_inflate_ratio=50,
    )


def test_columns_per_table_file_from_the_workspace(tmp_path: Path) -> None:
    home = workspace(tmp_path, "max_columns = 5")
    with tansaku.connect(home, embedder=HashEmbedder(32)) as ts:
        report = ts.ingest([table(tmp_path, 6), table(tmp_path, 5)], collection="reports")
        expected = "ファイル「日報6.csv」の列数(6)が上限(5 列)を超えるため読み込みません"
        assert reasons(report) == [expected]
        assert report.inserted > 0  # the five-column table loaded
        # the bulk pipeline (the server's uploads) reads the same limits
        bulk = bulk_ingest(ts, [table(tmp_path, 6)], collection="bulk")
        assert reasons(bulk) == [expected]


def test_metadata_keys_and_bytes_per_record(tmp_path: Path) -> None:
    home = workspace(tmp_path, "max_metadata_keys = 10\nmax_metadata_bytes = 600")
    rows = [
        {"id": "many", "本文": "冷蔵庫の温度", **{f"項目{i}": i for i in range(9)}},
        {"id": "long", "本文": "冷蔵庫の温度", **{f"備考{i}": "あ" * 40 for i in range(4)}},
        {"id": "fine", "本文": "冷蔵庫の温度は毎朝確認する", "店舗": "新宿店"},
    ]
    path = tmp_path / "rows.jsonl"
    path.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in rows), encoding="utf-8")
    with tansaku.connect(home, embedder=HashEmbedder(32)) as ts:
        report = ts.ingest([path], collection="rows")
        too_long, too_many = sorted(reasons(report))
        assert too_many.startswith("ファイル「rows.jsonl」の文書「many」はメタデータの項目数(")
        assert too_many.endswith(")が上限(10)を超えるため読み込みません")
        assert "が上限(600 バイト)を超えるため読み込みません" in too_long
        assert ts.collection("rows").record_ids("default")  # "fine" loaded


def test_inflated_bytes_per_archive(tmp_path: Path) -> None:
    docx = pytest.importorskip("docx")
    home = workspace(tmp_path, "max_inflated_mb = 1")
    document = docx.Document()
    document.add_paragraph("冷蔵庫の温度は毎朝確認します。")
    buf = io.BytesIO()
    document.save(buf)
    out = io.BytesIO()
    with zipfile.ZipFile(buf) as src, zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as dst:
        for item in src.infolist():
            dst.writestr(item, src.read(item))
        dst.writestr("word/media/photo.bin", os.urandom(1_200_000))  # does not compress
    path = tmp_path / "手順.docx"
    path.write_bytes(out.getvalue())
    with tansaku.connect(home, embedder=HashEmbedder(32)) as ts:
        (reason,) = reasons(ts.ingest([path], collection="manuals"))
    assert reason.startswith("ファイル「手順.docx」は展開すると ")
    assert "上限(1,000,000 バイト)を超えるため読み込みません(圧縮爆弾の疑い)" in reason


def test_file_size_and_the_collection_cap_wins(tmp_path: Path) -> None:
    home = workspace(tmp_path, "max_file_mb = 0.001")  # 1,000 bytes
    path = tmp_path / "日報.csv"
    rows = [",".join(HEADER)] + [",".join(ROW)] * 30
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    assert path.stat().st_size > 1000
    with tansaku.connect(home, embedder=HashEmbedder(32)) as ts:
        (reason,) = reasons(ts.ingest([path], collection="small"))
        assert reason.startswith("ファイルが大きすぎます(")
        own = tansaku.CollectionConfig(name="big", ingest={"max_file_mb": 1})
        assert reasons(ts.ingest([path], collection="big", config=own)) == []


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("max_columns = 0", "[ingest] max_columns は 1〜10,000 の整数にしてください(指定: 0)"),
        ("max_columns = 2.5", "[ingest] max_columns は 1〜10,000 の整数にしてください(指定: 2.5)"),
        ("max_file_mb = true", "[ingest] max_file_mb は 0.001〜10,000 の数にしてください"),
        ('max_inflated_mb = "大"', "[ingest] max_inflated_mb は 1〜100,000 の数にしてください"),
        ("max_inflate_ratio = 1", "[ingest] max_inflate_ratio は 2〜100,000 の整数"),
        ("max_metadata_bytes = 10", "[ingest] max_metadata_bytes は 64〜10,000,000 の整数"),
        ("max_rows = 5", "[ingest] に不明なキーがあります: ['max_rows']"),
    ],
)
def test_a_bad_value_names_the_key_and_its_range(tmp_path: Path, line: str, message: str) -> None:
    home = workspace(tmp_path, line)
    with pytest.raises(ConfigError) as refused:
        workspace_limits(home)
    assert message in str(refused.value)
    with tansaku.connect(home, embedder=HashEmbedder(32)) as ts, pytest.raises(ConfigError):
        ts.ingest([table(tmp_path, 2)], collection="reports")


def test_the_cli_exits_non_zero_with_the_message(tmp_path: Path) -> None:
    home = workspace(tmp_path, "max_columns = -1")
    src = table(tmp_path, 2)
    result = CliRunner().invoke(
        cli.app, ["ingest", str(src), "--collection", "reports", "--home", str(home)]
    )
    assert result.exit_code != 0
    assert "[ingest] max_columns は 1〜10,000 の整数にしてください(指定: -1)" in result.output

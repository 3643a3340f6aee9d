"""What one uploaded file may cost beyond its size: a table of 10,000 columns, a document whose
metadata has too many keys or bytes, and a zip bomb dressed as a Word file are each refused with
a Japanese message naming the file and the limit, while the other files and documents load."""

from __future__ import annotations

import io
import json
import zipfile
from pathlib import Path

import pytest
from ingest_support import load, write

from tansaku.ingest.loaders.archive import check_archive
from tansaku.ingest.loaders.base import LoadFailure
from tansaku.ingest.loaders.settings import IngestLimits


def wide_csv(columns: int = 10_000, rows: int = 3) -> bytes:
    """A real CSV of ``rows`` data rows × ``columns`` columns."""
    header = ",".join(f"列{i}" for i in range(columns))
    lines = [header] + [",".join(f"値{r}-{i}" for i in range(columns)) for r in range(rows)]
    return ("\n".join(lines) + "\n").encode("utf-8")


def docx_bytes(extra: dict[str, bytes] | None = None) -> bytes:
    """A real Word file (python-docx) with ``extra`` members added to its zip."""
    docx = pytest.importorskip("docx")
    document = docx.Document()
    document.add_heading("冷蔵庫の手順", level=1)
    document.add_paragraph("冷蔵庫の温度は毎朝確認します。")
    buf = io.BytesIO()
    document.save(buf)
    if not extra:
        return buf.getvalue()
    out = io.BytesIO()
    with zipfile.ZipFile(buf) as src, zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as dst:
        for item in src.infolist():
            dst.writestr(item, src.read(item))
        for name, data in extra.items():
            dst.writestr(name, data)
    return out.getvalue()


def zip_bomb_docx() -> bytes:
    """A Word file with a 64 MB member of zeros stored in ~64 KB (about 1,000:1)."""
    return docx_bytes({"word/media/bomb.bin": bytes(64 * 1024 * 1024)})


def test_a_table_of_10000_columns_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "wide.csv"
    path.write_bytes(wide_csv())
    result = load(path)
    assert result.records == ()
    (error,) = result.errors
    expected = "ファイル「wide.csv」の列数(10,000)が上限(200 列)を超えるため読み込みません"
    assert error.reason == expected


def test_200_columns_still_load(tmp_path: Path) -> None:
    path = tmp_path / "ok.csv"
    path.write_bytes(wide_csv(200, 2))
    result = load(path)
    assert result.errors == () and len({r.doc_id for r in result.records}) == 2


def test_a_document_with_too_much_metadata_is_skipped_the_rest_loads(tmp_path: Path) -> None:
    many_keys = {"id": "keys", "本文": "冷蔵庫の温度", **{f"k{i}": f"v{i}" for i in range(300)}}
    big = {"id": "bytes", "本文": "冷蔵庫の温度", **{f"m{i}": "あ" * 60 for i in range(200)}}
    fine = {"id": "fine", "本文": "冷蔵庫の温度は毎朝確認する", "店舗": "新宿店"}
    path = write(
        tmp_path / "rows.jsonl",
        "\n".join(json.dumps(r, ensure_ascii=False) for r in (many_keys, big, fine)) + "\n",
    )
    result = load(path)
    assert {r.doc_id for r in result.records} == {"fine"}
    too_big, too_many = sorted(e.reason for e in result.errors)
    assert too_big.startswith("ファイル「rows.jsonl」の文書「bytes」はメタデータの大きさ(")
    assert too_big.endswith("バイト)が上限(32,768 バイト)を超えるため読み込みません")
    assert too_many.startswith("ファイル「rows.jsonl」の文書「keys」はメタデータの項目数(")
    assert too_many.endswith(")が上限(256)を超えるため読み込みません")


def test_a_zip_bomb_docx_is_refused_before_it_is_inflated(tmp_path: Path) -> None:
    path = tmp_path / "爆弾.docx"
    path.write_bytes(zip_bomb_docx())
    assert path.stat().st_size < 1_000_000
    result = load(path)
    assert result.records == ()
    (error,) = result.errors
    assert error.reason.startswith("ファイル「爆弾.docx」の部品 word/media/bomb.bin の圧縮率(")
    assert "上限(200 倍)を超えるため読み込みません(圧縮爆弾の疑い)" in error.reason
    good = tmp_path / "手順.docx"
    good.write_bytes(docx_bytes())
    assert load(good).errors == () and load(good).records


def test_the_inflated_total_is_capped_too() -> None:
    data = docx_bytes({f"word/media/part{i}.bin": bytes(900_000) for i in range(3)})
    refused = r"展開すると [\d,]+ バイトになり、上限\(2,000,000 バイト\)"
    with pytest.raises(LoadFailure, match=refused):
        check_archive(data, "手順.docx", IngestLimits(max_inflated_bytes=2_000_000))
    check_archive(data, "手順.docx", IngestLimits())  # within the default limits

"""Zip-based documents all go through one inflated-size check before a loader sees them: a real
crafted zip-bomb Excel workbook is refused by it, a zip bomb under any file name is refused
before its loader runs, and a member that lies about its size cannot inflate past what it
declares while it is read."""

from __future__ import annotations

import io
import struct
import zipfile
from pathlib import Path

import pytest
from ingest_support import load

from tansaku.ingest.loaders import LOADERS
from tansaku.ingest.loaders.archive import ZIP_BASED, check_archive, is_archive
from tansaku.ingest.loaders.base import LoadFailure
from tansaku.ingest.loaders.settings import IngestLimits

SHEET = "xl/worksheets/sheet1.xml"
ROW = '<row r="1"><c r="A1" t="inlineStr"><is><t>冷蔵庫</t></is></c></row>'.encode()
OOXML = "http://schemas.openxmlformats.org"
REL = f"{OOXML}/officeDocument/2006/relationships"
SML = "application/vnd.openxmlformats-officedocument.spreadsheetml"
PARTS = {
    "[Content_Types].xml": (
        '<?xml version="1.0" encoding="UTF-8"?>'
        f'<Types xmlns="{OOXML}/package/2006/content-types">'
        '<Default Extension="rels" '
        'ContentType="application/vnd.openxmlformats-package.relationships+xml"/>'
        '<Default Extension="xml" ContentType="application/xml"/>'
        f'<Override PartName="/xl/workbook.xml" ContentType="{SML}.sheet.main+xml"/>'
        f'<Override PartName="/xl/worksheets/sheet1.xml" ContentType="{SML}.worksheet+xml"/>'
        "</Types>"
    ),
    "_rels/.rels": (
        '<?xml version="1.0" encoding="UTF-8"?>'
        f'<Relationships xmlns="{OOXML}/package/2006/relationships">'
        f'<Relationship Id="rId1" Type="{REL}/officeDocument" Target="xl/workbook.xml"/>'
        "</Relationships>"
    ),
    "xl/workbook.xml": (
        '<?xml version="1.0" encoding="UTF-8"?>'
        f'<workbook xmlns="{OOXML}/spreadsheetml/2006/main" xmlns:r="{REL}">'
        '<sheets><sheet name="在庫" sheetId="1" r:id="rId1"/></sheets></workbook>'
    ),
    "xl/_rels/workbook.xml.rels": (
        '<?xml version="1.0" encoding="UTF-8"?>'
        f'<Relationships xmlns="{OOXML}/package/2006/relationships">'
        f'<Relationship Id="rId1" Type="{REL}/worksheet" Target="worksheets/sheet1.xml"/>'
        "</Relationships>"
    ),
}


def xlsx_bytes(rows: int) -> bytes:
    """A workbook in the real Office Open XML layout whose one sheet has ``rows`` rows of
    「冷蔵庫」 (the same row over and over compresses about 1,000:1)."""
    sheet = (
        b'<?xml version="1.0" encoding="UTF-8"?>'
        b'<worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main">'
        b"<sheetData>" + ROW * rows + b"</sheetData></worksheet>"
    )
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        for name, text in PARTS.items():
            z.writestr(name, text)
        z.writestr(SHEET, sheet)
    return buf.getvalue()


def zip_bomb_xlsx() -> bytes:
    """~100 MB of sheet XML stored in ~100 KB."""
    return xlsx_bytes(100 * 1024 * 1024 // len(ROW))


def test_a_zip_bomb_xlsx_is_refused_by_the_archive_check() -> None:
    data = zip_bomb_xlsx()
    assert len(data) < 1_000_000
    assert is_archive(".xlsx", data)
    with pytest.raises(LoadFailure) as refused:
        check_archive(data, "在庫.xlsx", IngestLimits())
    reason = refused.value.reason
    assert reason.startswith(f"ファイル「在庫.xlsx」の部品 {SHEET} の圧縮率(")
    assert "上限(200 倍)を超えるため読み込みません(圧縮爆弾の疑い)" in reason
    with pytest.raises(LoadFailure, match=r"展開すると [\d,]+ バイトになり、上限\(50,000,000"):
        check_archive(data, "在庫.xlsx", IngestLimits(max_inflated_bytes=50_000_000))
    check_archive(xlsx_bytes(100), "在庫.xlsx", IngestLimits())  # a real small workbook passes


def test_every_zip_based_loader_is_checked() -> None:
    assert ".docx" in ZIP_BASED and ".xlsx" in ZIP_BASED
    for suffix in set(LOADERS) & ZIP_BASED:
        assert is_archive(suffix, b"")  # load_file checks it before the loader


@pytest.mark.parametrize("name", ["在庫.txt", "在庫.md", "在庫.csv", "在庫.json"])
def test_a_zip_bomb_under_any_name_is_refused_before_its_loader(tmp_path: Path, name) -> None:
    path = tmp_path / name
    path.write_bytes(zip_bomb_xlsx())
    result = load(path)
    assert result.records == ()
    (error,) = result.errors
    assert error.reason.startswith(f"ファイル「{name}」の部品 {SHEET} の圧縮率(")


def test_an_xlsx_is_never_inflated_by_a_loader(tmp_path: Path) -> None:
    path = tmp_path / "在庫.xlsx"
    path.write_bytes(zip_bomb_xlsx())
    (error,) = load(path).errors
    assert error.reason.startswith("対応していない形式です(.xlsx)")


def test_a_member_cannot_inflate_past_its_declared_size_while_read() -> None:
    """A member whose headers declare 1,000 bytes but whose data inflates to ~100 MB passes the
    check on declared sizes; reading it stops at 1,000 bytes and fails on its checksum."""
    data = bytearray(zip_bomb_xlsx())
    member = zipfile.ZipFile(io.BytesIO(bytes(data))).getinfo(SHEET)
    struct.pack_into("<I", data, member.header_offset + 22, 1000)  # local header
    central = data.rfind(b"PK\x01\x02", 0, data.rfind(SHEET.encode()))
    struct.pack_into("<I", data, central + 24, 1000)  # central directory
    lying = bytes(data)
    check_archive(lying, "在庫.xlsx", IngestLimits())  # declares 1,000 bytes: passes
    read = 0
    with zipfile.ZipFile(io.BytesIO(lying)) as z, z.open(SHEET) as member_file:
        assert z.getinfo(SHEET).file_size == 1000
        with pytest.raises(zipfile.BadZipFile, match="Bad CRC-32"):
            while chunk := member_file.read(65536):
                read += len(chunk)
    assert read <= 1000

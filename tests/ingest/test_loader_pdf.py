from __future__ import annotations

from pathlib import Path

from ingest_support import assert_json_metadata, blank_pdf, config, load, reasons, text_pdf


def test_pdf_text_per_page(tmp_path: Path) -> None:
    path = tmp_path / "guide.pdf"
    path.write_bytes(text_pdf(["Wash your hands before cooking.", "Keep the fridge below 10C."]))
    result = load(path)
    assert result.errors == ()
    (record,) = result.records
    assert record.id == "guide:body"
    assert "Wash your hands before cooking." in record.text
    assert "Keep the fridge below 10C." in record.text
    assert record.metadata["page"] == 1
    assert record.metadata["pages"] == 2
    assert record.metadata["title"] == "guide"
    assert record.metadata["source_type"] == "document"
    assert_json_metadata(result)


def test_pdf_chunks_carry_the_page_of_their_start(tmp_path: Path) -> None:
    pages = [f"Page {n} says: keep the kitchen clean and dry." for n in range(1, 4)]
    path = tmp_path / "manual.pdf"
    path.write_bytes(text_pdf(pages, title="Kitchen Manual"))
    result = load(path, config(chunk_size=50, chunk_overlap=0))
    assert [r.id for r in result.records] == ["manual:body:0", "manual:body:1", "manual:body:2"]
    assert [r.metadata["page"] for r in result.records] == [1, 2, 3]
    assert result.records[1].text.startswith("Page 2 says")
    assert result.records[0].metadata["title"] == "Kitchen Manual"


def test_pdf_without_text_is_reported(tmp_path: Path) -> None:
    path = tmp_path / "scan.pdf"
    path.write_bytes(blank_pdf())
    result = load(path)
    assert result.records == ()
    (reason,) = reasons(result)
    assert "スキャン画像のPDFは未対応" in reason


def test_corrupt_pdf_is_reported(tmp_path: Path) -> None:
    path = tmp_path / "broken.pdf"
    path.write_bytes(b"%PDF-1.4\n\x00\x01garbage that is not a pdf" * 10)
    result = load(path)
    assert result.records == ()
    (error,) = result.errors
    assert error.path == str(path)
    assert error.reason.startswith("PDFを読み込めません(破損している可能性があります): ")


def test_not_a_pdf_at_all(tmp_path: Path) -> None:
    path = tmp_path / "renamed.pdf"
    path.write_text("これはPDFではありません", encoding="utf-8")
    assert reasons(load(path))[0].startswith("PDFを読み込めません")


def test_empty_pdf_file(tmp_path: Path) -> None:
    path = tmp_path / "empty.pdf"
    path.write_bytes(b"")
    assert reasons(load(path)) == ["ファイルが空です"]

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from ingest_support import assert_json_metadata, config, load, reasons

docx = pytest.importorskip("docx", reason="python-docx is not installed (extra 'docx')")


def _manual(path: Path) -> Path:
    document = docx.Document()
    document.add_heading("衛生管理マニュアル", 0)
    document.add_paragraph("バージョン: 3.1")
    document.add_paragraph("全店舗共通の衛生ルールです。")
    document.add_heading("第1章 手洗い", 1)
    document.add_heading("1.1 手順", 2)
    document.add_paragraph("石けんで三十秒以上洗い、流水で十分にすすぎます。")
    document.add_heading("第2章 食中毒予防", 1)
    document.add_paragraph("中心温度75℃で1分以上加熱します。")
    table = document.add_table(rows=2, cols=2)
    table.cell(0, 0).text = "食品"
    table.cell(0, 1).text = "保存温度"
    table.cell(1, 0).text = "鶏肉"
    table.cell(1, 1).text = "10℃以下"
    document.save(str(path))
    return path


def test_docx_headings_become_chapters(tmp_path: Path) -> None:
    result = load(_manual(tmp_path / "hygiene.docx"), config(chunk_size=40, chunk_overlap=0))
    assert result.errors == ()
    records = result.records
    assert [r.id for r in records] == [f"hygiene:body:{n}" for n in range(len(records))]
    assert records[0].text == "全店舗共通の衛生ルールです。"
    assert records[0].metadata["title"] == "衛生管理マニュアル"
    assert records[0].metadata["version"] == "3.1"
    wash = next(r for r in records if "石けん" in r.text)
    assert wash.metadata["chapter"] == "第1章 手洗い"
    assert wash.metadata["section"] == "1.1 手順"
    table = next(r for r in records if "鶏肉 | 10℃以下" in r.text)
    assert table.metadata["chapter"] == "第2章 食中毒予防"
    assert_json_metadata(result)


def test_docx_fields_follow_markdown_settings(tmp_path: Path) -> None:
    cfg = config({"markdown": {"fields": {"heat": ["食中毒予防"]}}})
    records = {r.id: r for r in load(_manual(tmp_path / "m.docx"), cfg).records}
    assert set(records) == {"m:heat", "m:combined"}
    assert "75℃" in records["m:heat"].text and "石けん" not in records["m:heat"].text


def test_corrupt_docx_is_reported(tmp_path: Path) -> None:
    path = tmp_path / "broken.docx"
    path.write_bytes(b"PK\x03\x04 this is not really a zip archive" * 5)
    result = load(path)
    assert result.records == ()
    assert reasons(result)[0].startswith(
        "Word文書(docx)を読み込めません(破損している可能性があります)"
    )


def test_missing_extra_names_the_pip_command(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = _manual(tmp_path / "hygiene.docx")
    monkeypatch.setitem(sys.modules, "docx", None)  # makes `import docx` fail
    (reason,) = reasons(load(path))
    assert "python-docx" in reason
    assert "pip install 'tansaku[docx]'" in reason

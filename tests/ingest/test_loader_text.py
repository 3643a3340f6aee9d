from __future__ import annotations

from pathlib import Path

from ingest_support import assert_json_metadata, config, load, reasons, write

REPORT = """\
新宿店 営業日報

日付: 2024/05/10
店舗: 新宿店
担当: 田中

本日の売上は前年比110%でした。ランチの唐揚げ定食が好調です。

夕方に冷蔵庫の温度が一時的に上がりました。業者に点検を依頼済みです。
"""


def test_text_file_title_header_and_body(tmp_path: Path) -> None:
    result = load(write(tmp_path / "daily-0510.txt", REPORT))
    assert result.errors == ()
    (record,) = result.records
    assert record.id == "daily-0510:body"
    assert record.field == "body"
    assert record.text.startswith("本日の売上は前年比110%でした。")
    assert "\n\n夕方に冷蔵庫" in record.text
    assert record.metadata == {
        "date": "2024-05-10",
        "store": "新宿店",
        "author": "田中",
        "title": "新宿店 営業日報",
        "source_type": "document",
        "source": str(tmp_path / "daily-0510.txt"),
    }


def test_first_line_that_is_a_sentence_is_not_a_title(tmp_path: Path) -> None:
    (record,) = load(
        write(tmp_path / "memo.txt", "明日は棚卸しです。\n全員参加してください。\n")
    ).records
    assert record.metadata["title"] == "memo"
    assert record.text.startswith("明日は棚卸しです。")


def test_cp932_text_is_decoded(tmp_path: Path) -> None:
    result = load(write(tmp_path / "sjis.txt", REPORT, encoding="cp932"))
    assert result.errors == ()
    assert "唐揚げ定食" in result.records[0].text
    assert result.records[0].metadata["store"] == "新宿店"


def test_utf16_with_bom_is_decoded(tmp_path: Path) -> None:
    result = load(write(tmp_path / "excel.txt", REPORT, encoding="utf-16"))
    assert "唐揚げ定食" in result.records[0].text


def test_undecodable_text_is_reported(tmp_path: Path) -> None:
    path = tmp_path / "broken.txt"
    path.write_bytes(b"\x82\xa0\x82\xa2\xff\xfe\xfd\x80\x81" * 3)
    result = load(path)
    assert result.records == ()
    assert "文字コードを判別できません" in reasons(result)[0]


def test_explicit_encoding(tmp_path: Path) -> None:
    path = write(tmp_path / "sjis.txt", REPORT, encoding="cp932")
    result = load(path, config({"text": {"encoding": "utf-8"}}))
    assert result.records == ()
    assert "文字コード utf-8 として読めません" in reasons(result)[0]


def test_long_text_is_chunked_with_indices(tmp_path: Path) -> None:
    body = "衛生管理の基本を守りましょう。冷蔵庫は毎日点検します。" * 20
    result = load(write(tmp_path / "long.txt", body), config(chunk_size=100, chunk_overlap=20))
    ids = [r.id for r in result.records]
    assert ids == [f"long:body:{n}" for n in range(len(ids))]
    assert [r.metadata["chunk_index"] for r in result.records] == list(range(len(ids)))
    assert all(len(r.text) <= 100 for r in result.records)
    assert_json_metadata(result)


def test_source_type_precedence(tmp_path: Path) -> None:
    path = write(tmp_path / "r.txt", REPORT)
    assert (
        load(path, config(source_type="daily_report")).records[0].metadata["source_type"]
        == "daily_report"
    )
    cfg = config({"text": {"source_type": "memo"}}, source_type="daily_report")
    assert load(path, cfg).records[0].metadata["source_type"] == "memo"

"""An unterminated quote in a CSV is reported at its line; the rows after it load."""

from __future__ import annotations

from pathlib import Path

import pytest
from ingest_support import by_id, config, load, reasons, write

from tansaku.ingest.loaders import LoadResult

HEADER = "store_id,store_name,description\n"
CFG = {"csv": {"id_column": "store_id", "text_fields": {"description": ["description"]}}}

BROKEN = (
    HEADER
    + "S001,新宿店,駅から徒歩3分の旗艦店。\n"
    + 'S002,渋谷店,"若者向けのカフェ併設店。\n'  # line 3: the quote never closes
    + "S003,池袋店,深夜まで営業。\n"
    + 'S004,上野店,"公園口の前、""上野""の名物店。"\n'
    + "S005,品川店,新幹線の待ち時間に。\n"
)


def _ids(result: LoadResult) -> list[str]:
    return [r.doc_id for r in result.records]


def test_csv_unterminated_quote_reported_with_line(tmp_path: Path) -> None:
    path = write(tmp_path / "stores.csv", BROKEN)
    result = load(path, config(CFG))
    assert _ids(result) == ["S001", "S003", "S004", "S005"]
    (error,) = result.errors
    assert error.path == f"{path}:3"
    assert error.reason == (
        '3行目で始まる引用符(")が閉じられていません。この行は読み込まず、次の行から読み直します'
    )
    assert by_id(result)["S004:description"].text == '公園口の前、"上野"の名物店。'


def test_quote_running_to_the_end_of_the_file(tmp_path: Path) -> None:
    text = HEADER + 'S001,新宿店,駅前。\nS002,渋谷店,"閉じない\nS003,池袋店,深夜営業。\n'
    result = load(write(tmp_path / "stores.csv", text), config(CFG))
    assert _ids(result) == ["S001", "S003"]
    assert [e.path.rsplit(":", 1)[1] for e in result.errors] == ["3"]


@pytest.mark.parametrize(("suffix", "sep"), [(".csv", ","), (".tsv", "\t")])
def test_shift_jis_csv_and_tsv(tmp_path: Path, suffix: str, sep: str) -> None:
    text = BROKEN.replace(",", sep)
    path = write(tmp_path / f"stores{suffix}", text, encoding="cp932")
    result = load(path, config(CFG))
    assert _ids(result) == ["S001", "S003", "S004", "S005"]
    assert [(e.path, e.reason[:6]) for e in result.errors] == [(f"{path}:3", "3行目で始ま")]
    assert by_id(result)["S003:description"].text == "深夜まで営業。"


def test_several_broken_rows_and_a_legit_multiline_cell(tmp_path: Path) -> None:
    text = (
        HEADER
        + 'S001,新宿店,"1階は食堂、\n2階は会議室。"\n'  # lines 2-3: an Excel cell with a newline
        + 'S002,渋谷店,"閉じない\n'  # line 4
        + "S003,池袋店,深夜営業。\n"
        + 'S004,"上野店,公園口。\n'  # line 6
        + 'S005,品川店,"駅ナカ。"\n'
    )
    result = load(write(tmp_path / "stores.csv", text), config(CFG))
    assert _ids(result) == ["S001", "S003", "S005"]
    assert by_id(result)["S001:description"].text == "1階は食堂、\n2階は会議室。"
    assert [e.path.rsplit(":", 1)[1] for e in result.errors] == ["4", "6"]


def test_bad_quote_after_a_multiline_cell_is_reported_where_it_starts(tmp_path: Path) -> None:
    text = (
        "store_id,note,description\n"
        + 'S001,"2行の\nメモ","閉じない説明\n'  # the row starts on line 2, the bad quote on 3
        + "S002,メモ,深夜営業。\n"
    )
    cfg = {"csv": {"id_column": "store_id", "text_fields": {"description": ["description"]}}}
    result = load(write(tmp_path / "stores.csv", text), config(cfg))
    assert _ids(result) == ["S002"]
    assert [e.path.rsplit(":", 1)[1] for e in result.errors] == ["3"]


def test_quote_inside_a_cell_is_read_leniently_as_before(tmp_path: Path) -> None:
    text = HEADER + 'S001,新宿店,"駅前"の店\nS002,渋谷店,5"のモニター\n'
    result = load(write(tmp_path / "stores.csv", text), config(CFG))
    assert result.errors == ()
    assert [r.text for r in result.records] == ["駅前の店", '5"のモニター']


def test_unterminated_quote_in_the_header_fails_the_file(tmp_path: Path) -> None:
    text = 'store_id,"store_name,description\nS001,新宿店,駅前。\n'
    assert reasons(load(write(tmp_path / "stores.csv", text))) == [
        '1行目(見出し行)の引用符(")が閉じられていません'
    ]


def test_line_numbers_of_later_rows_stay_right(tmp_path: Path) -> None:
    # without an id column the doc id is the line number: it must not shift after a bad row
    text = '店舗,説明\n新宿店,駅前。\n渋谷店,"閉じない\n\n池袋店,深夜営業。\n'
    result = load(write(tmp_path / "stores.csv", text))
    assert _ids(result) == ["stores#2", "stores#5"]
    assert [e.path.rsplit(":", 1)[1] for e in result.errors] == ["3"]


def test_huge_cell_is_reported_and_the_rest_loads(tmp_path: Path) -> None:
    text = HEADER + "S001,新宿店,駅前。\nS002,渋谷店," + "あ" * 200_000 + "\nS003,池袋店,深夜。\n"
    result = load(write(tmp_path / "stores.csv", text), config(CFG))
    assert _ids(result) == ["S001", "S003"]
    (error,) = result.errors
    assert error.path.endswith(":3")
    assert error.reason == (
        "3行目のCSVを読めません: 1つの項目が131,072文字を超えています。この行は読み込みません"
    )

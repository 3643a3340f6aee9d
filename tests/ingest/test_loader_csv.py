from __future__ import annotations

from pathlib import Path

from ingest_support import assert_json_metadata, by_id, config, load, reasons, write

STORES = """\
store_id,store_name,date,store,author,description,menu
S001,新宿店,2024-05-01,新宿,田中,駅から徒歩3分の旗艦店。,唐揚げ定食・生姜焼き定食
S002,渋谷店,2024/05/02,渋谷,鈴木,若者向けのカフェ併設店。,パンケーキ・ラテ
"""

STORE_CFG = {
    "csv": {
        "id_column": "store_id",
        "title_column": "store_name",
        "text_fields": {
            "description": ["description"],
            "combined": ["store_name", "description", "menu"],
        },
        "metadata_columns": ["date", "store", "author"],
    }
}


def test_configured_csv(tmp_path: Path) -> None:
    path = write(tmp_path / "stores.csv", STORES)
    result = load(path, config(STORE_CFG))
    assert result.errors == ()
    records = by_id(result)
    assert list(records) == [
        "S001:description",
        "S001:combined",
        "S002:description",
        "S002:combined",
    ]
    assert records["S001:description"].text == "駅から徒歩3分の旗艦店。"
    assert records["S001:combined"].text == (
        "store_name: 新宿店\ndescription: 駅から徒歩3分の旗艦店。\nmenu: 唐揚げ定食・生姜焼き定食"
    )
    assert records["S002:combined"].metadata == {
        "date": "2024-05-02",
        "store": "渋谷",
        "author": "鈴木",
        "title": "渋谷店",
        "source_type": "table_row",
        "source": str(path),
    }
    assert_json_metadata(result)


def test_metadata_columns_as_a_table_renames_japanese_headers(tmp_path: Path) -> None:
    text = "報告ID,日付,店舗,内容\nR1,2024年6月1日,新宿店,冷蔵庫の霜取りを実施。\n"
    cfg = {
        "csv": {
            "id_column": "報告ID",
            "text_fields": {"body": ["内容"]},
            "metadata_columns": {"date": "日付", "store": "店舗"},
        }
    }
    (record,) = load(write(tmp_path / "reports.csv", text), config(cfg)).records
    assert record.id == "R1:body"
    assert record.metadata["date"] == "2024-06-01"
    assert record.metadata["store"] == "新宿店"
    assert record.metadata["title"] == "R1"


def test_row_without_id_is_reported_and_others_load(tmp_path: Path) -> None:
    text = STORES + ",池袋店,2024-05-03,池袋,佐藤,深夜営業の店舗。,ラーメン\n"
    path = write(tmp_path / "stores.csv", text)
    result = load(path, config(STORE_CFG))
    assert {r.doc_id for r in result.records} == {"S001", "S002"}
    (error,) = result.errors
    assert error.path == f"{path}:4"
    assert "4行目に ID(列「store_id」)がありません" in error.reason


def test_duplicate_id_is_reported(tmp_path: Path) -> None:
    text = STORES + "S001,新宿店(旧),2024-05-03,新宿,佐藤,重複した行。,なし\n"
    result = load(write(tmp_path / "stores.csv", text), config(STORE_CFG))
    assert "4行目の ID「S001」は2行目と重複しています" in reasons(result)[0]
    assert by_id(result)["S001:description"].text == "駅から徒歩3分の旗艦店。"


def test_cp932_csv(tmp_path: Path) -> None:
    result = load(write(tmp_path / "stores.csv", STORES, encoding="cp932"), config(STORE_CFG))
    assert result.errors == ()
    assert by_id(result)["S001:description"].text == "駅から徒歩3分の旗艦店。"


def test_default_csv_uses_id_like_column_and_labels(tmp_path: Path) -> None:
    text = (
        "event_id,イベント名,日付,説明\nE10,夏祭り,2024-08-03,浴衣で来店するとドリンク1杯無料。\n"
    )
    path = write(tmp_path / "events.csv", text)
    result = load(path)
    (record,) = result.records
    assert record.id == "E10:body"
    assert (
        record.text
        == "イベント名: 夏祭り\n日付: 2024-08-03\n説明: 浴衣で来店するとドリンク1杯無料。"
    )
    assert record.metadata["イベント名"] == "夏祭り"
    assert record.metadata["日付"] == "2024-08-03"
    assert record.metadata["date"] == "2024-08-03"
    assert record.metadata["title"] == "E10"
    assert_json_metadata(result)


def test_default_csv_without_id_uses_line_numbers(tmp_path: Path) -> None:
    text = 'name,comment\n唐揚げ,"外はカリッと、\n中はジューシー"\n\n生姜焼き,タレが好評\n'
    result = load(write(tmp_path / "menu.csv", text))
    assert [r.id for r in result.records] == ["menu#2:body", "menu#5:body"]
    assert result.records[0].metadata["title"] == "唐揚げ"
    assert "comment: 外はカリッと、\n中はジューシー" in result.records[0].text
    # a long value is text only, not metadata
    long = "name,comment\nA," + "とても長い説明" * 20 + "\n"
    (record,) = load(write(tmp_path / "long.csv", long)).records
    assert "comment" not in record.metadata


def test_tsv(tmp_path: Path) -> None:
    text = "id\tquestion\tanswer\nQ1\t営業時間は？\t11時から22時までです。\n"
    (record,) = load(write(tmp_path / "faq.tsv", text)).records
    assert record.id == "Q1:body"
    assert record.text == "question: 営業時間は？\nanswer: 11時から22時までです。"


def test_missing_configured_column_fails_the_file(tmp_path: Path) -> None:
    cfg = {"csv": {"id_column": "store_id", "text_fields": {"body": ["説明文"]}}}
    result = load(write(tmp_path / "stores.csv", STORES), config(cfg))
    assert result.records == ()
    assert "列 ['説明文'] がありません" in reasons(result)[0]


def test_header_only_and_extra_cells(tmp_path: Path) -> None:
    assert reasons(load(write(tmp_path / "h.csv", "id,text\n"))) == [
        "見出し行だけでデータ行がありません"
    ]
    result = load(write(tmp_path / "x.csv", "id,text\nA,良い行\nB,多すぎる,列\n"))
    assert [r.id for r in result.records] == ["A:body"]
    assert "3行目の列数(3)が見出し行(2)より多いです" in reasons(result)[0]


def test_row_with_no_text(tmp_path: Path) -> None:
    cfg = {"csv": {"id_column": "id", "text_fields": {"body": ["text"]}}}
    result = load(write(tmp_path / "t.csv", "id,text\nA,内容あり\nB,\n"), config(cfg))
    assert [r.id for r in result.records] == ["A:body"]
    assert reasons(result) == ["3行目に検索できるテキストがありません"]


FAQ = """\
質問,回答,カテゴリ
転入届はどこに出せばよいですか。,市役所本庁舎1階の市民課窓口か、各支所で受け付けています。,届出
粗大ごみの出し方を教えてください。,前日までに粗大ごみ受付センターへ電話かウェブで申し込みます。,ごみ
"""


def test_a_qa_sheet_titles_each_row_with_its_question(tmp_path: Path) -> None:
    result = load(write(tmp_path / "faq.csv", FAQ))
    assert result.errors == ()
    first = result.records[0]
    assert first.metadata["title"] == "転入届はどこに出せばよいですか。"
    # question and answer stay one text to search (measured best: docs/benchmarks.md)
    assert first.text.startswith("質問: 転入届はどこに出せばよいですか。\n回答: 市役所本庁舎")


def test_a_title_column_wins_over_the_question(tmp_path: Path) -> None:
    sheet = "件名,質問,回答\n転入,転入届はどこに出しますか。,市民課です。\n"
    (record,) = load(write(tmp_path / "faq.csv", sheet)).records
    assert record.metadata["title"] == "転入"

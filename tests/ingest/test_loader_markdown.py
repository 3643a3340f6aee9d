from __future__ import annotations

from pathlib import Path

import pytest
from ingest_support import assert_json_metadata, by_id, config, load, load_all, reasons, write

from tansaku.ingest.loaders.sections import heading_key

LAB_NOTE = """\
# 低温熟成による鶏むね肉の食感改善

日付: 2024-05-01
担当: 佐藤
店舗: 新宿店

## 1. 目的
鶏むね肉を低温で熟成させ、加熱後の食感の変化を確かめる。

## 2. 材料
- 鶏むね肉 2kg(国産)
- 塩 20g、砂糖 10g

## 3. 方法
### 3.1 下処理
肉を筋切りし、塩と砂糖をすり込む。
### 3.2 熟成
2℃で72時間、真空パックで熟成させる。

## 4. 結果
対照群よりしっとりした食感になった。

## 5. 考察
熟成中の酵素反応が影響したと考えられる。
"""

NOTE_FIELDS = {
    "markdown": {
        "fields": {
            "materials_methods": ["材料", "方法"],
            "purpose": ["目的"],
            "results": ["結果", "考察"],
        }
    }
}

MANUAL = """\
# 衛生管理マニュアル
バージョン: 2.0
カテゴリ: hygiene

このマニュアルは全店舗で共通です。

## 第1章 手洗い
### 1.1 手洗いのタイミング
調理の前、トイレの後、生肉を触った後には必ず手を洗います。
### 1.2 手洗いの手順
石けんで三十秒以上洗い、流水で十分にすすぎます。使い捨てのペーパータオルで拭きます。

## 第2章 食中毒予防
食中毒を防ぐ三原則は「つけない・増やさない・やっつける」です。
### 2.1 加熱
中心温度75℃で1分以上加熱します。
### 2.2 保存
冷蔵は10℃以下、冷凍はマイナス15℃以下で保存します。
"""


def test_lab_note_fields_and_combined(tmp_path: Path) -> None:
    path = write(tmp_path / "note-01.md", LAB_NOTE)
    result = load(path, config(NOTE_FIELDS, source_type="lab_note"))
    assert result.errors == ()
    records = by_id(result)
    assert list(records) == [
        "note-01:materials_methods",
        "note-01:purpose",
        "note-01:results",
        "note-01:combined",
    ]
    mm = records["note-01:materials_methods"]
    assert mm.doc_id == "note-01"
    assert mm.field == "materials_methods"
    assert mm.text.startswith("2. 材料\n- 鶏むね肉 2kg(国産)")
    assert "3. 方法\n3.1 下処理\n肉を筋切りし" in mm.text
    assert "2℃で72時間" in mm.text
    assert "目的" not in mm.text and "しっとり" not in mm.text
    assert "しっとり" in records["note-01:results"].text
    assert "酵素反応" in records["note-01:results"].text
    combined = records["note-01:combined"].text
    assert combined.startswith("低温熟成による鶏むね肉の食感改善\n")
    assert "鶏むね肉を低温で熟成" in combined and "酵素反応" in combined
    assert "日付" not in combined  # header lines are metadata, not text
    meta = mm.metadata
    assert meta["title"] == "低温熟成による鶏むね肉の食感改善"
    assert meta["date"] == "2024-05-01"
    assert meta["author"] == "佐藤"
    assert meta["store"] == "新宿店"
    assert meta["source_type"] == "lab_note"
    assert meta["source"] == str(path)
    assert meta["section"] == "2. 材料"
    assert_json_metadata(result)


def test_long_mapped_field_is_chunked(tmp_path: Path) -> None:
    path = write(tmp_path / "note-01.md", LAB_NOTE)
    result = load(path, config(NOTE_FIELDS, chunk_size=40, chunk_overlap=10))
    ids = [r.id for r in result.records if r.field == "materials_methods"]
    assert ids == [f"note-01:materials_methods:{n}" for n in range(len(ids))]
    assert len(ids) > 1
    chunks = [r for r in result.records if r.field == "materials_methods"]
    assert [r.metadata["chunk_index"] for r in chunks] == list(range(len(ids)))
    assert chunks[-1].metadata["section"] == "3. 方法"
    assert all(len(r.text) <= 40 for r in result.records)


def test_heading_numbering_variants_match(tmp_path: Path) -> None:
    text = (
        "# 実験ノート\n\n## （1）材料と試薬\n小麦粉 500g\n\n## 第2章 方法\nこねて寝かせる。\n\n"
        "## ３．結果と考察\nよく膨らんだ。\n\n## **備考**\n特になし。\n"
    )
    path = write(tmp_path / "bread.md", text)
    records = by_id(load(path, config(NOTE_FIELDS)))
    assert "小麦粉 500g" in records["bread:materials_methods"].text
    assert "こねて寝かせる。" in records["bread:materials_methods"].text
    assert "よく膨らんだ。" in records["bread:results"].text
    assert "bread:purpose" not in records
    assert "特になし。" in records["bread:combined"].text  # unmapped sections stay in combined


def test_a_section_may_feed_several_fields(tmp_path: Path) -> None:
    cfg = config(
        {
            "markdown": {
                "fields": {"materials": ["材料"], "materials_methods": ["材料", "方法"]},
                "whole_field": "",
            }
        }
    )
    records = by_id(load(write(tmp_path / "n.md", LAB_NOTE), cfg))
    assert set(records) == {"n:materials", "n:materials_methods"}
    assert "鶏むね肉 2kg" in records["n:materials"].text
    assert "真空パック" not in records["n:materials"].text


def test_manual_chapters_become_metadata(tmp_path: Path) -> None:
    path = write(tmp_path / "manuals" / "hygiene.md", MANUAL)
    (result,) = load_all([tmp_path / "manuals"], config(chunk_size=60, chunk_overlap=15))
    assert result.errors == ()
    records = result.records
    assert [r.id for r in records] == [f"hygiene:body:{n}" for n in range(len(records))]
    assert all(r.field == "body" for r in records)
    first = records[0]
    assert first.text == "このマニュアルは全店舗で共通です。"
    assert "chapter" not in first.metadata
    assert first.metadata["version"] == "2.0"
    assert first.metadata["category"] == "hygiene"
    assert first.metadata["title"] == "衛生管理マニュアル"
    assert first.metadata["source_type"] == "document"
    assert first.metadata["source"] == str(path)
    heat = next(r for r in records if "中心温度75℃" in r.text)
    assert heat.metadata["chapter"] == "第2章 食中毒予防"
    assert heat.metadata["section"] == "2.1 加熱"
    wash = next(r for r in records if "石けんで三十秒" in r.text)
    assert wash.metadata["chapter"] == "第1章 手洗い"
    assert wash.metadata["section"] == "1.2 手洗いの手順"
    intro = next(r for r in records if "三原則" in r.text)
    assert intro.metadata["chapter"] == "第2章 食中毒予防"
    # a chunk never spans two chapters
    for r in records:
        assert not ("手洗い" in r.text and "食中毒" in r.text)
    assert_json_metadata(result)


def test_short_document_has_one_record_without_number(tmp_path: Path) -> None:
    path = write(tmp_path / "memo.md", "# 連絡\n\n明日は棚卸しです。\n")
    (record,) = load(path).records
    assert record.id == "memo:body"
    assert record.text == "明日は棚卸しです。"
    assert "chunk_index" not in record.metadata


def test_whole_field_without_mapping_and_disabled(tmp_path: Path) -> None:
    path = write(tmp_path / "hygiene.md", MANUAL)
    ids = [r.id for r in load(path, config({"markdown": {"whole_field": "all"}})).records]
    assert "hygiene:body:0" in ids and ids[-1].startswith("hygiene:all")
    cfg = config({"markdown": {"fields": {"purpose": ["目的"]}, "whole_field": ""}})
    ids = [r.id for r in load(write(tmp_path / "n.md", LAB_NOTE), cfg).records]
    assert ids == ["n:purpose"]


def test_title_falls_back_to_stem_and_front_matter(tmp_path: Path) -> None:
    path = write(tmp_path / "店舗メモ.md", "## 連絡事項\n冷蔵庫の温度を記録すること。\n")
    (record,) = load(path).records
    assert record.metadata["title"] == "店舗メモ"
    assert record.metadata["chapter"] == "連絡事項"
    fm = (
        "---\ntitle: 開店準備\ndate: 2024-06-03\n担当: 鈴木\ntags: [朝, 準備]\n---\n\n"
        "照明をつける。\n"
    )
    (record,) = load(write(tmp_path / "open.md", fm)).records
    assert record.metadata["title"] == "開店準備"
    assert record.metadata["date"] == "2024-06-03"
    assert record.metadata["author"] == "鈴木"
    assert record.metadata["tags"] == ["朝", "準備"]
    assert record.text == "照明をつける。"


def test_code_fences_links_and_emphasis(tmp_path: Path) -> None:
    text = (
        "# 手順書\n\n## 準備\n**必ず**[手洗い](https://example.com/wash)をする。\n\n"
        "```bash\n# これは見出しではない\nmake clean\n```\n"
    )
    (record,) = load(write(tmp_path / "howto.md", text)).records
    assert "必ず手洗いをする。" in record.text
    assert "# これは見出しではない" in record.text
    assert "```" not in record.text and "https://" not in record.text


def test_japanese_date_and_bad_date(tmp_path: Path) -> None:
    good = write(tmp_path / "a.md", "# 日報\n日付: 2024年5月1日\n\n売上は好調。\n")
    assert load(good).records[0].metadata["date"] == "2024-05-01"
    bad = write(tmp_path / "b.md", "# 日報\n日付: 先週の金曜\n\n売上は好調。\n")
    result = load(bad)
    assert [r.id for r in result.records] == ["b:body"]
    assert "date" not in result.records[0].metadata
    assert "日付「先週の金曜」を読めません" in reasons(result)[0]


def test_ids_are_stable_across_loads(tmp_path: Path) -> None:
    write(tmp_path / "notes" / "2024" / "note-01.md", LAB_NOTE)
    write(tmp_path / "notes" / "hygiene.md", MANUAL)
    cfg = config(NOTE_FIELDS, chunk_size=50, chunk_overlap=10)
    first = [
        (r.id, r.content_hash()) for res in load_all([tmp_path / "notes"], cfg) for r in res.records
    ]
    second = [
        (r.id, r.content_hash()) for res in load_all([tmp_path / "notes"], cfg) for r in res.records
    ]
    assert first == second
    assert first[0][0].startswith("2024/note-01:")


@pytest.mark.parametrize(
    "heading,key",
    [
        ("2. 材料", "材料"),
        ("（1）材料と試薬", "材料と試薬"),
        ("第2章 方法", "方法"),
        ("３．結果と考察", "結果と考察"),
        ("1.2 結果", "結果"),
        ("① 目的", "目的"),
        ("**備考**", "備考"),
        ("2024年度 結果", "2024年度 結果"),
        ("Materials:", "materials"),
    ],
)
def test_heading_key_strips_numbering(heading: str, key: str) -> None:
    assert heading_key(heading) == key


def test_custom_header_keys(tmp_path: Path) -> None:
    text = "# 実験ノート\n- 実験番号: EXP-0042\n- **担当**: 山本\n\n## 目的\n泡立ちを比べる。\n"
    cfg = config({"markdown": {"header_keys": {"実験番号": "experiment_id"}}})
    (record,) = load(write(tmp_path / "exp.md", text), cfg).records
    assert record.metadata["experiment_id"] == "EXP-0042"
    assert record.metadata["author"] == "山本"
    assert record.text == "目的\n泡立ちを比べる。"

from __future__ import annotations

import json
from pathlib import Path

from ingest_support import assert_json_metadata, by_id, config, load, reasons, write

CARDS = [
    {
        "id": 10001110,
        "name": "ゴブリン",
        "class": "ニュートラル",
        "type": "フォロワー",
        "cost": 1,
        "rarity": "ブロンズ",
        "effects": ["ファンファーレ カードを1枚引く。", "ラストワード 相手のリーダーに1ダメージ。"],
        "qa": [
            {
                "question": "ファンファーレは手札から出したときだけ発動しますか？",
                "answer": "はい、手札からプレイしたときだけ発動します。",
            },
            {
                "question": "ラストワードは消滅でも発動しますか？",
                "answer": "いいえ、破壊されたときだけ発動します。",
            },
        ],
        "flavorText": "小さな体に大きな野望を秘めている。",
    },
    {
        "id": "10002220",
        "name": "エンジェル",
        "class": "ビショップ",
        "type": "フォロワー",
        "cost": 2,
        "rarity": "シルバー",
        "effects": ["守護"],
        "qa": [],
        "flavorText": "",
    },
]

CARD_CFG = {
    "json": {
        "fields": {
            "effect_{n}": "effects[]",
            "qa_question": "qa[].question",
            "qa_answer": "qa[].answer",
            "flavorText": "flavorText",
        },
        "combined": ["effects[]", "qa[].question", "qa[].answer", "flavorText"],
        "metadata_keys": ["class", "type", "cost", "rarity"],
    }
}


def _jsonl(path: Path, rows: list[object]) -> Path:
    return write(path, "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows))


def test_cards_exact_ids(tmp_path: Path) -> None:
    path = _jsonl(tmp_path / "cards.jsonl", CARDS)
    result = load(path, config(CARD_CFG, source_type="card"))
    assert result.errors == ()
    records = by_id(result)
    assert list(records) == [
        "10001110:effect_1",
        "10001110:effect_2",
        "10001110:qa_question:1",
        "10001110:qa_question:2",
        "10001110:qa_answer:1",
        "10001110:qa_answer:2",
        "10001110:flavorText",
        "10001110:combined",
        "10002220:effect_1",
        "10002220:combined",
    ]
    assert records["10001110:effect_2"].text == "ラストワード 相手のリーダーに1ダメージ。"
    assert records["10001110:effect_2"].field == "effect_2"
    assert records["10001110:qa_answer:2"].text == "いいえ、破壊されたときだけ発動します。"
    assert records["10001110:qa_answer:2"].field == "qa_answer"
    assert records["10001110:combined"].text.split("\n") == [
        "ファンファーレ カードを1枚引く。",
        "ラストワード 相手のリーダーに1ダメージ。",
        "ファンファーレは手札から出したときだけ発動しますか？",
        "ラストワードは消滅でも発動しますか？",
        "はい、手札からプレイしたときだけ発動します。",
        "いいえ、破壊されたときだけ発動します。",
        "小さな体に大きな野望を秘めている。",
    ]
    meta = records["10001110:effect_1"].metadata
    assert meta == {
        "class": "ニュートラル",
        "type": "フォロワー",
        "cost": 1,
        "rarity": "ブロンズ",
        "title": "ゴブリン",
        "source_type": "card",
        "source": str(path),
    }
    assert records["10002220:combined"].text == "守護"
    assert_json_metadata(result)


def test_combined_true_joins_mapped_text(tmp_path: Path) -> None:
    cfg = {
        "json": {
            "fields": {"flavorText": "flavorText", "effect_{n}": "effects[]"},
            "combined": True,
        }
    }
    records = by_id(load(_jsonl(tmp_path / "cards.jsonl", CARDS[:1]), config(cfg)))
    assert records["10001110:combined"].text == (
        "小さな体に大きな野望を秘めている。\nファンファーレ カードを1枚引く。\n"
        "ラストワード 相手のリーダーに1ダメージ。"
    )


def test_list_items_stay_aligned_when_a_key_is_missing(tmp_path: Path) -> None:
    card = {"id": "C1", "qa": [{"answer": "回答だけ"}, {"question": "質問2", "answer": "回答2"}]}
    records = by_id(load(_jsonl(tmp_path / "c.jsonl", [card]), config(CARD_CFG)))
    assert "C1:qa_question:1" not in records
    assert records["C1:qa_question:2"].text == "質問2"
    assert records["C1:qa_answer:2"].text == "回答2"


def test_malformed_line_among_good_lines(tmp_path: Path) -> None:
    lines = [
        json.dumps(CARDS[0], ensure_ascii=False),
        '{"id": 1, "name": ',
        "",
        json.dumps(CARDS[1], ensure_ascii=False),
        "[1, 2, 3]",
    ]
    path = write(tmp_path / "cards.jsonl", "\n".join(lines) + "\n")
    result = load(path, config(CARD_CFG))
    assert {r.doc_id for r in result.records} == {"10001110", "10002220"}
    bad, not_object = result.errors
    assert bad.path == f"{path}:2"
    assert bad.reason.startswith("2行目のJSONが不正です: ")
    assert not_object.path == f"{path}:5"
    assert not_object.reason == "5行目が JSON オブジェクトではありません"


def test_configured_id_key_is_required(tmp_path: Path) -> None:
    cfg = {"json": {"id_key": "card_id", "fields": {"text": "text"}}}
    rows = [{"card_id": "A", "text": "カードA"}, {"text": "IDなし"}]
    result = load(_jsonl(tmp_path / "c.jsonl", rows), config(cfg))
    assert [r.id for r in result.records] == ["A:text"]
    assert reasons(result) == ["2行目に ID(キー「card_id」)がありません。読み込みません"]


def test_default_jsonl_joins_string_values(tmp_path: Path) -> None:
    rows = [
        {
            "id": "M1",
            "name": "唐揚げ定食",
            "price": 890,
            "説明": "国産鶏を使用。",
            "tags": ["人気", "定番"],
        },
        {"title": "IDのない行", "body": "本文です。"},
    ]
    path = _jsonl(tmp_path / "menu.jsonl", rows)
    result = load(path)
    first, second = result.records
    assert first.id == "M1:body"
    assert first.text == "唐揚げ定食\n国産鶏を使用。\n人気\n定番"
    assert first.metadata["price"] == 890
    assert first.metadata["title"] == "唐揚げ定食"
    assert first.metadata["source_type"] == "record"
    assert second.id == "menu#2:body"
    assert second.metadata["title"] == "IDのない行"
    assert_json_metadata(result)


def test_json_list_single_object_and_records_key(tmp_path: Path) -> None:
    path = write(tmp_path / "cards.json", json.dumps(CARDS, ensure_ascii=False))
    assert "10002220:effect_1" in by_id(load(path, config(CARD_CFG)))
    single = write(
        tmp_path / "shop.json",
        json.dumps({"name": "新宿店", "説明": "駅前です。"}, ensure_ascii=False),
    )
    (record,) = load(single).records
    assert record.id == "shop:body"
    wrapped = write(tmp_path / "export.json", json.dumps({"cards": CARDS}, ensure_ascii=False))
    cfg = {"json": {**CARD_CFG["json"], "records_key": "cards"}}
    assert "10001110:qa_question:2" in by_id(load(wrapped, config(cfg)))


def test_json_lines_named_json(tmp_path: Path) -> None:
    path = _jsonl(tmp_path / "cards.json", CARDS)
    assert "10001110:effect_1" in by_id(load(path, config(CARD_CFG)))


def test_invalid_json_file(tmp_path: Path) -> None:
    path = write(tmp_path / "broken.json", '[{"id": "A", "text": "途中で"\n')
    (reason,) = reasons(load(path))
    assert reason.startswith("JSONが不正です(")
    assert reasons(load(write(tmp_path / "n.json", "42"))) == [
        "JSON の最上位はオブジェクトかオブジェクトのリストにしてください"
    ]
    assert reasons(load(write(tmp_path / "e.json", "[]"))) == [
        "レコードがありません(空のリストです)"
    ]


def test_json_must_be_utf8(tmp_path: Path) -> None:
    path = write(tmp_path / "sjis.jsonl", '{"id": "A", "text": "日本語"}\n', encoding="cp932")
    assert "UTF-8 として読めません" in reasons(load(path))[0]


def test_metadata_dates_and_lists(tmp_path: Path) -> None:
    cfg = {
        "json": {
            "fields": {"body": "text"},
            "metadata_keys": {"date": "meta.date", "tags": "tags[]", "store": "store"},
        }
    }
    row = {"id": "R1", "text": "本文", "meta": {"date": "2024/7/7"}, "tags": ["七夕", 7]}
    (record,) = load(_jsonl(tmp_path / "r.jsonl", [row]), config(cfg)).records
    assert record.metadata["date"] == "2024-07-07"
    assert record.metadata["tags"] == ["七夕", "7"]
    assert "store" not in record.metadata

from __future__ import annotations

import pytest

from tansaku.errors import ConfigError
from tansaku.text import get_analyzer
from tansaku.text.synonyms import builtin_domains, load_synonyms, synonyms_from_groups

A = get_analyzer("A")


def test_builtin_domains_ship():
    assert {"restaurant", "cards", "lab"} <= set(builtin_domains())


def test_keyword_side_or_expands_every_matched_group():
    syn = load_synonyms(["cards"])
    exp = syn.expand("フィールドのカードを手札に戻すカード", A)
    assert exp.to_plan() == {
        "手札に戻す": ["手札に返す", "バウンス"],
        "フィールド": ["盤面", "ボード", "場"],
    }
    assert {"返す", "バウンス", "盤面", "ボード", "場"} <= set(exp.keyword_terms)
    assert "フィールド" not in exp.keyword_terms  # already in the query


def test_dense_side_appends_one_representative_per_group():
    syn = load_synonyms(["cards"])
    exp = syn.expand("バウンスするカード", A)
    assert exp.dense_query == "バウンスするカード 手札に戻す"
    same = syn.expand("手札に戻すカード", A)
    assert same.dense_query == "手札に戻すカード"  # the representative is already there


def test_matches_whole_terms_not_substrings():
    syn = load_synonyms(["cards"])
    assert syn.expand("この場合の対応", A).matches == ()
    assert syn.expand("場のフォロワー", A).to_plan()["場"] == ["フィールド", "盤面", "ボード"]


def test_unknown_words_are_kept_and_no_groups_is_identity():
    exp = load_synonyms(["restaurant"]).expand("棚卸しの予定", A)
    assert exp.matches == () and exp.dense_query == "棚卸しの予定"
    assert load_synonyms(None).expand("問題", A).keyword_terms == ()


def test_yaml_file_and_mapping(tmp_path):
    p = tmp_path / "syn.yaml"
    p.write_text("- [ＰＯＳ, レジ]\n- [シフト, 勤務表]\n", encoding="utf-8")
    syn = load_synonyms([str(p)])
    assert syn.groups == (("pos", "レジ"), ("シフト", "勤務表"))  # normalised
    assert syn.expand("レジの不具合", A).to_plan() == {"レジ": ["pos"]}
    m = tmp_path / "map.yaml"
    m.write_text("shop:\n  - [冷蔵庫, 冷蔵設備]\n", encoding="utf-8")
    assert load_synonyms(["map.yaml"], base_dir=tmp_path).groups == (("冷蔵庫", "冷蔵設備"),)


@pytest.mark.parametrize(
    ("content", "message"),
    [("- [ひとつ]\n", "2語以上"), ("groups: 1\n", "リスト"), ("[[a, b]\n", "YAML")],
)
def test_bad_files_name_the_problem(tmp_path, content, message):
    p = tmp_path / "bad.yaml"
    p.write_text(content, encoding="utf-8")
    with pytest.raises(ConfigError, match=message):
        load_synonyms([str(p)])


def test_unknown_spec():
    with pytest.raises(ConfigError, match="見つかりません"):
        load_synonyms(["nope"])


def test_groups_from_python():
    syn = synonyms_from_groups([["売上", "売上高"]])
    assert syn.expand("先月の売上高", A).to_plan() == {"売上高": ["売上"]}

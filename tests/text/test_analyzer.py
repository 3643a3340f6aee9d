"""Analyzer: pinned Sudachi segmentation (sudachidict-core), codes kept whole, stop filter."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

import pytest

from tansaku.errors import ConfigError
from tansaku.text import Analyzer, SplitMode, get_analyzer


@pytest.fixture(scope="module")
def analyzer() -> Analyzer:
    return get_analyzer()


def test_splits_what_a_whitespace_tokenizer_keeps_whole(analyzer: Analyzer) -> None:
    text = "東京都に住んでいます"
    assert re.findall(r"(?u)\b\w\w+\b", text) == [text]  # bm25s' default splitter
    assert analyzer.terms(text) == ["東京", "都", "住む", "居る"]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("ｻｰﾊﾞｰ", ["サーバー"]),
        ("ＩＴ", ["it"]),
        ("行い", ["行う"]),
        ("STR-0001", ["str-0001"]),
        ("型番ABC-123の在庫", ["型番", "abc-123", "在庫"]),
        ("相手のフォロワー1体に3ダメージ", ["相手", "フォロワー", "1", "体", "3", "ダメージ"]),
        (
            "お客様から料理の温度が低いとのクレームがありました",
            ["御", "客", "様", "料理", "温度", "低い", "クレーム", "有る"],
        ),
        ("ｻｰﾊﾞｰのﾒﾝﾃﾅﾝｽ作業を行いました", ["サーバー", "メンテナンス", "作業", "行う"]),
        ("スープの塩分が濃すぎると言われた", ["スープ", "塩分", "濃い", "過ぎる", "言う"]),
        # Negation is an auxiliary verb (助動詞): 合わない and 合う give the same terms.
        ("レジの釣り銭が合わない", ["レジ", "釣り銭", "合う"]),
        (
            "ファンファーレ：自分のフォロワー全てを+1/+1する",
            ["ファンファーレ", "自分", "フォロワー", "全て", "1", "1", "為る"],
        ),
        # Sudachi normalises numbers: 1,000 → 1000, 二千 → 2000, 15万 → 150000.
        ("1,000円と二千円", ["1000", "円", "2000", "円"]),
        ("昨日の売上は15万円でした", ["昨日", "売り上げ", "150000", "円"]),
        # Mode A splits compounds: a query for part of a name still matches.
        ("東京スカイツリー", ["東京", "スカイツリー"]),
        ("国立国会図書館", ["国立", "国会", "図書", "館"]),
        # 記号.文字 (single letters such as x, α) is kept; 補助記号 (：, +, /) is dropped.
        ("x線とα版", ["x", "線", "α", "版"]),
        ("machine learning", ["machine learning"]),  # one dictionary entry, space included
    ],
)
def test_pinned_terms_mode_a(analyzer: Analyzer, text: str, expected: list[str]) -> None:
    assert analyzer.terms(text) == expected


@pytest.mark.parametrize(
    ("mode", "text", "expected"),
    [
        ("B", "東京都に住んでいます", ["東京都", "住む", "居る"]),
        ("C", "東京都に住んでいます", ["東京都", "住む", "居る"]),
        ("B", "お客様から料理の温度が低い", ["御客様", "料理", "温度", "低い"]),
        ("B", "国立国会図書館", ["国立", "国会", "図書館"]),
        ("B", "東京スカイツリー", ["東京", "スカイツリー"]),
        ("C", "東京スカイツリー", ["東京スカイツリー"]),
        ("C", "x線", ["エックス線"]),
    ],
)
def test_pinned_terms_modes_b_c(mode: str, text: str, expected: list[str]) -> None:
    assert get_analyzer(mode).terms(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("STR-0001", ["str-0001"]),
        ("ＳＴＲ－０００１", ["str-0001"]),
        ("STR‐0001", ["str-0001"]),
        ("ABC-123", ["abc-123"]),
        ("10122110", ["10122110"]),
        ("v2.0", ["v2.0"]),
        ("A4", ["a4"]),
        ("iPhone15", ["iphone15"]),
        ("iPhone15とA4用紙、v2.0へ更新", ["iphone15", "a4", "用紙", "v2.0", "更新"]),
        ("問い合わせ番号0120-123-456まで", ["問い合わせ", "番号", "0120-123-456"]),
        ("J-CASTニュース", ["j-cast", "ニュース"]),
        ("ISO/TS 16949", ["iso/ts", "16949"]),
        # A number followed by a unit is a quantity, not a code: Sudachi splits it.
        ("100kgの荷物", ["100", "kg", "荷物"]),
        ("1,000mmの板", ["1000", "mm", "板"]),
    ],
)
def test_codes_stay_whole(analyzer: Analyzer, text: str, expected: list[str]) -> None:
    assert analyzer.terms(text) == expected


def test_without_code_protection_sudachi_splits_codes() -> None:
    plain = Analyzer(protect_codes=False)
    assert plain.terms("型番ABC-123の在庫") == ["型番", "abc", "123", "在庫"]
    assert plain.terms("v2.0") == ["v", "2"]  # and Sudachi normalises 2.0 to 2


def test_options() -> None:
    text = "東京都に住んでいます"
    assert Analyzer(stop_pos=()).terms(text) == ["東京", "都", "に", "住む", "で", "居る", "ます"]
    assert Analyzer(drop_single_hiragana=True).terms(text) == ["東京", "都", "住む"]
    assert Analyzer(form="surface").terms(text) == ["東京", "都", "住ん", "い"]
    assert Analyzer(form="dictionary").terms(text) == ["東京", "都", "住む", "いる"]


def test_term_frequencies_are_kept(analyzer: Analyzer) -> None:
    assert analyzer.terms("在庫と在庫") == ["在庫", "在庫"]


@pytest.mark.parametrize("text", ["", "   ", "\u3000\n", "、。！？", "のは"])
def test_nothing_to_index_gives_no_terms(analyzer: Analyzer, text: str) -> None:
    assert analyzer.terms(text) == []


def test_query_terms_match_index_terms(analyzer: Analyzer) -> None:
    text = "型番ABC-123の在庫はありますか？"
    assert analyzer.query_terms(text) == analyzer.terms(text) == ["型番", "abc-123", "在庫", "有る"]


@pytest.mark.parametrize("bad", ["D", "", "AB", "short"])
def test_invalid_split_mode(bad: str) -> None:
    with pytest.raises(ConfigError) as err:
        Analyzer(bad)
    assert "A, B, C" in str(err.value)
    assert repr(bad) in str(err.value)


def test_invalid_form() -> None:
    with pytest.raises(ConfigError, match="normalized, surface, dictionary"):
        Analyzer(form="reading")


def test_get_analyzer_is_cached_per_mode() -> None:
    assert get_analyzer() is get_analyzer("A") is get_analyzer("a")
    assert get_analyzer("C") is not get_analyzer("A")
    assert get_analyzer("c").split_mode is SplitMode.C


def test_long_text_is_split_under_sudachis_limit(analyzer: Analyzer) -> None:
    sentence = "型番ABC-123の在庫を確認しました。"
    text = sentence * 2000  # about 100 kB, twice Sudachi's 49,149-byte limit
    assert len(text.encode("utf-8")) > 49149
    assert analyzer.terms(text) == analyzer.terms(sentence) * 2000


def test_long_text_without_sentence_ends(analyzer: Analyzer) -> None:
    text = "在庫 " * 20000  # no 。: cut at spaces
    assert analyzer.terms(text) == ["在庫"] * 20000
    assert len(analyzer.terms("あ" * 30000)) > 0  # no space either: cut anywhere


def test_threads_each_get_their_own_tokenizer(analyzer: Analyzer) -> None:
    texts = ["東京都に住んでいます", "型番ABC-123の在庫", "相手のフォロワー1体に3ダメージ"] * 50
    expected = [analyzer.terms(t) for t in texts]
    with ThreadPoolExecutor(max_workers=4) as pool:
        assert list(pool.map(analyzer.terms, texts)) == expected


def test_import_does_not_load_sudachi() -> None:
    code = "import sys, tansaku.text; print('sudachipy' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_a_querys_analysis_is_kept_and_equals_the_fresh_one() -> None:
    analyzer = Analyzer()
    text = "型番ABC-123の在庫はありますか？"
    first = analyzer.query_terms(text)
    first.append("書き換え")  # a caller's list is its own: the kept terms stay as they were
    assert analyzer.query_terms(text) == analyzer.terms(text)
    norm, tagged = analyzer.query_tagged(text)
    fresh_norm, fresh = analyzer.tagged(text)
    assert (norm, list(tagged)) == (fresh_norm, fresh)
    assert analyzer.query_tagged(text)[1] is tagged  # the same analysis, not a second one
    assert analyzer._query_terms.cache_info().misses == 1


def test_threads_read_kept_query_analyses(analyzer: Analyzer) -> None:
    texts = [f"{n}号店の冷蔵庫が故障しました" for n in range(40)] * 5
    expected = [analyzer.terms(t) for t in texts]
    with ThreadPoolExecutor(max_workers=4) as pool:
        assert list(pool.map(analyzer.query_terms, texts)) == expected


def test_a_long_text_is_analysed_but_not_kept() -> None:
    from tansaku.text.analyzer import QUERY_KEPT_MAX_CHARS

    analyzer = Analyzer()
    text = "冷蔵庫の温度が上がらない。" * (QUERY_KEPT_MAX_CHARS // 10)
    assert len(text) > QUERY_KEPT_MAX_CHARS
    assert analyzer.query_terms(text) == analyzer.terms(text)
    norm, tagged = analyzer.tagged(text)
    assert analyzer.query_tagged(text) == (norm, tuple(tagged))
    assert analyzer._query_terms.cache_info().currsize == 0
    assert analyzer._query_tagged.cache_info().currsize == 0


_DICTIONARY_PAGES = """
import json
from tansaku.residency import resident_kib
from tansaku.text import get_analyzer
from tansaku.text.analyzer import dictionary_folder

analyzer = get_analyzer()
analyzer.warm_up()
loaded = resident_kib(dictionary_folder())
terms = analyzer.terms("冷蔵庫の霜取りは週に一度、閉店後に行うこと")
print(json.dumps({"loaded": loaded, "terms": terms}))
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc and madvise")
def test_a_loaded_dictionary_holds_none_of_the_pages_loading_read() -> None:
    """Sudachi reads ~72 MiB of its dictionary file while loading it; in a fresh process the
    analyzer hands them back (they stay in the page cache) and analyses the same.

    What an analysis maps back afterwards is the kernel's choice, not measured here: a page
    cache holding the file in small folios maps back a few MiB, one holding it in large folios
    (Linux 6.18 maps a touched large folio whole) up to as much as loading read."""
    out = subprocess.run(
        [sys.executable, "-c", _DICTIONARY_PAGES], capture_output=True, text=True, check=True
    )
    seen = json.loads(out.stdout)
    assert seen["loaded"] < 4 * 1024, seen  # KiB; ~75 MiB without the release
    assert seen["terms"] == get_analyzer().terms("冷蔵庫の霜取りは週に一度、閉店後に行うこと")
    assert "冷蔵" in seen["terms"]

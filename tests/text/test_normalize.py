"""normalize(): width, case, long vowels, dashes in codes, whitespace; idempotent."""

from __future__ import annotations

import random

import pytest

from tansaku.text import normalize


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # NFKC: half-width katakana → full-width, full-width ASCII → half-width, then lowercase.
        ("ｻｰﾊﾞｰ", "サーバー"),
        ("ｺﾝﾋﾟｭｰﾀｰ", "コンピューター"),
        ("ｶﾞｯｺｳ", "ガッコウ"),
        ("ＩＴ", "it"),
        ("ＳＴＲ－０００１", "str-0001"),
        ("iPhone15", "iphone15"),
        ("①番", "1番"),
        # Long-vowel marks: dash-like characters after katakana become one ー.
        ("サ-バ-", "サーバー"),
        ("サ‐バ‐", "サーバー"),
        ("サ−バ−", "サーバー"),
        ("サ―バ―", "サーバー"),
        ("サーーバーーー", "サーバー"),
        ("ﾃﾞｰﾀ－ﾍﾞｰｽ", "データーベース"),
        ("すごーーい", "すごーい"),
        # ... but not before an ASCII letter or digit, and not after non-katakana.
        ("タイプ-A", "タイプ-a"),
        ("J-CAST", "j-cast"),
        ("東京-大阪", "東京-大阪"),
        # Tildes mark ranges, not long vowels.
        ("ブロンズ〜ゴールド", "ブロンズ〜ゴールド"),
        # Dash-like characters inside codes become "-".
        ("STR‐0001", "str-0001"),
        ("ABC−123", "abc-123"),
        ("abc–123", "abc-123"),
        # Whitespace: runs (full-width space, tabs, newlines) → one space, ends stripped.
        ("  東京\u3000\u3000大阪\n\n名古屋\t ", "東京 大阪 名古屋"),
        ("\u3000", ""),
        ("", ""),
        # Zero-width characters are removed (before NFKC, so カ + combining dakuten composes).
        ("サー\u200bバー", "サーバー"),
        ("カ\u200b\u3099", "ガ"),
    ],
)
def test_normalize(text: str, expected: str) -> None:
    assert normalize(text) == expected


def test_restaurant_report() -> None:
    text = "お客様から　料理の温度が低い\nとのクレームがありました（ﾃｰﾌﾞﾙ３）"
    assert normalize(text) == "お客様から 料理の温度が低い とのクレームがありました(テーブル3)"


_POOL = (
    "アイウカキｱｲｳｶﾞﾊﾟｰ-‐‑‒–—―−ー~〜ＡＢＣabcXYZ0123０１２３ 　\t\n_./"
    "東京都にはがのをすご①㈱\u3099\u309b\u200b\ufeffé"
)


def test_idempotent_on_random_strings() -> None:
    rng = random.Random(0)
    for _ in range(3000):
        text = "".join(rng.choice(_POOL) for _ in range(rng.randint(0, 16)))
        once = normalize(text)
        assert normalize(once) == once, (text, once)


@pytest.mark.parametrize("text", ["ｻ-ﾊﾞ-のＩＤ: STR–0001 ", "カ\u309b", " \u309b", "ア‐‐1"])
def test_idempotent_on_edge_cases(text: str) -> None:
    assert normalize(normalize(text)) == normalize(text)

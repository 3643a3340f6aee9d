from __future__ import annotations

import pytest

from tansaku.search.classify import QueryLabel, classify


@pytest.mark.parametrize(
    ("query", "label"),
    [
        ("昨日の問題", QueryLabel.VAGUE),
        ("先週のトラブル", QueryLabel.VAGUE),
        ("最近どう？", QueryLabel.VAGUE),
        ("新宿店の状況", QueryLabel.VAGUE),
        ("先月のクレーム件数", QueryLabel.STATISTICS),
        ("11月と12月の売上を比較して", QueryLabel.STATISTICS),
        ("食中毒の予防方法", QueryLabel.MANUAL),
        ("クレーム対応の手順を教えて", QueryLabel.MANUAL),
        ("駐車場がある店舗を探して", QueryLabel.TABLE),
        ("子連れで行けるカフェを教えて", QueryLabel.TABLE),
        ("こんにちは", QueryLabel.GREETING),
        ("ありがとうございます！", QueryLabel.GREETING),
        ("相手のリーダーにダメージを与えるカード", QueryLabel.CLEAR),
        ("2025年12月9日のクレーム内容を教えて", QueryLabel.CLEAR),
        ("冬の間、シベリア気団が覆っている範囲はどこか？", QueryLabel.CLEAR),
        ("フェルマーの最終定理という数学の問題を最終的に証明したのは誰か", QueryLabel.CLEAR),
    ],
)
def test_labels(query, label):
    c = classify(query)
    assert c.label is label, (query, c)
    assert 0.5 <= c.confidence <= 0.95


def test_to_dict_shape():
    d = classify("昨日の問題").to_dict()
    assert d["label"] == "vague" and "昨日" in d["reasons"]

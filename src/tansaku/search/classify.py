"""Query classification: clear / vague / manual / statistics / table / greeting.

Rule-based with a confidence, behind a small protocol so an LLM classifier can replace it. The
label steers the pipeline (vague → multi-query expansion) and, later, the agent's tool choice.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum
from typing import Protocol

from tansaku.text.normalize import normalize


class QueryLabel(StrEnum):
    CLEAR = "clear"
    VAGUE = "vague"
    MANUAL = "manual"
    STATISTICS = "statistics"
    TABLE = "table"
    GREETING = "greeting"


@dataclass(frozen=True)
class Classification:
    label: QueryLabel
    confidence: float
    reasons: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, object]:
        return {
            "label": self.label.value,
            "confidence": round(self.confidence, 2),
            "reasons": list(self.reasons),
        }


class Classifier(Protocol):
    def classify(self, query: str) -> Classification: ...


_GREETING = re.compile(
    r"^(こんにちは|こんばんは|おはよう(ございます)?|はじめまして|ありがとう(ございます)?|"
    r"よろしく(お願いします)?|お疲れ様(です)?|お疲れさま(です)?|hello|hi|thanks?)[!！。.?？\s]*$"
)
_RULES: tuple[tuple[QueryLabel, float, re.Pattern[str]], ...] = (
    (
        QueryLabel.STATISTICS,
        0.85,
        re.compile(
            r"(件数|何件|推移|傾向|平均|合計|集計|統計|割合|比率|前月比|前年比|前週比|比較|"
            r"増減|ランキング|トレンド|発生率|クレーム率|何円|何人|売上(は|の推移|高|実績|額))"
        ),
    ),
    (
        QueryLabel.TABLE,
        0.8,
        re.compile(
            r"(店舗|お店|カフェ|レストラン|イベント|催し).{0,12}"
            r"(探し|さがし|一覧|教えて|駐車場|個室|ペット|営業時間|予約|子連れ|"
            r"ベジタリアン|ヴィーガン|ハラール|アレルギー|バリアフリー|授乳)|"
            r"(駐車場|個室|ペット可|営業時間|定休日|子連れ|キッズ|授乳室|バリアフリー).{0,8}(店|お店)"
        ),
    ),
    (
        QueryLabel.MANUAL,
        0.8,
        re.compile(
            r"(方法|手順|やり方|仕方|マニュアル|規定|ルール|ガイドライン|どうすれば|"
            r"どうしたら|対応方法|対処法|注意点|予防|防ぐには|べきか)"
        ),
    ),
)
_VAGUE = re.compile(
    r"(問題|トラブル|最近|色々|いろいろ|状況|様子|どう(だった|なって|でしたか)|何か(あった|起き)|"
    r"なにか(あった|起き)|困って|気になる)"
)
_DATE_WORDS = re.compile(
    r"(今日|本日|昨日|きのう|一昨日|おととい|今週|先週|先々週|今月|先月|今年|去年|昨年|最近|直近|"
    r"過去\d+日|\d+日前)"
)
_PARTICLES = re.compile(r"[のはがをにでとへもや、。?？!！\s]")


class RuleClassifier:
    """Keyword rules over the normalised query; the first matching rule wins, vague last.

    Vague: a vague word (問題, 最近, 状況…) +0.4, a relative date +0.2, a short query (≤ 8 content
    characters) +0.3, a long one (> 20) −0.4; 0.5 or more is vague.
    """

    def classify(self, query: str) -> Classification:
        q = normalize(query)
        if not q:
            return Classification(QueryLabel.VAGUE, 0.5, ("空のクエリ",))
        if _GREETING.match(q):
            return Classification(QueryLabel.GREETING, 0.95, ("挨拶",))
        for label, conf, pattern in _RULES:
            m = pattern.search(q)
            if m:
                return Classification(label, conf, (m.group(0),))
        reasons: list[str] = []
        score = 0.0
        if (m := _VAGUE.search(q)) is not None:
            reasons.append(m.group(0))
            score += 0.4
        if (m := _DATE_WORDS.search(q)) is not None:
            reasons.append(m.group(0))
            score += 0.2
        content = _PARTICLES.sub("", q)
        if len(content) <= 8:
            reasons.append("短いクエリ")
            score += 0.3
        elif len(content) > 20:  # a long question is specific even if it says 問題
            score -= 0.4
        if score >= 0.5:
            return Classification(
                QueryLabel.VAGUE, min(0.5 + score / 2, 0.95), tuple(dict.fromkeys(reasons))
            )
        return Classification(QueryLabel.CLEAR, 0.7 if score <= 0 else 0.6, tuple(reasons))


def classify(query: str) -> Classification:
    return RuleClassifier().classify(query)

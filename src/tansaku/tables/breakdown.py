"""A breakdown of the claims of a period, the way a manager reads a trend: per store, per week,
the words the claim texts repeat, the change against the period just before, and example
reports (with their ids, so every figure can be checked against its rows).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from tansaku.tables.daily import JsonResult, PeriodQuery, as_int, iso, percent, period_statistic
from tansaku.tables.period import Period, StoreScope

EXAMPLES = 3
TOPICS = 5
# words every claim text has; what the claim is about is in the other words
_FRAME = frozenset(
    [
        "お客様",
        "客",
        "様",
        "クレーム",
        "苦情",
        "申し出",
        "指摘",
        "対応",
        "謝罪",
        "お詫び",
        "本日",
        "今日",
        "件",
        "事",
        "こと",
        "方",
        "為る",
        "有る",
        "居る",
        "成る",
        "言う",
        "頂く",
        "致す",
        "下さる",
        "申す",
        "受ける",
        "大変",
        "少し",
        "今後",
        "注意",
        "確認",
        "スタッフ",
    ]
)


@dataclass(frozen=True)
class ClaimBreakdown(JsonResult):
    period: Period
    previous: Period
    scope: StoreScope
    total_reports: int
    claim_count: int
    previous_count: int
    by_store: tuple[tuple[str, int], ...]
    by_week: tuple[tuple[str, int], ...]
    """Monday of each week with claims, oldest first."""
    topics: tuple[tuple[str, int], ...]
    """The words claim texts repeat most, with the number of claims naming each."""
    examples: tuple[dict[str, str], ...]

    @property
    def change(self) -> int:
        return self.claim_count - self.previous_count

    def to_dict(self) -> dict[str, Any]:
        return {
            "period": self.period.to_dict(),
            "previous_period": self.previous.to_dict(),
            "store": self.scope.label,
            "summary": {
                "total_reports": self.total_reports,
                "claim_count": self.claim_count,
                "claim_rate": percent(self.claim_count, self.total_reports),
                "previous_claim_count": self.previous_count,
                "change": self.change,
            },
            "by_store": [{"store": s, "count": n} for s, n in self.by_store],
            "by_week": [{"week": w, "count": n} for w, n in self.by_week],
            "topics": [{"term": t, "count": n} for t, n in self.topics],
            "examples": list(self.examples),
        }


def _topics(texts: list[str]) -> tuple[tuple[str, int], ...]:
    from tansaku.text import get_analyzer

    analyzer = get_analyzer()
    counts: Counter[str] = Counter()
    for text in texts:
        terms = {
            t
            for t in analyzer.terms(text or "")
            if len(t) >= 2 and t not in _FRAME and not ("\u3041" <= t[-1] <= "\u309f")
        }
        counts.update(terms)
    return tuple((t, n) for t, n in counts.most_common(TOPICS) if n >= 2)


@period_statistic
def get_claim_breakdown(query: PeriodQuery) -> ClaimBreakdown:
    """クレームの内訳: 店舗別・週別の件数、内容に多い語、直前の同じ長さの期間との比較、例。"""
    period, reports = query.period, query.reports
    previous = Period(period.start - timedelta(days=period.days), period.start - timedelta(days=1))
    ((total, claims),) = query.rows("count(*), count(*) FILTER (WHERE claim)")
    ((before,),) = reports.rows("count(*) FILTER (WHERE claim)", previous)
    by_store = query.rows(
        "store, count(*)", where="claim", tail="GROUP BY store ORDER BY 2 DESC, store"
    )
    by_week = query.rows(
        "CAST(date_trunc('week', \"date\") AS DATE), count(*)",
        where="claim",
        tail="GROUP BY 1 ORDER BY 1",
    )
    rid = "report_id" if "report_id" in reports.columns else "NULL"
    cases = query.rows(
        f'{rid}, "date", store, claim_content',
        where="claim",
        tail='ORDER BY "date" DESC, store',
    )
    examples = tuple(
        {"report_id": str(r or ""), "date": iso(d), "store": str(s), "content": str(c or "")}
        for r, d, s, c in cases[:EXAMPLES]
    )
    return ClaimBreakdown(
        period=period,
        previous=previous,
        scope=query.scope,
        total_reports=as_int(total),
        claim_count=as_int(claims),
        previous_count=as_int(before),
        by_store=tuple((str(s), as_int(n)) for s, n in by_store),
        by_week=tuple((iso(w), as_int(n)) for w, n in by_week),
        topics=_topics([str(c or "") for *_, c in cases]),
        examples=examples,
    )

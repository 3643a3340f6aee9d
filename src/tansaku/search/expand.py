"""Multi-query expansion: turn one vague query into 3–5 concrete ones.

The rule-based expander substitutes resolved dates, swaps in synonyms and adds a few search
perspectives. An LLM expander implements the same :class:`Expander` protocol; whatever it returns,
the pipeline keeps the original query first and falls back to it alone if expansion fails.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

from tansaku.search.classify import Classification, QueryLabel
from tansaku.text.analyzer import Analyzer
from tansaku.text.dates import DateRange
from tansaku.text.synonyms import Synonyms


@dataclass(frozen=True)
class ExpandContext:
    """What an expander may use besides the query itself."""

    date_range: DateRange | None
    remainder: str  # the query without its date expression
    synonyms: Synonyms
    analyzer: Analyzer
    classification: Classification
    max_queries: int = 5
    now: datetime | None = None
    """The search's reference time (``SearchRequest.now``; None: the current time)."""


class Expander(Protocol):
    @property
    def name(self) -> str: ...

    def expand(self, query: str, ctx: ExpandContext) -> list[str]:
        """Concrete queries (the original may be included; the pipeline dedupes)."""
        ...


PERSPECTIVES: dict[QueryLabel, tuple[str, ...]] = {
    QueryLabel.VAGUE: ("{q}の内容", "{q}への対応", "{q}の原因"),
    QueryLabel.MANUAL: ("{q}の手順", "{q}の注意点"),
}


def date_label(rng: DateRange) -> str:
    if rng.start == rng.end:
        return rng.start.isoformat()
    return f"{rng.start.isoformat()}から{rng.end.isoformat()}"


class RuleExpander:
    """Dates → concrete dates, each matched synonym → one variant per other member, then
    perspectives until ``max_queries``. Deterministic."""

    @property
    def name(self) -> str:
        return "rules"

    def expand(self, query: str, ctx: ExpandContext) -> list[str]:
        base = (ctx.remainder or query) if ctx.date_range else query
        variants: list[str] = [base]
        for match in ctx.synonyms.expand(base, ctx.analyzer).matches:
            for other in match.others:
                if match.term in base:
                    variants.append(base.replace(match.term, other, 1))
        for template in PERSPECTIVES.get(ctx.classification.label, ()):
            variants.append(template.format(q=base))
        out = list(dict.fromkeys(v.strip() for v in variants if v.strip()))
        if ctx.date_range is not None:
            label = date_label(ctx.date_range)
            out = [f"{label}の{v}" for v in out]
        return out[: ctx.max_queries]


def finalize(original: str, expanded: Sequence[str], max_queries: int) -> list[str]:
    """Original first, duplicates and blanks removed, capped."""
    seen = dict.fromkeys([original, *[q.strip() for q in expanded if q and q.strip()]])
    return list(seen)[:max_queries]

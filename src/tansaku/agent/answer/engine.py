"""The generic answer: search every collection of the scope, rank the hits together on their
calibrated probability, decline when even the best is unlikely to answer, and otherwise quote
the best sentences (or an FAQ's answer part, or a list of cards) with their sources.
"""

from __future__ import annotations

from collections.abc import Sequence

from tansaku.agent.answer.outcome import SEARCH_TOOL, Outcome, citation_of, percent, where_of
from tansaku.agent.answer.sentences import Quote, faq_answer, pick
from tansaku.agent.answer.shapes import (
    ASKS_REPLIES,
    cards_answer,
    cards_only,
    listing_answer,
    named_first,
    replies_text,
)
from tansaku.agent.events import Event
from tansaku.errors import TansakuError
from tansaku.records import Record
from tansaku.store.base import Filter
from tansaku.tools.roles import ROLE_LABELS
from tansaku.tools.scope.calibration import calibrate, threshold_of
from tansaku.tools.scope.candidates import (
    Candidate,
    Question,
    Retrieved,
    search_scope,
)
from tansaku.tools.spec import ToolScope

MAX_SOURCES = 3
SOURCE_SHARE = 0.5
"""A candidate is quoted beside the best one when its probability is at least this share."""
MIN_BIGRAMS = 0.5
MAX_DOC_RECORDS = 12
"""A document of more records (a long manual's chunks) is quoted from its matched record."""


def _labels(scope: ToolScope, names: Sequence[str]) -> str:
    roles = {v: k for k, v in scope.collections.items()}
    out = []
    for n in names:
        label = ROLE_LABELS.get(roles.get(n, ""), "")
        out.append(f"{n}({label})" if label and label != n else n)
    return "、".join(out)


def _result_summary(ranked: Sequence[Candidate]) -> str:
    if not ranked:
        return "該当する記録はありませんでした"
    lines = [
        f"{i}. {c.title}({c.collection}、確からしさ {percent(c.probability)})"
        for i, c in enumerate(ranked[:5], 1)
    ]
    return "\n".join(lines)


def _siblings(scope: ToolScope, pool: Sequence[Candidate]) -> dict[str, str]:
    """The ``qa_answer`` records of the pool's ``qa_question`` hits (record id → text)."""
    wanted: dict[str, list[str]] = {}
    for c in pool:
        rid = c.hit.record.id
        if c.hit.record.field.startswith("qa_question"):
            wanted.setdefault(c.collection, []).append(rid.replace("qa_question", "qa_answer", 1))
    out: dict[str, str] = {}
    for name, ids in wanted.items():
        try:
            with scope.client.reading(name) as col:
                out.update({r.id: r.text for r in col.store.get(scope.team, ids)})
        except TansakuError:
            continue
    return out


def _documents(scope: ToolScope, pool: Sequence[Candidate]) -> dict[str, str]:
    """Record id → the whole text of its document (every field record in order, the
    ``combined`` copy left out when the fields are there): the sentence that answers is often
    in another field than the one that matched (a lab note's result, not its materials)."""
    out: dict[str, str] = {}
    for c in pool:
        try:
            with scope.client.reading(c.collection) as col:
                infos = col.store.scan(scope.team, Filter(doc_ids=(c.hit.doc_id,)), with_text=True)
        except TansakuError:
            continue
        records = sorted((i.record for i in infos), key=lambda r: r.id)
        fields = [r for r in records if not r.field.startswith("combined")] or records
        if len(fields) > 1 and len(fields) <= MAX_DOC_RECORDS:
            out[c.hit.record.id] = "\n\n".join(r.text for r in _ordered(fields, c.hit.record))
    return out


def _ordered(records: Sequence[Record], first: Record) -> list[Record]:
    """The matched record first, then the others in id order."""
    return [first, *(r for r in records if r.id != first.id)]


def _quotes_text(quotes: Sequence[Quote]) -> str:
    if len(quotes) == 1:
        q = quotes[0]
        return f"{q.text}({where_of(q.candidate)})"
    return "\n".join(f"・{q.text}({where_of(q.candidate)})" for q in quotes)


def _no_words_in_common(c: Candidate) -> bool:
    """An extractive answer quotes the record: one that holds none of the question's content
    terms (nor a synonym of one) and few of their character bigrams supports nothing."""
    f = c.features
    return f.n_terms > 0 and f.plain == 0 and f.bigram < MIN_BIGRAMS


def answer_scope(question: str, scope: ToolScope, names: Sequence[str] | None = None) -> Outcome:
    """The generic answer to ``question`` over the scope's collections (or ``names``)."""
    q = Question.of(question, scope.now)
    targets = list(dict.fromkeys(names if names is not None else scope.collections.values()))
    events: list[Event] = [
        Event(
            type="thought",
            text=f"使えるコレクション {_labels(scope, targets) or 'なし'} をすべて検索し、"
            "質問に合う記録を確からしさの順に比べます",
        ),
        Event(
            type="tool_call",
            tool=SEARCH_TOOL,
            arguments={"query": question, "collections": targets},
        ),
    ]
    found: Retrieved = search_scope(scope, q, targets)
    ranked, answerable = calibrate(found.candidates, found.embedders, fusions=found.fusions)
    ranked = named_first(ranked, question)
    threshold = threshold_of(found, ranked[0].collection) if ranked else 1.0
    events.append(Event(type="tool_result", tool=SEARCH_TOOL, text=_result_summary(ranked)))
    searched = tuple(found.searched)
    for name, problem in found.problems.items():
        events.append(Event(type="thought", text=f"{name} は検索できません: {problem}"))
    if ranked and found.listing:
        return listing_answer(question, ranked, found, events, searched)
    unsupported = bool(ranked) and _no_words_in_common(ranked[0])
    if ranked and not unsupported and cards_only(ranked):
        # a list of cards is a search result the user reads, as on the search page: shown
        # whenever the cards share the question's words, hedged when none clearly fits
        return cards_answer(question, scope, ranked, events, searched, sure=answerable >= threshold)
    if not ranked or answerable < threshold or unsupported:
        best = ranked[0] if ranked else None
        if best is None and found.period:  # 「昨日の問題」 on a day nobody recorded
            reason = f"{found.period}の記録はありません"
        elif best is None:
            reason = "検索できる記録がありません"
        elif unsupported:
            reason = f"質問の語を含む記録がありません(最も近いのは「{best.title}」)"
        else:
            reason = (
                f"質問に答える記録が見つかりません(最も近い「{best.title}」でも答えられる見込み "
                f"{percent(answerable)})"
            )
        events.append(Event(type="thought", text=reason))
        return Outcome(None, (), tuple(events), reason, searched)
    top = ranked[0]
    floor = SOURCE_SHARE * top.probability
    pool = [c for c in ranked if c.probability >= floor][:MAX_SOURCES]
    siblings = _siblings(scope, pool)
    answers = {c.hit.record.id: a for c in pool if (a := faq_answer(c, siblings))}
    whole = _documents(scope, [c for c in pool if c.hit.record.id not in answers])
    weights = found.weights.get(top.collection, {})
    terms = list(weights) or list(q.terms)  # with a vague question's expansions (トラブル …)
    quotes = pick(pool, terms, weights, texts={**whole, **answers}, question=question)
    if not quotes:
        reason = f"「{top.title}」に引用できる文がありません"
        events.append(Event(type="thought", text=reason))
        return Outcome(None, (), tuple(events), reason, searched)
    first_quote: dict[int, Quote] = {}
    for quote in quotes:  # a source once, with the heading of its first quote
        first_quote.setdefault(id(quote.candidate), quote)
    cites = tuple(
        dict.fromkeys(citation_of(x.candidate, section=x.heading) for x in first_quote.values())
    )
    shape = "質問と回答の組なので回答の部分を" if top.hit.record.id in answers else "合う文を"
    events.append(
        Event(
            type="thought",
            text=f"「{top.title}」({top.collection})が最も確からしい"
            f"({percent(top.probability)})ので、{shape}出典つきで引用します",
        )
    )
    text = _quotes_text(quotes)
    if ASKS_REPLIES.search(question):
        more, their = replies_text(scope, top, question)
        if more:
            events.append(
                Event(type="thought", text="コメントを聞いているので、投稿へのコメントも示します")
            )
            text, cites = f"{text}\n{more}", (*cites, *their)
    return Outcome(text, cites, tuple(events), "", searched)

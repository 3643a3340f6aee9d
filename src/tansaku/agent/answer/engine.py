"""The generic answer: search every collection of the scope, rank the hits together on their
calibrated probability, decline when even the best is unlikely to answer, and otherwise quote
the best sentences (or an FAQ's answer part, or a list of cards) with their sources.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from tansaku.agent.answer.sentences import Quote, faq_answer, pick
from tansaku.agent.events import Citation, Event
from tansaku.errors import TansakuError
from tansaku.records import Record
from tansaku.store.base import Filter
from tansaku.text.normalize import normalize
from tansaku.tools.roles import CARDS, ROLE_LABELS
from tansaku.tools.scope.calibration import calibrate, threshold_for
from tansaku.tools.scope.candidates import (
    LIST_MAX,
    Candidate,
    Question,
    Retrieved,
    named_conditions,
    search_scope,
)
from tansaku.tools.spec import ToolScope

MAX_SOURCES = 3
MAX_CARDS = 5
SOURCE_SHARE = 0.5
"""A candidate is quoted beside the best one when its probability is at least this share."""
CARD_SHARE = 0.25
MIN_BIGRAMS = 0.5
MAX_DOC_RECORDS = 12
"""A document of more records (a long manual's chunks) is quoted from its matched record."""
SEARCH_TOOL = "search_collections"


@dataclass(frozen=True)
class Outcome:
    """A generic answer, or (``text`` None) why there is none."""

    text: str | None
    citations: tuple[Citation, ...]
    events: tuple[Event, ...]
    reason: str
    searched: tuple[str, ...]
    tentative: bool = False
    """An answer of candidates for the user to check (``reason`` says why it is not sure):
    shown with its sources, and logged as unanswered."""


def _percent(p: float) -> str:
    return f"{round(p * 100)}%"


def _where(c: Candidate) -> str:
    meta = c.hit.record.metadata
    title = c.title
    keys = ("date", "store", "author")
    parts = [str(meta[k]) for k in keys if meta.get(k) and str(meta[k]) not in title]
    return " ".join([*parts, title]).strip()


def citation_of(c: Candidate, tool: str = SEARCH_TOOL) -> Citation:
    meta = c.hit.record.metadata
    return Citation(
        doc_id=c.hit.doc_id,
        collection=c.collection,
        title=c.title,
        date=str(meta.get("date") or ""),
        store=str(meta.get("store") or ""),
        section=str(meta.get("section") or meta.get("chapter") or ""),
        tool=tool,
    )


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
        f"{i}. {c.title}({c.collection}、確からしさ {_percent(c.probability)})"
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
        return f"{q.text}({_where(q.candidate)})"
    return "\n".join(f"・{q.text}({_where(q.candidate)})" for q in quotes)


def _cards_lines(scope: ToolScope, cards: Sequence[Candidate]) -> str:
    from tansaku.tools.knowledge import card_effects

    by_collection: dict[str, list[str]] = {}
    for c in cards:
        by_collection.setdefault(c.collection, []).append(c.hit.doc_id)
    effects: dict[str, str] = {}
    for name, ids in by_collection.items():
        effects.update(card_effects(scope, name, ids))
    lines = []
    for c in cards:
        meta = c.hit.record.metadata
        kind = "・".join(str(meta[k]) for k in ("class", "type") if meta.get(k))
        cost = f"コスト{meta['cost']}" if meta.get("cost") is not None else ""
        what = " ".join(p for p in (kind, cost) if p)
        effect = " ".join((effects.get(c.hit.doc_id) or c.hit.record.text).split())
        effect = effect if len(effect) <= 80 else effect[:79] + "…"
        lines.append(f"・{c.title}({what}){effect}" if what else f"・{c.title} {effect}")
    return "\n".join(lines)


def _listing_answer(
    question: str,
    ranked: Sequence[Candidate],
    found: Retrieved,
    events: list[Event],
    searched: tuple[str, ...],
) -> Outcome:
    """「先月の実験ノートは?」: the records of the period or person, oldest first, one per
    document."""
    docs: dict[tuple[str, str], Candidate] = {}
    for c in ranked:
        docs.setdefault((c.collection, c.hit.doc_id), c)
    chosen = sorted(
        docs.values(), key=lambda c: (str(c.hit.record.metadata.get("date") or ""), c.features.rank)
    )[:LIST_MAX]
    what = f"{found.period}の" if found.period else ""
    for condition in named_conditions(question):
        key, _, value = condition.partition("=")
        what += f"{value}さんの" if key == "author" else f"{value}の"
    events.append(
        Event(
            type="thought",
            text=f"{what}記録そのものを聞いているので、当てはまる記録を日付の順に一覧にします",
        )
    )
    lines = [f"・{_where(c)}" for c in chosen]
    head = f"{what}記録は次の{len(chosen)}件です"
    more = f"(表示は最大{LIST_MAX}件)" if len(docs) > LIST_MAX else ""
    text = f"{head}{more}。\n" + "\n".join(lines)
    return Outcome(text, tuple(citation_of(c) for c in chosen), tuple(events), "", searched)


MIN_TITLE = 3


def _named(c: Candidate, question: str) -> bool:
    """Whether the question names the candidate's record by its title (「白銀の騎士団長の効果」)."""
    title = normalize(c.title)
    return len(title) >= MIN_TITLE and title in normalize(question)


def _named_first(ranked: list[Candidate], question: str) -> list[Candidate]:
    """The candidates whose title the question names first, each group in its order."""
    named = [c for c in ranked if _named(c, question)]
    return [*named, *(c for c in ranked if not _named(c, question))] if named else ranked


def _cards_only(ranked: Sequence[Candidate]) -> bool:
    return all(c.role == CARDS for c in ranked)


def _cards_answer(
    question: str,
    scope: ToolScope,
    ranked: Sequence[Candidate],
    events: list[Event],
    searched: tuple[str, ...],
    *,
    sure: bool,
) -> Outcome:
    top = ranked[0]
    floor = CARD_SHARE * top.probability if sure else 0.0  # unsure: the search's own list
    cards = sorted(  # a list of cards keeps the card search's own order, a named card first
        (c for c in ranked if c.collection == top.collection and c.probability >= floor),
        key=lambda c: (not _named(c, question), c.features.rank),
    )[:MAX_CARDS]
    if sure:
        thought = "カードの効果を聞いているので、合うカードを一覧にします"
        head = f"効果が合うカードは次の{len(cards)}枚です。"
    else:
        thought = (
            f"はっきり合うカードはありません(最も確からしい「{top.title}」でも "
            f"{_percent(top.probability)})。質問の語を含む近いカードを、確かめてもらう候補として示します"
        )
        head = (
            "はっきり合うカードは見つかりませんでした。"
            f"近いカードは次の{len(cards)}枚です(効果をご確認ください)。"
        )
    events.append(Event(type="thought", text=thought))
    text = head + "\n" + _cards_lines(scope, cards)
    cites = tuple(citation_of(c) for c in cards)
    reason = "" if sure else f"はっきり合うカードがありません(最も近い「{top.title}」)"
    return Outcome(text, cites, tuple(events), reason, searched, tentative=not sure)


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
    ranked, answerable = calibrate(found.candidates, found.embedders)
    ranked = _named_first(ranked, question)
    threshold = threshold_for(found.embedders.get(ranked[0].collection, "")) if ranked else 1.0
    events.append(Event(type="tool_result", tool=SEARCH_TOOL, text=_result_summary(ranked)))
    searched = tuple(found.searched)
    for name, problem in found.problems.items():
        events.append(Event(type="thought", text=f"{name} は検索できません: {problem}"))
    if ranked and found.listing:
        return _listing_answer(question, ranked, found, events, searched)
    unsupported = bool(ranked) and _no_words_in_common(ranked[0])
    if ranked and not unsupported and _cards_only(ranked):
        # a list of cards is a search result the user reads, as on the search page: shown
        # whenever the cards share the question's words, hedged when none clearly fits
        return _cards_answer(
            question, scope, ranked, events, searched, sure=answerable >= threshold
        )
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
                f"{_percent(answerable)})"
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
    used = list(dict.fromkeys(id(q.candidate) for q in quotes))
    by_id = {id(q.candidate): q.candidate for q in quotes}
    cites = tuple(dict.fromkeys(citation_of(by_id[i]) for i in used))
    shape = "質問と回答の組なので回答の部分を" if top.hit.record.id in answers else "合う文を"
    events.append(
        Event(
            type="thought",
            text=f"「{top.title}」({top.collection})が最も確からしい"
            f"({_percent(top.probability)})ので、{shape}出典つきで引用します",
        )
    )
    return Outcome(_quotes_text(quotes), cites, tuple(events), "", searched)

"""Answer shapes beside quoting: a list of cards, the records of a period or a person, and
the comments on a bulletin-board post."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from tansaku.agent.answer.outcome import Outcome, citation_of, hit_citation, percent, where_of
from tansaku.agent.events import Citation, Event
from tansaku.errors import TansakuError
from tansaku.search.types import Hit
from tansaku.text.normalize import normalize
from tansaku.tools.roles import CARDS
from tansaku.tools.scope.candidates import LIST_MAX, Candidate, Retrieved
from tansaku.tools.scope.conditions import named_conditions
from tansaku.tools.spec import ToolScope

MAX_CARDS = 5
CARD_SHARE = 0.25
"""A card is listed beside the best one when its probability is at least this share."""


MIN_TITLE = 3


def _named(c: Candidate, asked: str) -> bool:
    """Whether the question (``asked``, normalised) names the candidate's record by its title
    (「白銀の騎士団長の効果」)."""
    title = normalize(c.title)
    return len(title) >= MIN_TITLE and title in asked


def named_first(ranked: list[Candidate], question: str) -> list[Candidate]:
    """The candidates whose title the question names first, each group in its order."""
    asked = normalize(question)
    named = [c for c in ranked if _named(c, asked)]
    rest = [c for c in ranked if not _named(c, asked)]
    return [*named, *rest] if named else ranked


def cards_only(ranked: Sequence[Candidate]) -> bool:
    return all(c.role == CARDS for c in ranked)


def cards_answer(
    question: str,
    scope: ToolScope,
    ranked: Sequence[Candidate],
    events: list[Event],
    searched: tuple[str, ...],
    *,
    sure: bool,
) -> Outcome:
    top = ranked[0]
    asked = normalize(question)
    floor = CARD_SHARE * top.probability if sure else 0.0  # unsure: the search's own list
    cards = sorted(  # a list of cards keeps the card search's own order, a named card first
        (c for c in ranked if c.collection == top.collection and c.probability >= floor),
        key=lambda c: (not _named(c, asked), c.features.rank),
    )[:MAX_CARDS]
    if sure:
        thought = "カードの効果を聞いているので、合うカードを一覧にします"
        head = f"効果が合うカードは次の{len(cards)}枚です。"
    else:
        thought = (
            f"はっきり合うカードはありません(最も確からしい「{top.title}」でも "
            f"{percent(top.probability)})。質問の語を含む近いカードを、確かめてもらう候補として示します"
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


def listing_answer(
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
    lines = [f"・{where_of(c)}" for c in chosen]
    head = f"{what}記録は次の{len(chosen)}件です"
    more = f"(表示は最大{LIST_MAX}件)" if len(docs) > LIST_MAX else ""
    text = f"{head}{more}。\n" + "\n".join(lines)
    return Outcome(text, tuple(citation_of(c) for c in chosen), tuple(events), "", searched)


ASKS_REPLIES = re.compile(r"コメント|返信|レス(?!トラン)")
MAX_REPLIES = 5


def _replies(scope: ToolScope, post: Candidate, question: str) -> list[Hit]:
    """The comments on a bulletin-board post (records whose ``post_id`` is its id)."""
    try:
        where = (f"post_id={post.hit.doc_id}",)
        result = scope.search(question, post.collection, top_k=MAX_REPLIES, where=where)
    except TansakuError:
        return []
    found = [h for h in result.hits if h.record.metadata.get("post_id") == post.hit.doc_id]
    return sorted(found, key=lambda h: (str(h.record.metadata.get("date") or ""), h.doc_id))


def _who(meta: Mapping[str, object]) -> str:
    where = " ".join(str(meta[k]) for k in ("date", "store") if meta.get(k))
    author = str(meta.get("author") or "")
    return f"{author}({where})" if where else author


def _short(text: str, limit: int = 60) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def replies_text(
    scope: ToolScope, post: Candidate, question: str
) -> tuple[str, tuple[Citation, ...]]:
    """The comments on ``post`` as lines (author, date, store, their words) and citations."""
    found = _replies(scope, post, question)
    lines = [f"コメント: {_who(r.record.metadata)}「{_short(r.record.text)}」" for r in found]
    return "\n".join(lines), tuple(hit_citation(r, post.collection) for r in found)

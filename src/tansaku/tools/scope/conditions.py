"""Conditions a question puts on the records it asks for: the store and the person it names,
the metadata values it asks for as the kind of record (「ドラゴンのフォロワー」), where it says to
look (「日報で」), and whether it asks for nothing but a period's or a person's records."""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache

from tansaku.search.types import Hit
from tansaku.text import get_analyzer
from tansaku.text.names import people_in, stores_in
from tansaku.text.normalize import normalize
from tansaku.tools.roles import RECORD_KINDS
from tansaku.tools.scope.words import DOING_WORDS, QUESTION_WORDS


@lru_cache(maxsize=256)
def described_by(name: str, description: str) -> frozenset[str]:
    return frozenset(get_analyzer().terms(f"{name} {description}"))


def named_conditions(text: str) -> tuple[str, ...]:
    """``where`` conditions for the one store and the one person a question names
    (「昨日新宿店で…」 → ``store=新宿店``, 「佐藤さんが担当した…」 → ``author=佐藤``)."""
    out = []
    stores, people = stores_in(text), people_in(text)
    if len(stores) == 1:
        out.append(f"store={stores[0]}")
    if len(people) == 1:
        out.append(f"author={people[0]}")
    return tuple(out)


_NOT_FACETS = frozenset(
    [
        "title",
        "date",
        "section",
        "chapter",
        "question",
        "source",
        "path",
        "url",
        "id",
        "store",
        "author",
        "source_type",
        "file",
        "page",
    ]
)
"""Metadata keys whose values are descriptions, dates or handled by :func:`named_conditions`."""
MAX_FACET = 12


def facet_conditions(
    text: str, hits: Sequence[Hit], ignored: frozenset[str] = frozenset()
) -> tuple[str, ...]:
    """``where`` conditions for the metadata values the question names among its hits' as the
    kind of record it asks for (「疾走を持つドラゴンのフォロワー」 over cards whose ``class`` and
    ``type`` hold ドラゴン and フォロワー). A value is that kind only where nothing but other named
    values, question words and ``ignored`` words (the collection's own) follow it: in 「アミュレット
    のカウントダウンを早めるカード」 the amulet is what the card acts on, not what it is."""
    norm = normalize(text)
    named: dict[str, set[str]] = {}
    for hit in hits:
        for key, value in hit.record.metadata.items():
            if key in _NOT_FACETS or not isinstance(value, str) or "," in value:
                continue
            v = normalize(value.strip())
            if 2 <= len(v) <= MAX_FACET and not v.isdigit() and v in norm:
                named.setdefault(key, set()).add(v)
    values = {v for vs in named.values() for v in vs}
    skip = QUESTION_WORDS | DOING_WORDS | ignored
    analyzer = get_analyzer()

    def heads(v: str) -> bool:
        rest = norm[norm.rindex(v) + len(v) :]
        for other in values:
            rest = rest.replace(other, " ")
        return all(t in skip for t in analyzer.terms(rest))

    out = []
    for key, vs in sorted(named.items()):
        kinds = [v for v in vs if heads(v)]
        if len(kinds) == 1:
            out.append(f"{key}={kinds[0]}")
    where = {
        t
        for hit in hits
        if isinstance(t := hit.record.metadata.get("source_type"), str)
        and any(word in norm for word in RECORD_KINDS.get(t, ()))
    }
    if len(where) == 1:  # 「日報で」「掲示板に」: where to look, whatever follows
        out.append(f"source_type={where.pop()}")
    return tuple(out)


def lists_only(text: str, terms: Sequence[str], described: frozenset[str]) -> bool:
    """Whether a question holds nothing to search for but the collection's own words
    (``described``), what someone did and who: 「佐藤さんが担当した実験」「先月の実験ノートは?」."""
    names = {t for n in (*stores_in(text), *people_in(text)) for t in get_analyzer().terms(n)}
    return not [t for t in terms if t not in described and t not in names and t not in DOING_WORDS]

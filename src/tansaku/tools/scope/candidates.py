"""Candidates for an answer: every collection of the caller's scope searched with its own
config, each hit described by features that mean the same thing in every collection, so hits
of different collections can be ranked together once calibrated (``calibration.py``).

The features are the engine's own signals, not keyword rules:

- ``dense``: the cosine of the question and the hit on the collection's dense axis (absolute
  for one embedding model; ``None`` without a dense axis);
- ``coverage``: the share of the question's content terms the hit contains, each term weighted
  by its rarity in the collection (the IDF of its character bigrams over the sentence units);
- ``plain``: the same share unweighted; ``oov``: the weight share of question terms the
  collection never contains at all (a question about something the team has no word for);
- ``rank``, ``relative`` (fused score / the collection's best), ``top_axes`` (share of the
  axes that ranked it first) and ``gap`` (how far the collection's first hit leads its second).
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property, lru_cache
from typing import Any

from tansaku.config import AxisMode, CollectionConfig, FusionConfig
from tansaku.errors import InvalidRequest, TansakuError
from tansaku.search.types import Hit
from tansaku.store.sparse import query_vector, term_id
from tansaku.store.units import idf
from tansaku.text import get_analyzer
from tansaku.text.dates import resolve_dates
from tansaku.text.ngram import bigrams
from tansaku.text.normalize import normalize
from tansaku.tools.roles import KNOWLEDGE, role_of
from tansaku.tools.scope.conditions import (
    described_by,
    facet_conditions,
    lists_only,
    named_conditions,
)
from tansaku.tools.scope.words import QUESTION_WORDS
from tansaku.tools.spec import ToolScope

DF_CAP = 1000
"""Records counted per term for a collection without sentence units (rarer terms are exact)."""
PER_COLLECTION = 5
"""Hits taken from each collection of the scope."""
LIST_MAX = 10
"""Records taken from each collection when the question asks for a period's or a person's
records (the designs' list limit)."""
_META_KEYS = ("title", "store", "author", "category", "chapter", "section", "question")


@dataclass(frozen=True)
class Question:
    """A question analysed once: its text, the part that is not a date, its content terms."""

    text: str
    remainder: str
    terms: tuple[str, ...]

    @classmethod
    def of(cls, text: str, now: object = None) -> Question:
        rest = resolve_dates(text, now).remainder or text  # type: ignore[arg-type]
        return cls(text=text, remainder=rest, terms=_content_terms(rest))

    def as_searched(self, dated: bool) -> Question:
        """The question as one collection's search took it: without its date expression where
        the date filtered (``dated``), whole where it did not (a collection whose records carry
        no dates keeps 「1953年」 of 「1953年に実験を行ったのは」 as words to find)."""
        return self if dated or self.remainder == self.text else self._whole

    @cached_property
    def _whole(self) -> Question:
        """The question with its date expression kept as words (analysed once, for every
        collection of a scope the date did not filter)."""
        return Question(text=self.text, remainder=self.text, terms=_content_terms(self.text))


def _content_terms(text: str) -> tuple[str, ...]:
    return tuple(dict.fromkeys(t for t in get_analyzer().terms(text) if t not in QUESTION_WORDS))


@dataclass(frozen=True)
class Features:
    dense: float | None
    coverage: float
    plain: float
    oov: float
    rank: int
    relative: float
    top_axes: float
    gap: float
    missing_top: float = 0.0
    """The weight of the rarest question term the hit lacks, over the rarest term's."""
    bigram: float = 0.0
    """The share of the question terms' character bigrams the hit contains."""
    spread: float = 0.0
    """How far the hit's cosine stands above the collection's lowest candidate's."""
    n_terms: float = 0.0
    """The question's content terms (capped at 10), over 10."""


@dataclass(frozen=True, kw_only=True)
class Candidate:
    collection: str
    role: str
    hit: Hit
    features: Features
    probability: float = 0.0

    @property
    def title(self) -> str:
        return str(self.hit.record.metadata.get("title") or self.hit.doc_id)


@lru_cache(maxsize=4096)
def _term_bigram_ids(term: str) -> tuple[int, ...]:
    return tuple(term_id(b) for b in bigrams(term) if len(b) == 2)


class TermWeights:
    """Rarity of each question term in one collection: the IDF of its character bigrams over
    the team's sentence units, or — in a collection without units — the IDF of the term over
    its records (its documents found by a keyword search, counted up to ``DF_CAP``)."""

    def __init__(self, scope: ToolScope, collection: str, terms: Sequence[str]) -> None:
        self.known: dict[str, bool] = {}
        self.weight: dict[str, float] = {}
        try:
            col = scope.client.collection(collection)
            if col.has_units(scope.team):
                self._from_units(col, scope.team, terms)
            else:
                self._from_records(col, scope.team, terms)
        except (TansakuError, AttributeError, OSError):
            pass
        multi = [self.weight[t] for t in terms if t in self.weight]
        fallback = statistics.median(multi) if multi else 1.0
        for t in terms:
            self.weight.setdefault(t, fallback)
            self.known.setdefault(t, True)

    def _from_units(self, col: Any, team: str, terms: Sequence[str]) -> None:
        ids = {t: _term_bigram_ids(t) for t in terms}
        found = col.units.idf_weights(team, [i for v in ids.values() for i in v])
        top = max(found.values(), default=1.0)
        for t, tids in ids.items():
            if not tids:  # a one-character term: the median
                continue
            self.known[t] = all(i in found for i in tids)
            self.weight[t] = statistics.fmean([found.get(i, top + 1.0) for i in tids])

    def _from_records(self, col: Any, team: str, terms: Sequence[str]) -> None:
        n = col.store.count(team)
        if not n:
            return
        for t in terms:
            df = len(
                col.store.search_sparse(team, query_vector([t]), limit=DF_CAP, with_text=False)
            )
            self.known[t] = df > 0
            self.weight[t] = idf(n, min(df, n))


def _text_of(hit: Hit) -> str:
    meta = hit.record.metadata
    extra = " ".join(str(meta[k]) for k in _META_KEYS if meta.get(k))
    return normalize(f"{extra} {hit.record.text}").lower()


@dataclass(frozen=True)
class Coverage:
    weighted: float
    plain: float
    missing_top: float
    bigram: float


def _coverage(
    terms: Sequence[str],
    weights: TermWeights,
    hit: Hit,
    synonyms: Mapping[str, Sequence[str]] | None = None,
) -> Coverage:
    """How much of the question ``hit`` holds; a term counts as present when one of its
    synonyms (the collection's groups, as the search used them) is."""
    if not terms:
        return Coverage(0.0, 0.0, 0.0, 0.0)
    text = _text_of(hit)
    own = set(get_analyzer().terms(text))
    alts = synonyms or {}
    present = [
        any(x in own or normalize(x).lower() in text for x in (t, *alts.get(t, ()))) for t in terms
    ]
    w = [weights.weight[t] for t in terms]
    total = sum(w) or 1.0
    weighted = sum(x for x, p in zip(w, present, strict=True) if p) / total
    missing = max((x for x, p in zip(w, present, strict=True) if not p), default=0.0)
    grams = {g for t in terms for g in bigrams(t)}
    found = sum(1 for g in grams if g in text) / len(grams) if grams else 0.0
    return Coverage(weighted, sum(present) / len(terms), missing / (max(w) or 1.0), found)


def collection_candidates(
    scope: ToolScope,
    collection: str,
    question: Question,
    hits: Sequence[Hit],
    weights: TermWeights | None = None,
    expanded: Sequence[str] = (),
    synonyms: Mapping[str, Sequence[str]] | None = None,
    *,
    config: CollectionConfig | None = None,
) -> list[Candidate]:
    """The features of ``hits``, one collection's search results for ``question``.
    ``expanded``: the queries a vague question was expanded to (the original first); a hit's
    coverage is its best over the queries it matched."""
    if not hits:
        return []
    if config is None:  # the caller's reading, else read once: axes, role, description
        config = _config(scope, collection)
    question = _about(collection, config, question)
    variants = {q: Question.of(q) for q in expanded[1:] if q != question.text}
    terms = list(dict.fromkeys([*question.terms, *(t for v in variants.values() for t in v.terms)]))
    weights = weights or TermWeights(scope, collection, terms)
    total = sum(weights.weight[t] for t in question.terms) or 1.0
    oov = sum(weights.weight[t] for t in question.terms if not weights.known[t]) / total
    axes = config.axes if config is not None else ()
    dense_axes = tuple(a.name for a in axes if a.mode is AxisMode.DENSE)
    n_axes = max(1, len(axes))
    role = role_of(config) if config is not None else KNOWLEDGE
    top = hits[0].score or 1.0
    second = hits[1].score if len(hits) > 1 else 0.0
    cosines = [max(d) for h in hits if (d := [h.axes[a].score for a in dense_axes if a in h.axes])]
    floor = min(cosines, default=0.0)
    n_terms = min(len(question.terms), 10) / 10
    out = []
    for rank, hit in enumerate(hits, 1):
        dense = [hit.axes[a].score for a in dense_axes if a in hit.axes]
        cosine = max(dense) if dense else (floor if cosines else None)
        cov = _coverage(question.terms, weights, hit, synonyms)
        for q in hit.matched_queries:
            if q in variants:
                other = _coverage(variants[q].terms, weights, hit, synonyms)
                cov = other if other.weighted > cov.weighted else cov
        features = Features(
            dense=cosine,
            coverage=cov.weighted,
            plain=cov.plain,
            oov=oov if question.terms else 0.0,
            rank=rank,
            relative=hit.score / top if top > 0 else 0.0,
            top_axes=sum(1 for s in hit.axes.values() if s.rank == 1) / n_axes,
            gap=(top - second) / top if rank == 1 and top > 0 else 0.0,
            missing_top=cov.missing_top,
            bigram=cov.bigram,
            spread=(cosine - floor) if cosine is not None else 0.0,
            n_terms=n_terms,
        )
        out.append(Candidate(collection=collection, role=role, hit=hit, features=features))
    return out


def _config(scope: ToolScope, collection: str) -> CollectionConfig | None:
    try:
        return scope.client.collection(collection).config
    except TansakuError:
        return None


def _about(collection: str, config: CollectionConfig | None, question: Question) -> Question:
    """``question`` without the words that name the collection itself (実験ノート in 「10月の実験の
    ノート」 over the lab notes, 日報 over the daily reports): they say where to look, not what to
    find. Taken from the collection's name and description; kept when nothing else is left."""
    if config is None:
        return question
    described = described_by(collection, config.description)
    rest = tuple(t for t in question.terms if t not in described)
    return replace(question, terms=rest) if rest and rest != question.terms else question


@dataclass(frozen=True)
class Retrieved:
    """What the scope's search found: the candidates of every collection, the term weights
    and the embedder of each collection searched, and why a collection could not be."""

    candidates: list[Candidate]
    weights: dict[str, dict[str, float]]
    embedders: dict[str, str]
    problems: dict[str, str]
    searched: list[str]
    period: str = ""
    """The days a date in the question named (「昨日」 → 2025-12-10〜2025-12-10), if any."""
    listing: bool = False
    """The question asks for the records of a period or a person and nothing else (「先月の
    実験ノートは?」): the candidates are those records, up to ``LIST_MAX`` per collection."""
    fusions: dict[str, FusionConfig] = field(default_factory=dict)
    """Each collection's fusion: the calibration fitted under it (``calibration.py``)."""


def _search(scope: ToolScope, name: str, question: Question, k: int, own: frozenset[str]) -> Any:
    """The collection's search for ``question``, kept to the store and person it names where
    the collection's records have those fields (a collection without them is searched
    whole), then to the metadata values it names among the hits (:func:`facet_conditions`;
    ``own``: the words that name the collection itself)."""
    result = _search_where(scope, name, question, k, named_conditions(question.text))
    facets = facet_conditions(question.text, result.hits, own)
    if not facets:
        return result
    where = (*named_conditions(question.text), *facets)
    try:
        narrowed = _run(scope, name, question, k, where)
    except InvalidRequest:
        return result
    return narrowed if narrowed.hits else result


def _run(scope: ToolScope, name: str, question: Question, k: int, where: tuple[str, ...]) -> Any:
    return scope.search(question.text, name, top_k=k, where=where)


def _search_where(
    scope: ToolScope, name: str, question: Question, k: int, where: tuple[str, ...]
) -> Any:
    for conditions in (where, ()) if where else ((),):
        try:
            return _run(scope, name, question, k, conditions)
        except InvalidRequest:
            if not conditions:
                raise
    raise AssertionError("unreachable")


def search_scope(
    scope: ToolScope,
    question: Question,
    names: Sequence[str] | None = None,
    *,
    per_collection: int = PER_COLLECTION,
) -> Retrieved:
    """Every collection of the scope (or ``names``) searched for ``question`` as the scope's
    team."""
    targets = list(dict.fromkeys(names if names is not None else scope.collections.values()))
    found: list[Candidate] = []
    problems: dict[str, str] = {}
    weights: dict[str, dict[str, float]] = {}
    embedders: dict[str, str] = {}
    fusions: dict[str, FusionConfig] = {}
    undated: set[str] = set()  # named a date the collection cannot filter by
    dated = False
    period = ""
    listing: list[bool] = []
    for name in targets:
        if not scope.client.has_collection(name):
            problems[name] = "まだ作られていません"
            continue
        config = _config(scope, name)  # read once: axes, role, description
        own = described_by(name, config.description) if config is not None else frozenset()
        named = bool(named_conditions(question.text))
        dates = question.remainder != question.text
        maybe = lists_only(question.text, question.terms, own) and (dates or named)
        k = max(per_collection, LIST_MAX) if maybe else per_collection  # a listing: one search
        try:
            result = _search(scope, name, question, k, own)
        except TansakuError as exc:
            problems[name] = str(exc)
            continue
        lists = maybe and (result.plan.date_range is not None or named)
        listing.append(lists)
        hits = result.hits if lists else result.hits[:per_collection]
        if result.plan.date_range is not None and not period:
            days = result.plan.date_range.to_dict()
            period = f"{days['from']}〜{days['to']}"
        dated = dated or result.plan.date_range is not None
        if result.plan.date_unused is not None:
            undated.add(name)
        asked = question.as_searched(result.plan.date_range is not None)
        expanded = result.plan.stage.expanded_queries
        terms = [*asked.terms, *(t for q in expanded[1:] for t in Question.of(q).terms)]
        w = TermWeights(scope, name, list(dict.fromkeys(terms)))
        weights[name] = w.weight
        embedders[name] = scope.client.collection(name).state.embedder
        if config is not None:  # the config read above; without it the default's calibration
            fusions[name] = config.fusion
        synonyms = {sp.term: sp.others for sp in result.plan.stage.synonyms}
        found.extend(
            collection_candidates(scope, name, asked, hits, w, expanded, synonyms, config=config)
        )
    if dated:  # 「12月10日のクレーム」: only collections that could keep to that day answer it
        found = [c for c in found if c.collection not in undated]
    searched = [n for n in targets if n not in problems]
    lists = bool(listing) and all(listing)
    return Retrieved(
        found, weights, embedders, problems, searched, period, listing=lists, fusions=fusions
    )


def roles_in(candidates: Sequence[Candidate]) -> Mapping[str, str]:
    """Collection → role of the candidates' collections."""
    return {c.collection: c.role for c in candidates}

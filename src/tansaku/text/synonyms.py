"""Synonym groups and 表記ゆれ, applied at query time (never in the analyzer).

Matching is on analyzer terms, not substrings: the group member 「場」 matches the term 場 but not
the 場 inside 「場合」. Keyword side: every matched group is OR-expanded (all members' terms join
the BM25 query). Dense side: one representative (the group's first member) is appended per matched
group, unless it is already in the query. Words that match no group are kept as they are.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any

from tansaku.errors import ConfigError
from tansaku.text.analyzer import Analyzer
from tansaku.text.normalize import normalize


@dataclass(frozen=True)
class SynonymMatch:
    term: str  # the member as written in the query (normalised)
    group: tuple[str, ...]

    @property
    def representative(self) -> str:
        return self.group[0]

    @property
    def others(self) -> tuple[str, ...]:
        return tuple(w for w in self.group if w != self.term)


@dataclass(frozen=True)
class SynonymExpansion:
    matches: tuple[SynonymMatch, ...] = ()
    keyword_terms: tuple[str, ...] = ()  # extra analyzer terms for the BM25 query
    dense_query: str = ""  # the query with representatives appended
    term_groups: tuple[tuple[str, ...], ...] = ()  # each matched group's analyzer terms

    def to_plan(self) -> dict[str, list[str]]:
        return {m.term: list(m.others) for m in self.matches}


@dataclass(frozen=True)
class _Analyzed:
    """The groups seen through one analyzer (built once, then reused by every query)."""

    index: dict[tuple[str, ...], list[tuple[str, int]]]  # member terms -> [(member, group)]
    lengths: tuple[int, ...]  # member term-lengths, longest first
    group_terms: tuple[tuple[str, ...], ...]  # every member's terms, per group


@dataclass(frozen=True)
class Synonyms:
    groups: tuple[tuple[str, ...], ...] = ()
    _analyzed: dict[int, _Analyzed] = field(default_factory=dict, compare=False, repr=False)

    def __bool__(self) -> bool:
        return bool(self.groups)

    def _analyze(self, analyzer: Analyzer) -> _Analyzed:
        cached = self._analyzed.get(id(analyzer))
        if cached is None:
            index: dict[tuple[str, ...], list[tuple[str, int]]] = {}
            group_terms: list[tuple[str, ...]] = []
            for gi, group in enumerate(self.groups):
                all_terms: list[str] = []
                for word in group:
                    terms = tuple(analyzer.terms(word))
                    if terms:
                        index.setdefault(terms, []).append((word, gi))
                        all_terms.extend(terms)
                group_terms.append(tuple(dict.fromkeys(all_terms)))
            lengths = tuple(sorted({len(k) for k in index}, reverse=True))
            cached = _Analyzed(index, lengths, tuple(group_terms))
            self._analyzed[id(analyzer)] = cached
        return cached

    def expand(self, query: str, analyzer: Analyzer) -> SynonymExpansion:
        """Find the groups whose members occur in ``query`` (as whole analyzer terms)."""
        if not self.groups:
            return SynonymExpansion(dense_query=query)
        qterms = analyzer.query_terms(query)
        seen = self._analyze(analyzer)
        matches: list[SynonymMatch] = []
        matched_groups: list[int] = []
        for n in seen.lengths:  # longest members first: 手札に戻す before 手札
            for i in range(len(qterms) - n + 1):
                for word, gi in seen.index.get(tuple(qterms[i : i + n]), []):
                    if gi not in matched_groups:
                        matched_groups.append(gi)
                        matches.append(SynonymMatch(word, self.groups[gi]))
        if not matches:
            return SynonymExpansion(dense_query=query)
        qset = set(qterms)
        extra = [t for gi in matched_groups for t in seen.group_terms[gi] if t not in qset]
        norm_q = normalize(query)
        reps = [m.representative for m in matches if normalize(m.representative) not in norm_q]
        dense = f"{query} {' '.join(dict.fromkeys(reps))}".strip() if reps else query
        groups = tuple(seen.group_terms[gi] for gi in matched_groups)
        return SynonymExpansion(tuple(matches), tuple(dict.fromkeys(extra)), dense, groups)


def _parse_groups(data: Any, source: str) -> list[tuple[str, ...]]:
    groups: list[tuple[str, ...]] = []
    items = data if isinstance(data, list) else None
    if items is None:
        raise ConfigError(f"{source}: 同義語は [[語, 語, ...], ...] のリストで書いてください")
    for i, g in enumerate(items, start=1):
        if not isinstance(g, list) or len(g) < 2 or not all(isinstance(w, str) and w for w in g):
            raise ConfigError(f"{source}: {i}番目のグループは2語以上の文字列のリストにしてください")
        groups.append(tuple(normalize(w) for w in g))
    return groups


@lru_cache(maxsize=1)
def _builtin() -> dict[str, tuple[tuple[str, ...], ...]]:
    import yaml

    text = resources.files("tansaku.text").joinpath("data/synonyms.yaml").read_text("utf-8")
    data = yaml.safe_load(text) or {}
    return {name: tuple(_parse_groups(g, f"synonyms.yaml:{name}")) for name, g in data.items()}


def builtin_domains() -> list[str]:
    return sorted(_builtin())


def load_synonyms(specs: Sequence[str] | str | None, *, base_dir: Path | None = None) -> Synonyms:
    """Build synonyms from built-in domain names and/or YAML files (a list of groups).

    A YAML file may hold a list of groups, or a mapping of domain -> list of groups.
    """
    if not specs:
        return Synonyms()
    if isinstance(specs, str):
        specs = [specs]
    groups: list[tuple[str, ...]] = []
    for spec in specs:
        if spec in _builtin():
            groups.extend(_builtin()[spec])
            continue
        path = Path(spec)
        if not path.is_absolute() and base_dir is not None:
            path = base_dir / path
        if not path.is_file():
            raise ConfigError(
                f"同義語「{spec}」が見つかりません。組み込みの辞書({', '.join(builtin_domains())})"
                "か YAML ファイルのパスを指定してください"
            )
        import yaml

        try:
            data = yaml.safe_load(path.read_text(encoding="utf-8"))
        except yaml.YAMLError as exc:
            raise ConfigError(f"同義語ファイル {path} の YAML が不正です: {exc}") from None
        if isinstance(data, dict):
            for name, g in data.items():
                groups.extend(_parse_groups(g, f"{path}:{name}"))
        else:
            groups.extend(_parse_groups(data, str(path)))
    return Synonyms(tuple(dict.fromkeys(groups)))


def synonyms_from_groups(groups: Iterable[Sequence[str]]) -> Synonyms:
    return Synonyms(tuple(_parse_groups([list(g) for g in groups], "groups")))

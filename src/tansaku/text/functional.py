"""Query-side term weights: the functional phrasing of a question counts less than its content.

A colloquial question carries a frame around its content: 「転入届を出したいのですが、どこに
行けばいいですか」 is 転入届 inside 「を出したいのですが、どこに行けばいいですか」. Over a FAQ
whose entries are questions, the frame's words (どこ, 行く, 良い, 出す) match every entry asked
the same way, and several of them together outweigh the one content term: another procedure's
entry ending 「…どこにいけばいいですか。」 ranks first. Here the query's morphemes are sorted by
part of speech (Sudachi) into content and function, and function gets ``weight`` (< 1) in the
query's BM25 vector and, per character, in its character bigrams; the document side is
untouched.

Functional: what the analyzer's stop filter drops (particles, auxiliary verbs, punctuation —
for the bigrams; BM25 never sees them), pronouns (どこ, 何), adverbs (どう), adnominals (この),
conjunctions, interjections, the generic verbs and adjectives of :data:`GENERIC_PREDICATES`
(為る, 行く, 居る, 有る, 成る, 出す, 下さる, 良い, 無い… — Sudachi marks them 非自立可能, but
also 去る of 「風とともに去りぬ」, which stays content), auxiliary-stem adjectivals (よう, そう),
and the words of question and request frames in :data:`FRAME_WORDS` (教える, 知る, 分かる,
宜しい, 如何, 事, 物, 為, 所…). A
term that also occurs as content in the query keeps weight 1; a query with no content term at
all is left unweighted (the frame is all it says).

>>> w = query_weights("転入届を出したいのですが、どこに行けばいいですか", get_analyzer(), 0.3)
>>> w.terms          # BM25 terms below 1
{'どこ': 0.3, '出す': 0.3, '良い': 0.3, '行く': 0.3}
>>> w.grams["転入"], w.grams["届を"], w.grams["どこ"]
(1.0, 0.3, 0.09)
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from itertools import pairwise

from tansaku.text.analyzer import Analyzer, Tagged

__all__ = ["FRAME_WORDS", "GENERIC_PREDICATES", "QueryWeights", "is_functional", "query_weights"]

#: Normalised forms of the generic verbs and adjectives that carry a question's frame rather
#: than its content (する, ある, いる, なる, いく, くる, できる, いい, ない, ほしい, the giving and
#: receiving verbs, the auxiliary uses of みる/おく/しまう, and 出す of 「届を出したい」).
GENERIC_PREDICATES: frozenset[str] = frozenset(
    {
        "為る",
        "有る",
        "居る",
        "成る",
        "行く",
        "来る",
        "出来る",
        "出す",
        "下さる",
        "頂く",
        "貰う",
        "呉れる",
        "遣る",
        "上げる",
        "見る",
        "置く",
        "おく",
        "仕舞う",
        "良い",
        "無い",
        "欲しい",
    }
)

#: Normalised forms (Sudachi ``normalized_form``) of the words of question and request frames
#: that Sudachi tags as ordinary content words: 〜について教えて, 〜を知りたい, 〜が分かりません,
#: よろしいでしょうか, いかがですか, formal nouns (こと, もの, ため, ところ, とき), and the verbs of
#: 〜について / 〜に関して / 〜に対して / 〜において / 〜による.
FRAME_WORDS: frozenset[str] = frozenset(
    {
        "教える",
        "知る",
        "分かる",
        "思う",
        "伺う",
        "尋ねる",
        "願う",
        "御願い",
        "宜しい",
        "如何",
        "困る",
        "事",
        "こと",
        "物",
        "為",
        "所",
        "時",
        "付く",
        "つく",
        "就く",
        "関する",
        "対する",
        "於く",
        "因る",
        "依る",
    }
)

_FUNCTIONAL_POS = frozenset({"代名詞", "副詞", "連体詞", "接続詞", "感動詞"})


def is_functional(m: Tagged) -> bool:
    """Whether one morpheme belongs to the phrasing of the question rather than its content."""
    if m.term is None:
        return True  # particles, auxiliary verbs, punctuation, whitespace
    head = m.pos[0] if m.pos else ""
    sub = m.pos[1] if len(m.pos) > 1 else ""
    if head in _FUNCTIONAL_POS:
        return True
    if head in ("動詞", "形容詞") and m.form in GENERIC_PREDICATES:
        return True
    if head == "形状詞" and sub == "助動詞語幹":
        return True
    return m.form in FRAME_WORDS


@dataclass(frozen=True)
class QueryWeights:
    """Weights below 1 for a query's functional BM25 terms and character bigrams; a term or
    bigram not listed weighs 1."""

    terms: Mapping[str, float] = field(default_factory=dict)
    grams: Mapping[str, float] = field(default_factory=dict)

    def term(self, term: str) -> float:
        return self.terms.get(term, 1.0)

    def __bool__(self) -> bool:
        return bool(self.terms) or any(w != 1.0 for w in self.grams.values())


def _gram_weights(text: str, mask: list[bool], weight: float) -> dict[str, float]:
    """Bigrams of ``text`` as :func:`tansaku.text.ngram.bigrams` makes them (lowercased,
    whitespace removed), each weighing the product of its two characters' weights: a
    functional character weighs ``weight``, a content one 1 — ``weight²`` inside the frame,
    ``weight`` where content meets it (届を), 1 inside content (a bigram occurring more than
    once keeps its largest weight). A frame word is one BM25 term but several bigrams, so the
    bigram side is weighed down per character."""
    chars: list[tuple[str, bool]] = []
    for c, functional in zip(text, mask, strict=True):
        if c.isspace():
            continue
        low = c.lower()
        chars.extend((x, functional) for x in low)
    out: dict[str, float] = {}
    for (a, fa), (b, fb) in pairwise(chars):
        gram = a + b
        w = (weight if fa else 1.0) * (weight if fb else 1.0)
        out[gram] = max(w, out.get(gram, 0.0))
    return out


def query_weights(text: str, analyzer: Analyzer, weight: float) -> QueryWeights:
    """Weights of ``text``'s functional terms and bigrams (``weight`` in [0, 1]; 1 weighs
    nothing down)."""
    if not 0.0 <= weight <= 1.0:
        raise ValueError(f"functional weight must be in [0, 1] (got {weight})")
    if weight == 1.0 or not text.strip():
        return QueryWeights()
    norm, tagged = analyzer.query_tagged(text)
    content: set[str] = set()
    functional: set[str] = set()
    mask = [False] * len(norm)
    for m in tagged:
        f = is_functional(m)
        if m.term is not None:
            (functional if f else content).add(m.term)
        if f:
            for i in range(m.begin, min(m.end, len(norm))):
                mask[i] = True
    if not content:
        return QueryWeights()
    return QueryWeights(
        terms={t: weight for t in sorted(functional - content)},
        grams=_gram_weights(norm, mask, weight),
    )

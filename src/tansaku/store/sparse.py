"""BM25 as sparse vectors: the document side carries the term-frequency part, the engine the IDF.

For a document of length ``dl`` (terms) in a field whose average length is ``avgdl``, term ``t``
occurring ``tf`` times gets the value::

    tf * (k1 + 1) / (tf + k1 * (1 - b + b * dl / avgdl))

A query is the set of its distinct terms with value 1. With ``Modifier.Idf`` the engine multiplies
each matched term by ``ln(1 + (N - df + 0.5) / (df + 0.5))``, so the dot product is exactly
Lucene's BM25 (without the query-term-frequency factor).
"""

from __future__ import annotations

import hashlib
from array import array
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache


@dataclass(frozen=True)
class SparseVec:
    indices: tuple[int, ...]
    values: tuple[float, ...]

    def __len__(self) -> int:
        return len(self.indices)


@lru_cache(maxsize=1 << 18)
def term_id(term: str) -> int:
    """Stable 31-bit id of a term (blake2b); collisions are vanishingly rare at our vocabularies.
    Cached: vocabularies repeat (a corpus of 100k chunks has a few 100k distinct terms)."""
    digest = hashlib.blake2b(term.encode("utf-8"), digest_size=4).digest()
    return int.from_bytes(digest, "little") & 0x7FFFFFFF


def term_ids(terms: Iterable[str]) -> array[int]:
    """The ids of a document's terms, in order, as a compact array (4 bytes a term: an ingest
    of a million records keeps these rather than the term strings)."""
    return array("I", map(term_id, terms))


def doc_vector(
    terms: Sequence[str] | array[int], *, k1: float, b: float, avgdl: float
) -> SparseVec:
    """The BM25 term-frequency part of every distinct term of a document (terms, or their ids
    from :func:`term_ids`)."""
    if not terms:
        return SparseVec((), ())
    dl = len(terms)
    norm = k1 * (1.0 - b + b * dl / max(avgdl, 1e-9))
    ids = terms if isinstance(terms, array) else map(term_id, terms)
    tf = Counter(ids)  # two terms sharing an id (a hash collision) add up
    idx = sorted(tf)
    kp1 = k1 + 1.0
    return SparseVec(tuple(idx), tuple(tf[i] * kp1 / (tf[i] + norm) for i in idx))


def bigram_scale(grams: Iterable[str], weights: Mapping[str, float] | None) -> dict[int, float]:
    """Term id -> weight of the query bigrams ``weights`` lists (a bigram's id shared with
    another keeps the larger weight); empty when there are no weights."""
    if not weights:
        return {}
    out: dict[int, float] = {}
    for g in grams:
        i = term_id(g)
        out[i] = max(out.get(i, 0.0), weights.get(g, 1.0))
    return out


def query_vector(terms: Iterable[str], weights: Mapping[str, float] | None = None) -> SparseVec:
    """Each distinct query term once, value 1.0 — or its weight in ``weights`` (terms not
    listed weigh 1; two terms sharing an id keep the larger)."""
    if not weights:
        idx = sorted({term_id(t) for t in terms})
        return SparseVec(tuple(idx), tuple(1.0 for _ in idx))
    value: dict[int, float] = {}
    for t in terms:
        i = term_id(t)
        value[i] = max(value.get(i, 0.0), weights.get(t, 1.0))
    idx = sorted(value)
    return SparseVec(tuple(idx), tuple(value[i] for i in idx))

"""Sentence units and character bigrams: the tokenisation of the ``bigram`` search axis.

A record is cut into sentences; each sentence, prefixed with the record's title for context,
becomes one *unit*. A unit is indexed as the character bigrams of its normalised text, and a
record scores as its best unit (see ``tansaku.store.units``). Character bigrams do not depend on
the morphological analyzer, so they still match where Sudachi splits a compound or an unknown
word differently in the query and the document; scoring one sentence at a time rewards the
question's words occurring *together*, which separates neighbouring paragraphs of one article.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from tansaku.text.normalize import normalize

_SENTENCE_END = re.compile(r"(?<=[。！？!?])|\n")
_SPACE = re.compile(r"\s+")
MAX_UNIT_CHARS = 200  # longer "sentences" (lists, tables without punctuation) are windowed
MIN_UNIT_CHARS = 2


def sentences(text: str) -> list[str]:
    """Sentences of ``text`` (split after 。！？!? and at line breaks), long ones windowed."""
    out: list[str] = []
    for raw in _SENTENCE_END.split(text):
        s = raw.strip()
        if len(s) < MIN_UNIT_CHARS:
            continue
        for start in range(0, len(s), MAX_UNIT_CHARS):
            piece = s[start : start + MAX_UNIT_CHARS]
            if len(piece) >= MIN_UNIT_CHARS:
                out.append(piece)
    return out


def unit_texts(text: str, metadata: Mapping[str, Any] | None = None) -> list[str]:
    """The units of one record: ``title + "\\n" + sentence`` per sentence.

    The title comes from ``metadata["title"]``; a line of the text equal to the title is not a
    sentence of its own. A record without sentences (e.g. only a title) is one unit.
    """
    title = str((metadata or {}).get("title") or "").strip()
    sents = [s for s in sentences(text) if s != title]
    if not sents:
        whole = text.strip() or title
        return [whole] if whole else []
    return [f"{title}\n{s}" if title else s for s in sents]


def bigrams(text: str) -> list[str]:
    """Character bigrams of the normalised, lower-cased text with whitespace removed.

    A single remaining character is its own term; an empty text has none.
    """
    s = _SPACE.sub("", normalize(text).lower())
    if len(s) < 2:
        return [s] if s else []
    return [s[i : i + 2] for i in range(len(s) - 1)]

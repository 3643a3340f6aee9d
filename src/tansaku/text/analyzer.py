"""Japanese analyzer: normalize → protect codes → Sudachi → part-of-speech stop filter.

The same analyzer runs at index time and at query time, so a term matches only if both sides
produced it. Terms are Sudachi ``normalized_form`` values, lowercased: ``行い`` → ``行う``,
``ｻｰﾊﾞｰ`` → ``サーバー``, ``二千`` → ``2000``.

Codes and ids (``STR-0001``, ``abc-123``, ``v2.0``, ``a4``, ``iphone15``) come out as one term.
After normalisation every run matching ``[a-z0-9]+(?:[-_./][a-z0-9]+)*`` that holds a separator
or mixes letters and digits is a code, except a number followed by a unit (``100kg``). Sudachi
still sees the whole text (so the words around a code keep their context), and the morphemes
inside a code's span are replaced by the code. Pure letter or digit runs (``it``, ``10122110``)
and quantities are left to Sudachi, which keeps the runs whole and splits ``100`` ``kg``.

The Sudachi dictionary loads once per process, on first use (about 0.2-0.5 s). Sudachi
tokenizers are not thread-safe, so each thread gets its own.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from enum import StrEnum
from functools import cache, lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tansaku.config import enum_choice
from tansaku.errors import ConfigError
from tansaku.text.normalize import normalize

if TYPE_CHECKING:
    import sudachipy

__all__ = ["DEFAULT_STOP_POS", "Analyzer", "SplitMode", "Tagged", "TermForm", "get_analyzer"]

#: Part-of-speech prefixes whose tokens are dropped. ``記号`` only as ``記号.一般``: Sudachi tags
#: single letters such as ``x`` in ``x線`` and ``α`` as ``記号.文字``, and those carry meaning.
DEFAULT_STOP_POS: tuple[tuple[str, ...], ...] = (
    ("助詞",),
    ("助動詞",),
    ("補助記号",),
    ("記号", "一般"),
    ("空白",),
)

#: Sudachi rejects longer input (bytes of UTF-8 per ``tokenize`` call).
SUDACHI_MAX_BYTES = 49149

_CODE = re.compile(r"[a-z0-9]+(?:[-_./][a-z0-9]+)*")
_CODE_SEPARATOR = re.compile(r"[-_./]")
_HAS_DIGIT = re.compile(r"[0-9]")
_HAS_LETTER = re.compile(r"[a-z]")
_QUANTITY = re.compile(r"[0-9]+[a-z]+$")
_SENTENCE = re.compile(r"[^。!?]*(?:[。!?]+ ?|$)")
_HIRAGANA_1 = re.compile(r"[\u3041-\u309f]")


def _option_error(option: str, value: object) -> Callable[[str], ConfigError]:
    return lambda valid: ConfigError(f"{option} は {valid} のいずれかです（指定値: {value!r}）")


class SplitMode(StrEnum):
    """Sudachi split mode: A short units (東京/都), B middle, C long (東京都, 東京スカイツリー)."""

    A = "A"
    B = "B"
    C = "C"

    @classmethod
    def from_str(cls, value: str) -> SplitMode:
        return enum_choice(cls, str(value).upper(), _option_error("split_mode", value))


class TermForm(StrEnum):
    """Which Sudachi form becomes the term (always lowercased)."""

    NORMALIZED = "normalized"
    SURFACE = "surface"
    DICTIONARY = "dictionary"

    @classmethod
    def from_str(cls, value: str) -> TermForm:
        return enum_choice(cls, value, _option_error("form", value))


QUERY_ANALYSES_KEPT = 512
"""Queries whose analysis an :class:`Analyzer` keeps (:meth:`Analyzer.query_terms`): ~2.5 MiB
for 512 questions of jsquad-ir's length."""
QUERY_KEPT_MAX_CHARS = 1000
"""Longer texts are analysed each time (what is kept stays small)."""

_DICT_LOCK = threading.Lock()
_DICTIONARY: sudachipy.Dictionary | None = None


def _dictionary() -> sudachipy.Dictionary:
    """The process-wide Sudachi dictionary (sudachidict-core), loaded on first call; the pages
    of its file that loading read are handed back (:func:`_release_dictionary_pages`)."""
    global _DICTIONARY
    if _DICTIONARY is None:
        with _DICT_LOCK:
            if _DICTIONARY is None:
                import sudachipy

                dictionary = sudachipy.Dictionary(dict="core")
                _release_dictionary_pages()
                _DICTIONARY = dictionary
    return _DICTIONARY


def _release_dictionary_pages() -> None:
    """Sudachi reads ~72 MiB of its mapped dictionary while loading it and an analysis touches
    a few MiB: hand the rest back (:mod:`tansaku.residency`; the pages stay in the page cache)."""
    from tansaku.residency import release_file_pages

    folder = dictionary_folder()
    if folder is not None:
        release_file_pages(folder)


def dictionary_folder() -> Path | None:
    """The folder of the Sudachi dictionary's files (sudachidict-core's package), if installed."""
    from importlib.util import find_spec

    spec = find_spec("sudachidict_core")
    return None if spec is None or spec.origin is None else Path(spec.origin).parent


def _stop_pos_ids(stop_pos: tuple[tuple[str, ...], ...]) -> frozenset[int]:
    """Ids of every POS in the dictionary that starts with one of ``stop_pos``."""
    dic = _dictionary()
    ids = set()
    pos_id = 0
    while (pos := dic.pos_of(pos_id)) is not None:
        if any(pos[: len(prefix)] == prefix for prefix in stop_pos):
            ids.add(pos_id)
        pos_id += 1
    return frozenset(ids)


def _is_code(run: str) -> bool:
    """A run is a code if it has a separator or mixes letters and digits, but a number followed
    by a unit (``100kg``, the ``000mm`` of ``1,000mm``) is left to Sudachi (``100`` ``kg``)."""
    if _CODE_SEPARATOR.search(run):
        return True
    return (
        bool(_HAS_LETTER.search(run)) and bool(_HAS_DIGIT.search(run)) and not _QUANTITY.match(run)
    )


def _chunks(text: str, max_bytes: int = SUDACHI_MAX_BYTES) -> Iterator[str]:
    """Split ``text`` into pieces under ``max_bytes`` UTF-8 bytes, at sentence ends if possible."""
    if len(text) * 4 <= max_bytes or len(text.encode("utf-8")) <= max_bytes:
        yield text
        return
    buf: list[str] = []
    size = 0
    for sentence in _SENTENCE.findall(text):
        n = len(sentence.encode("utf-8"))
        if size + n > max_bytes and buf:
            yield "".join(buf)
            buf, size = [], 0
        if n > max_bytes:
            yield from _hard_split(sentence, max_bytes)
            continue
        buf.append(sentence)
        size += n
    if buf:
        yield "".join(buf)


def _hard_split(text: str, max_bytes: int) -> Iterator[str]:
    """Cut a sentence longer than ``max_bytes``: at the last space of each piece if there is one."""
    max_chars = max_bytes // 4  # a character is at most 4 bytes, so a piece always fits
    while len(text) > max_chars:
        cut = text.rfind(" ", max_chars // 2, max_chars) + 1 or max_chars
        yield text[:cut]
        text = text[cut:]
    if text:
        yield text


@dataclass(frozen=True, slots=True)
class Tagged:
    """One morpheme of a normalised text (:meth:`Analyzer.tagged`)."""

    begin: int
    end: int
    pos: tuple[str, ...]
    form: str
    """Sudachi ``normalized_form``, lowercased."""
    term: str | None
    """The search term it becomes (``None`` when the stop filters drop it)."""


class Analyzer:
    """Turns Japanese (or mixed) text into search terms.

    >>> get_analyzer().terms("東京都に住んでいます")
    ['東京', '都', '住む', '居る']

    ``split_mode`` is Sudachi's unit (``"A"``, ``"B"`` or ``"C"``). The keyword options exist for
    measurement (``bench/analyzer_modes.py``); the defaults are the measured best:
    ``form`` is the Sudachi form used as the term, ``protect_codes`` keeps codes whole,
    ``drop_single_hiragana`` drops one-character hiragana tokens that survive the POS filter
    (``い`` of ``している``), ``stop_pos`` lists the POS prefixes to drop (``()`` keeps all).
    """

    def __init__(
        self,
        split_mode: str = "A",
        *,
        form: str = "normalized",
        protect_codes: bool = True,
        drop_single_hiragana: bool = False,
        stop_pos: tuple[tuple[str, ...], ...] = DEFAULT_STOP_POS,
    ) -> None:
        self.split_mode = SplitMode.from_str(split_mode)
        self.form = TermForm.from_str(form)
        self.protect_codes = protect_codes
        self.drop_single_hiragana = drop_single_hiragana
        self.stop_pos = tuple(tuple(p) for p in stop_pos)
        self._local = threading.local()
        self._stop_ids: frozenset[int] | None = None
        # One search reads its question's analysis in several steps (synonyms, BM25 terms,
        # functional weights, suggestions) and the same question comes back from other users
        # and from the agent: the query side keeps its analyses (bounded, thread-safe).
        self._query_terms = lru_cache(maxsize=QUERY_ANALYSES_KEPT)(self._terms_tuple)
        self._query_tagged = lru_cache(maxsize=QUERY_ANALYSES_KEPT)(self._tagged_tuple)

    def __repr__(self) -> str:
        return (
            f"Analyzer(split_mode={self.split_mode.value!r}, form={self.form.value!r}, "
            f"protect_codes={self.protect_codes}, "
            f"drop_single_hiragana={self.drop_single_hiragana}, stop_pos={self.stop_pos!r})"
        )

    def warm_up(self) -> None:
        """Load the dictionary and this thread's tokenizer now instead of on first use."""
        self._tokenizer()

    def terms(self, text: str) -> list[str]:
        """Terms of ``text`` in order, duplicates kept (BM25 needs the term frequencies)."""
        text = normalize(text)
        if not text:
            return []
        out: list[str] = []
        for chunk in _chunks(text):
            self._analyse(chunk, out)
        return out

    def query_terms(self, text: str) -> list[str]:
        """Terms of a query: the same analysis as :meth:`terms`, so both sides match; the last
        :data:`QUERY_ANALYSES_KEPT` queries' terms are kept (up to
        :data:`QUERY_KEPT_MAX_CHARS` characters)."""
        if len(text) > QUERY_KEPT_MAX_CHARS:
            return self.terms(text)
        return list(self._query_terms(text))

    def query_tagged(self, text: str) -> tuple[str, tuple[Tagged, ...]]:
        """:meth:`tagged` of a query, kept like :meth:`query_terms`."""
        if len(text) > QUERY_KEPT_MAX_CHARS:
            return self._tagged_tuple(text)
        return self._query_tagged(text)

    def _terms_tuple(self, text: str) -> tuple[str, ...]:
        return tuple(self.terms(text))

    def _tagged_tuple(self, text: str) -> tuple[str, tuple[Tagged, ...]]:
        norm, tagged = self.tagged(text)
        return norm, tuple(tagged)

    def tagged(self, text: str) -> tuple[str, list[Tagged]]:
        """``text`` normalised, and its morphemes in order: span in that text, part of speech,
        Sudachi ``normalized_form`` (lowercased) and the term :meth:`terms` makes of it. Codes
        are not treated apart here (their morphemes are nouns and symbols)."""
        text = normalize(text)
        out: list[Tagged] = []
        offset = 0
        for chunk in _chunks(text):
            tokenizer, _ = self._tokenizer()
            for m in tokenizer.tokenize(chunk):
                out.append(
                    Tagged(
                        begin=offset + m.begin(),
                        end=offset + m.end(),
                        pos=tuple(m.part_of_speech()),
                        form=m.normalized_form().lower(),
                        term=self._term(m),
                    )
                )
            offset += len(chunk)
        return text, out

    def _tokenizer(self) -> tuple[Any, Any]:
        """This thread's Sudachi tokenizer and the morpheme list it reuses between calls."""
        state = getattr(self._local, "state", None)
        if state is None:
            if self._stop_ids is None:
                self._stop_ids = _stop_pos_ids(self.stop_pos)
            tokenizer = _dictionary().tokenizer(self.split_mode.value)
            state = self._local.state = (tokenizer, tokenizer.tokenize(""))
        return state

    def _term(self, morpheme: Any) -> str | None:
        """The term of one morpheme, or ``None`` if the stop filters drop it."""
        if morpheme.part_of_speech_id() in self._stop_ids:  # type: ignore[operator]
            return None
        if self.drop_single_hiragana:
            surface = morpheme.surface()
            if len(surface) == 1 and _HIRAGANA_1.match(surface):
                return None
        if self.form is TermForm.NORMALIZED:
            term = morpheme.normalized_form()
        elif self.form is TermForm.SURFACE:
            term = morpheme.surface()
        else:
            term = morpheme.dictionary_form()
        return term.lower() or None

    def _analyse(self, text: str, out: list[str]) -> None:
        """Append the terms of ``text`` (normalized, under Sudachi's size limit) to ``out``."""
        tokenizer, morphemes = self._tokenizer()
        morphemes = tokenizer.tokenize(text, out=morphemes)
        spans = (
            [m.span() for m in _CODE.finditer(text) if _is_code(m.group())]
            if self.protect_codes
            else []
        )
        if not spans:
            out.extend(t for m in morphemes if (t := self._term(m)) is not None)
            return
        span_i, emitted = 0, -1
        for m in morphemes:
            begin, end = m.begin(), m.end()
            inside_code = False
            # Sudachi covers every character, so each code overlaps at least one morpheme: emit
            # the code at the first one and drop the morphemes that lie wholly inside it.
            while span_i < len(spans) and spans[span_i][0] < end:
                start, stop = spans[span_i]
                if stop > begin:
                    if emitted < span_i:
                        out.append(text[start:stop])
                        emitted = span_i
                    inside_code = inside_code or (start <= begin and end <= stop)
                if stop > end:
                    break
                span_i += 1
            if not inside_code and (term := self._term(m)) is not None:
                out.append(term)


@cache
def _cached(split_mode: SplitMode) -> Analyzer:
    return Analyzer(split_mode.value)


def get_analyzer(split_mode: str = "A") -> Analyzer:
    """The shared default-option :class:`Analyzer` for ``split_mode``, one per process."""
    return _cached(SplitMode.from_str(split_mode))

"""Character-level normalisation applied to every text before analysis.

Steps, in order:

1. Unicode NFKC: full-width ASCII becomes half-width (``ＩＴ`` → ``IT``), half-width katakana
   becomes full-width (``ｻｰﾊﾞｰ`` → ``サーバー``), compatibility forms are unfolded (``①`` → ``1``).
2. ASCII letters are lowercased; zero-width characters (ZWSP, ZWNJ, ZWJ, word joiner, BOM) are
   removed.
3. Long-vowel marks: a run of dash-like characters (``- ‐ ‑ ‒ – — ― − ー``) directly after a
   katakana becomes one ``ー`` (``サ-バ-`` → ``サーバー``) unless an ASCII letter or digit
   follows the run (``タイプ-A`` keeps its hyphen); any run of ``ー`` collapses to one. Tildes
   (``~ 〜``) are left alone: in business text they mark ranges (``東京〜大阪``) far more often
   than long vowels.
4. A dash-like character between two ASCII letters or digits becomes ``-``, so a code typed
   with an en dash or a minus sign (``STR–0001``) matches the one typed with a hyphen.
5. Whitespace runs (including the ideographic space and newlines) become one space; the ends
   are stripped.

The function is idempotent: ``normalize(normalize(s)) == normalize(s)``.
"""

from __future__ import annotations

import re
import unicodedata

__all__ = ["normalize"]

_DASHES = "\u2010\u2011\u2012\u2013\u2014\u2015\u2212"  # ‐ ‑ ‒ – — ― −
_KATAKANA = "\u30a1-\u30fa\u30fc"  # ァ..ヺ and ー

# Regex guards before each rewrite: str.translate and re.sub are slow on long non-ASCII text.
_ZERO_WIDTH = re.compile("[\u200b\u200c\u200d\u2060\ufeff]")
_UPPER_ASCII = re.compile("[A-Z]+")

_ANY_DASH = re.compile(rf"[-{_DASHES}ー]")
# Possessive: a dash run followed by a letter or digit (タイプ-A) is left whole, not cut short.
_LONG_VOWEL = re.compile(rf"(?<=[{_KATAKANA}])[-{_DASHES}ー]++(?![a-z0-9])")
_LONG_VOWEL_RUN = re.compile("ー{2,}")
_CODE_DASH = re.compile(rf"(?<=[a-z0-9])[{_DASHES}](?=[a-z0-9])")
_SPACES = re.compile(r"\s+")


def _lower(match: re.Match[str]) -> str:
    return match.group().lower()


def normalize(text: str) -> str:
    """Return ``text`` in the canonical form used at index and query time.

    >>> normalize("ｻｰﾊﾞｰの　ＩＴ担当\\n STR‐0001")
    'サーバーの it担当 str-0001'
    """
    if not text:
        return ""
    # Zero-width characters go before NFKC so that what they separated can still compose.
    if _ZERO_WIDTH.search(text):
        text = _ZERO_WIDTH.sub("", text)
    text = unicodedata.normalize("NFKC", text)
    if _UPPER_ASCII.search(text):
        text = _UPPER_ASCII.sub(_lower, text)
    if _ANY_DASH.search(text):
        text = _LONG_VOWEL.sub("ー", text)
        text = _LONG_VOWEL_RUN.sub("ー", text)
        text = _CODE_DASH.sub("-", text)
    return _SPACES.sub(" ", text).strip()

"""Limits of a search request, checked when the request is built (before anything is read).

Every check raises :class:`~tansaku.errors.InvalidRequest` (or its subclass
:class:`~tansaku.errors.QueryTooLong`) with the bad value and what is allowed, so the CLI exits
with 2 and an HTTP front end answers 400.

Why these numbers (docs/configuration.md, "Limits"):

* ``MAX_QUERY_CHARS = 1000``: the query is embedded whole (the e5 embedder slides 512-token
  windows over longer texts instead of truncating them), at about 1.1 ms of CPU per character
  on one core, and an expanded query embeds every variant: 10,000 characters took 19 s of CPU.
  1,000 characters is a pasted paragraph (a complaint, a lab-note step; jsquad-ir questions
  average ~30), a little more than one 512-token window of Japanese, and costs ~1 s at worst.
* ``MAX_TOP_K = 1000``: every hit is read with its text and rendered; more is an export, not a
  search. The staged retry may double it internally.
* ``MAX_CANDIDATES = 10_000``: candidates per axis before fusion (default 100).
"""

from __future__ import annotations

import math
import re

from tansaku.errors import ConfigError, InvalidRequest, QueryTooLong
from tansaku.workspace import validate_name

MAX_QUERY_CHARS = 1_000
MAX_TOP_K = 1_000
MAX_CANDIDATES = 10_000

# Unicode category Cc (C0, DEL, C1) but tab, newline and carriage return
_CONTROL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")


def control_characters(text: str) -> list[str]:
    """The control characters (C0, DEL, C1: Unicode category ``Cc``) in ``text`` other than
    tab, newline and carriage return, in order of appearance, each once."""
    return list(dict.fromkeys(_CONTROL.findall(text)))


def check_query(query: str, max_chars: int = MAX_QUERY_CHARS) -> str:
    """The query, if it is not blank, at most ``max_chars`` characters and has no control
    characters.

    Control characters are rejected rather than stripped: ESC or BEL in a query is a paste
    accident or an attack on a terminal, and searching for what is left would answer a
    question nobody asked. Tab and newline count as spaces."""
    if max_chars < 1:
        raise InvalidRequest(f"max_query_chars は 1 以上にしてください(現在: {max_chars})")
    if not query.strip():
        raise InvalidRequest("検索クエリが空です。探したい言葉を入れてください")
    if len(query) > max_chars:
        raise QueryTooLong(len(query), max_chars)
    bad = control_characters(query)
    if bad:
        codes = ", ".join(f"U+{ord(c):04X}" for c in bad)
        raise InvalidRequest(
            f"検索クエリに制御文字({codes})が含まれています。取り除いてから検索してください"
        )
    return query


def check_top_k(top_k: int | None) -> int | None:
    if top_k is not None and not 1 <= top_k <= MAX_TOP_K:
        raise InvalidRequest(f"top_k は 1〜{MAX_TOP_K:,} にしてください(現在: {top_k})")
    return top_k


def check_candidates(candidates: int | None) -> int | None:
    if candidates is not None and not 1 <= candidates <= MAX_CANDIDATES:
        raise InvalidRequest(
            f"candidates は 1〜{MAX_CANDIDATES:,} にしてください(現在: {candidates})"
        )
    return candidates


def check_min_score(min_score: float | None) -> float | None:
    """A finite number: ``nan`` compares false with every score (0 hits, silently) and
    ``inf`` excludes everything."""
    if min_score is not None and not math.isfinite(min_score):
        raise InvalidRequest(
            f"min_score は有限の数にしてください(現在: {min_score})。"
            "スコアは 0〜1 程度(RRF ではもっと小さい値)です"
        )
    return min_score


def check_team(team: str) -> str:
    """A team name is a payload value and a folder name: the workspace's name rule."""
    try:
        return validate_name(team, "チーム名")
    except ConfigError as exc:
        raise InvalidRequest(str(exc)) from None

"""Character-based chunking for Japanese text (no spaces to split on).

A chunk ends at the best boundary that still keeps it within ``size`` characters, by tier:

1. a paragraph break (a blank line);
2. a sentence end: after ``。！？!?``, a newline, or an English ``.`` followed by whitespace
   (``2. 材料`` is not one); closing brackets and quotes such as ``」』）`` stay with their
   sentence;
3. a clause break: after ``、，,；;``;
4. a space (mixed English text);
5. a hard cut at ``size`` characters (one sentence longer than a chunk).

A tier is used when its last boundary fills at least half of the chunk; otherwise the best
boundary found in any tier is taken, and a hard cut only when there is none. The next chunk
starts at the earliest sentence start (else clause, else space) inside the last ``overlap``
characters of the previous one, so consecutive chunks share whole sentences where possible
(about ``overlap`` characters, never more); inside one long sentence the overlap is exactly
``overlap`` characters.

Spans index the original text (leading and trailing whitespace trimmed), so loaders can map a
chunk back to its page or section.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right

_SENTENCE_ENDS = frozenset("。！？!?\n")
_CLOSERS = frozenset("」』）)】〕］]〉》\"'”’")
_CLAUSE_BREAKS = frozenset("、，,；;")
_SPACES = frozenset(" \t\u3000")


def _boundary_tiers(text: str) -> tuple[list[int], list[int], list[int], list[int]]:
    """Positions (exclusive end offsets) after paragraph breaks, sentence ends, clause
    breaks and spaces."""
    paragraph: list[int] = []
    sentence: list[int] = []
    clause: list[int] = []
    space: list[int] = []
    n = len(text)
    i = 0
    while i < n:
        ch = text[i]
        is_end = ch in _SENTENCE_ENDS or (
            ch == "."
            and i + 1 < n
            and text[i + 1].isspace()
            and i > 0
            and text[i - 1].isascii()
            and text[i - 1].isalpha()
        )
        if is_end:
            j = i + 1
            while j < n and text[j] in _CLOSERS:
                j += 1
            sentence.append(j)
            if ch == "\n" and i > 0 and text[i - 1] == "\n":
                paragraph.append(j)
            i = j
            continue
        if ch in _CLAUSE_BREAKS:
            clause.append(i + 1)
        elif ch in _SPACES:
            space.append(i + 1)
        i += 1
    return paragraph, sentence, clause, space


def _last_in(positions: list[int], lo: int, hi: int) -> int | None:
    """The largest position p with lo < p <= hi (positions are sorted)."""
    i = bisect_right(positions, hi)
    if i and positions[i - 1] > lo:
        return positions[i - 1]
    return None


def _first_in(positions: list[int], lo: int, hi: int) -> int | None:
    """The smallest position p with lo <= p < hi."""
    i = bisect_left(positions, lo)
    if i < len(positions) and positions[i] < hi:
        return positions[i]
    return None


def _choose_end(tiers: tuple[list[int], ...], start: int, floor: int, size: int) -> int:
    limit = start + size
    min_fill = start + max(1, size // 2)
    found = [_last_in(t, floor, limit) for t in tiers]
    for b in found:
        if b is not None and b >= min_fill:
            return b
    for b in found:
        if b is not None:
            return b
    return limit


def _choose_next_start(tiers: tuple[list[int], ...], start: int, end: int, overlap: int) -> int:
    if overlap <= 0:
        return end
    lo = max(start + 1, end - overlap)
    if lo >= end:
        return end
    for tier in tiers:
        b = _first_in(tier, lo, end)
        if b is not None:
            return b
    return lo if end - overlap > start else end


def _validate(size: int, overlap: int) -> None:
    if size <= 0:
        raise ValueError(f"chunk size must be greater than 0. Currently, the size is {size}")
    if not 0 <= overlap < size:
        raise ValueError(
            f"chunk overlap must be >= 0 and < size ({size}). Currently, the overlap is {overlap}"
        )


def _trim(text: str, start: int, end: int) -> tuple[int, int]:
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return start, end


def chunk_spans(text: str, size: int, overlap: int) -> list[tuple[int, int]]:
    """``(start, end)`` offsets of the chunks of ``text``; see the module docstring.

    Each span is at most ``size`` characters, never empty or whitespace-only, trimmed of
    surrounding whitespace. Raises ``ValueError`` unless ``size > 0`` and
    ``0 <= overlap < size``.
    """
    _validate(size, overlap)
    first, last = _trim(text, 0, len(text))
    if first == last:
        return []
    if last - first <= size:
        return [(first, last)]
    tiers = _boundary_tiers(text)
    spans: list[tuple[int, int]] = []
    start, prev_end = first, first
    while True:
        if last - start <= size:
            end = last
        else:
            end = _choose_end(tiers, start, max(start, prev_end), size)
        span = _trim(text, start, end)
        if span[0] < span[1]:
            spans.append(span)
        if end >= last:
            return spans
        start, prev_end = _choose_next_start(tiers[1:], start, end, overlap), end


def chunk_text(text: str, size: int, overlap: int) -> list[str]:
    """Split ``text`` into chunks of at most ``size`` characters overlapping by ~``overlap``.

    Cuts prefer sentence ends (``。！？!?`` and newlines), then ``、``, then a hard cut;
    deterministic; a text that fits is returned whole (stripped); blank text gives ``[]``.

    >>> chunk_text("今日は晴れ。明日は雨。", size=8, overlap=0)
    ['今日は晴れ。', '明日は雨。']
    """
    return [text[s:e] for s, e in chunk_spans(text, size, overlap)]


__all__ = ["chunk_spans", "chunk_text"]

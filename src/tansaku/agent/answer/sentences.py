"""The sentences an answer quotes: cut from the best candidates, never a heading, a bare list
item, a table row or a materials block, scored with the question's weighted terms, their
character bigrams and the candidate's calibrated probability; for a record shaped as a
question and its answer (an FAQ), the answer part.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

from tansaku.text import get_analyzer
from tansaku.text.ngram import bigrams
from tansaku.text.normalize import normalize
from tansaku.tools.scope.candidates import Candidate

MAX_QUOTES = 3
MAX_CHARS = 160
"""Quotes stop before this many characters in all."""
LONG_SENTENCE = 120
"""A longer sentence is quoted as the window of its clauses around the question's words."""
_MARK = re.compile(r"^\s*(?:[-*+・•●○◆■□▪]|\(?\d{1,3}[.)．）](?!\d)|[①-⑳])\s*")  # not 4.0 mL
_META_LINE = re.compile(r"^[^\s:：。、]{1,12}[:：]\s*[^。]{0,40}$")
_HEADING = re.compile(r"^\s*#{1,6}\s")
_NUMBERED = re.compile(r"^(?:第?\d+(?:\.\d+)*[章節]?|[０-９]+)\s*[^\s。、!?！？]{1,20}$")
"""A numbered heading: 「1.3 身だしなみ」, 「第2章 食中毒予防」."""
_SECTION = re.compile(r"^[^\s。、,.:：!?！？()（）]{1,8}$")
"""A bare short line (材料, 方法, 結果) heads a section when a document's fields are joined."""
_MATERIALS = re.compile(r"材料|試薬|使用機器|使用器具|準備物|持ち物|用意するもの")
_QA_LABELS = re.compile(r"^\s*(質問|問い|問|question|q|faq|よくある質問)\s*[:：.]", re.IGNORECASE)
_ANSWER_LABELS = re.compile(r"^\s*(回答|答え|答|解答|answer|a)\s*[:：.]\s*", re.IGNORECASE)


_ASKS_AMOUNT = re.compile(
    r"何(度|℃|層|分|秒|時間|回|%|％|個|枚|円|人|件|日|年|月|倍|キロ|グラム|ml|mL)|いくつ|いくら|"
    r"どれくらい|どのくらい|どれほど|何ml|量は|温度は|濃度は|ph|時間は|期限|いつ|何時"
)
_NUMBER = re.compile(r"\d")
_ASKS_UNIT = re.compile(r"何(度|℃|層|分|秒|時間|回|%|％|個|枚|円|人|件|日|倍|キロ|グラム|ml)")
_SAME_UNIT = {"度": "度|°c|℃", "℃": "度|°c|℃", "%": "%|％", "％": "%|％"}
_ASKS_OF = re.compile(r"([a-z]{2,}|[ァ-ヴー]{2,})(?:は|を)?(?:いくつ|いくら|何)")
_ASKS_BEST = re.compile(r"一番|いちばん|最も|もっとも|最高|最適|ベスト")
_SAYS_BEST = re.compile(r"最も|もっとも|一番|最適|最高|最良|良好|適して|よかった|良かった")
ANSWER_TYPE_BONUS = 0.35
"""A sentence holding what the question asks for (a number for いくつ・何度・いつ, a best
for 一番・最も) gains this much: the restatement of the topic holds the question's words too."""


def _answer_type(question: str) -> list[re.Pattern[str]]:
    norm = normalize(question).lower()
    wanted = []
    if _ASKS_AMOUNT.search(norm):
        wanted.append(_NUMBER)
        if unit := _ASKS_UNIT.search(norm):  # 何層 → 「5層」, not any number (「1層あたり」)
            units = _SAME_UNIT.get(unit.group(1), re.escape(unit.group(1)))
            wanted.append(re.compile(r"\d\s*(?:" + units + ")", re.IGNORECASE))
        if topic := _ASKS_OF.search(norm):  # 「pHはいくつ」 → 「pH 4.2」
            wanted.append(re.compile(re.escape(topic.group(1)) + r"[^。]{0,8}?\d", re.IGNORECASE))
    if _ASKS_BEST.search(norm):
        wanted.append(_SAYS_BEST)
    return wanted


@dataclass(frozen=True)
class Quote:
    text: str
    candidate: Candidate
    score: float
    position: int = 0
    heading: str = ""
    """The heading the sentence stands under (「1.3 身だしなみ」), when the text has one."""


_ASKS_FACT = re.compile(r"誰|だれ|何|なに|どこ|いつ|どれ|どの|どんな")
_ASKS_NAME = re.compile(r"呼ぶ|呼ば|という|名前|名称|称|何と")
RESTATES = 0.6
"""A sentence holding this share of the question's bigrams says back what was asked."""


def _with_context(best: Quote, sentences: Sequence[str], question: str) -> Quote:
    """For a question asking who/what/where, a best sentence that only restates the question
    (「…場合がある。」 for 「…場合を何と呼ぶ?」) is quoted with the sentence that names the thing —
    the next one for a name (これを…と呼ぶ), the one before otherwise."""
    if not question or not _ASKS_FACT.search(question):
        return best
    asked = set(bigrams(question))
    own = set(bigrams(best.text))
    if not own or not asked or len(own & asked) / len(asked) < RESTATES:
        return best
    step = 1 if _ASKS_NAME.search(question) else -1
    other = best.position + step
    if not 0 <= other < len(sentences) or len(best.text) + len(sentences[other]) > MAX_CHARS:
        return best
    joined = f"{best.text}{sentences[other]}" if step > 0 else f"{sentences[other]}{best.text}"
    return replace(best, text=joined)


def _clean(line: str) -> str:
    line = _MARK.sub("", line).strip()
    return line.replace("**", "").strip()


_OPEN, _CLOSE = "「『（(【", "」』）)】"
MAX_QUOTED = 200
_ENDS = "。！？!?"


def split_sentences(line: str) -> list[str]:
    """``line`` cut after 。！？!? — never inside 「…」 or (…): a quotation of two sentences
    is one sentence with its speaker (「…発生した。…証明された」とした。)."""
    out: list[str] = []
    depth, start = 0, 0
    for i, ch in enumerate(line):
        if ch in _OPEN:
            depth += 1
        elif ch in _CLOSE:
            depth = max(0, depth - 1)
        elif ch in _ENDS and (depth == 0 or i - start > MAX_QUOTED):  # an unclosed bracket
            out.append(line[start : i + 1])
            start = i + 1
    if start < len(line):
        out.append(line[start:])
    return out


def sentences_of(text: str, title: str = "") -> list[str]:
    """The quotable sentences of ``text`` in order (headings, bare list items, table rows,
    ``key: value`` lines and the lines of a materials section left out)."""
    return [s for s, _ in sections_of(text, title)]


def sections_of(text: str, title: str = "") -> list[tuple[str, str]]:
    """:func:`sentences_of` with the heading each sentence stands under (「1.3 身だしなみ」 for
    「帽子からは髪の毛が出ないように…」): the heading says what the sentence is about."""
    out: list[tuple[str, str]] = []
    in_materials = False
    heading = ""
    for line in text.splitlines():
        stripped = line.strip()
        if not stripped:
            continue
        if _HEADING.match(stripped) or _SECTION.match(stripped) or _NUMBERED.match(stripped):
            in_materials = bool(_MATERIALS.search(stripped))
            heading = stripped.lstrip("#").strip()
            continue
        if in_materials or stripped.startswith("|"):
            continue
        listed = bool(_MARK.match(stripped))
        for piece in split_sentences(stripped):
            s = _clean(piece)
            if len(s) < 8 or s == title or _META_LINE.match(s):
                continue
            if listed and not s.endswith(("。", "！", "？", "!", "?", ")", "）")) and len(s) < 30:
                continue  # a bare list item: a reagent, an amount, a keyword
            out.append((s, heading))
    return out


def faq_answer(candidate: Candidate, siblings: Mapping[str, str]) -> str | None:
    """The answer part of a record shaped as a question and its answer, or None.

    A ``qa_question`` record answers with its ``qa_answer`` sibling (``siblings``: record id →
    text); a record with ``question``/``answer`` metadata with the answer; a table row with a
    回答/answer column with that column; a record whose title is a question with its text."""
    record = candidate.hit.record
    if record.field.startswith("qa_question"):
        return siblings.get(record.id.replace("qa_question", "qa_answer", 1))
    meta = record.metadata
    if meta.get("question") and meta.get("answer"):
        return str(meta["answer"])
    lines = record.text.splitlines()
    for i, line in enumerate(lines):
        m = _ANSWER_LABELS.match(line)
        if m and any(_QA_LABELS.match(x) for x in lines):
            rest = [line[m.end() :]]
            for nxt in lines[i + 1 :]:
                if re.match(r"^[^\s:：]{1,12}[:：]", nxt):
                    break
                rest.append(nxt)
            return "\n".join(rest).strip() or None
    title = str(meta.get("title") or "").strip()
    if title.endswith(("？", "?", "か。", "か")) and record.field not in ("title",):
        return record.text
    return None


def _weights(terms: Sequence[str], weights: Mapping[str, float]) -> float:
    return sum(weights.get(t, 1.0) for t in terms) or 1.0


def _window(sentence: str, terms: Sequence[str]) -> str:
    """A long sentence cut to its clauses (at 、) around the question's words."""
    if len(sentence) <= LONG_SENTENCE:
        return sentence
    clauses = re.split(r"(?<=、)", sentence)
    norm = [normalize(c).lower() for c in clauses]
    hits = [sum(1 for t in terms if t in n) for n in norm]
    best = max(range(len(clauses)), key=lambda i: (hits[i], -i))
    lo = hi = best
    while True:
        grown = False
        for j in (hi + 1, lo - 1):
            if 0 <= j < len(clauses):
                size = sum(len(c) for c in clauses[min(lo, j) : max(hi, j) + 1])
                if size <= LONG_SENTENCE:
                    lo, hi, grown = min(lo, j), max(hi, j), True
        if not grown:
            break
    text = "".join(clauses[lo : hi + 1]).strip()
    if len(text) > LONG_SENTENCE + 40:  # one clause longer than the window: keep it whole
        text = text[: LONG_SENTENCE + 40] + "…"
    return ("…" if lo > 0 else "") + text + ("…" if hi < len(clauses) - 1 else "")


def pick(
    candidates: Sequence[Candidate],
    terms: Sequence[str],
    weights: Mapping[str, float],
    *,
    texts: Mapping[str, str] | None = None,
    question: str = "",
) -> list[Quote]:
    """The best 1–3 quotes from ``candidates`` (calibrated, best first). ``texts``: record id →
    the text to quote instead of the record's (the answer part of an FAQ, the whole document);
    ``question`` gives the kind of answer asked for."""
    analyzer = get_analyzer()
    wanted = _answer_type(question)
    total = _weights(terms, weights)
    qgrams = set(bigrams("".join(terms))) if terms else set()
    scored: list[Quote] = []
    sentences: dict[int, list[str]] = {}
    for c in candidates:
        title = c.title
        text = (texts or {}).get(c.hit.record.id) or c.hit.record.text
        parts = sections_of(text, title)
        sentences[id(c)] = [s for s, _ in parts]
        for position, (s, heading) in enumerate(parts):
            norm = normalize(f"{heading} {s}").lower()
            own = set(analyzer.terms(f"{heading} {s}"))
            found = [t for t in terms if t in own or t in norm]
            lexical = sum(weights.get(t, 1.0) for t in found) / total
            grams = len(qgrams & set(bigrams(s))) / len(qgrams) if qgrams else 0.0
            typed = sum(ANSWER_TYPE_BONUS for p in wanted if p.search(s))
            score = lexical + 0.3 * grams + 0.6 * c.probability + typed - 0.01 * position
            window = _window(s, found or terms)
            quote = Quote(text=window, candidate=c, score=score, heading=heading)
            scored.append(replace(quote, position=position))
    scored.sort(key=lambda q: -q.score)
    if not scored:
        return []
    best = _with_context(scored[0], sentences[id(scored[0].candidate)], question)
    out = [best]
    length = len(best.text)
    for q in scored[1:]:
        if len(out) >= MAX_QUOTES or q.score < 0.8 * best.score:
            break
        if q.text in {o.text for o in out} or length + len(q.text) > MAX_CHARS:
            continue
        out.append(q)
        length += len(q.text)
    return out

"""Questions for ``bench/serve_load.py``: fixed lists for the cached case, and a stream of
questions that no server over the workspace has seen (the case where every query is embedded).
New questions are built from the demo's own data — clauses of the generated daily reports and
bulletin posts since 2024-01-01 (「冷凍庫が故障を起こし」「卵が欠品となり」…), a store or a part
of a shop, a period (昨日・先週・先月…) and a frame — in a shuffled order.

A search embeds its question without the period (the period becomes a date filter), so two
questions that differ only in their period share one vector, and the server's persistent
embedding cache answers the second. Each question therefore has a text without its period
that no other question has (:func:`content_key`), and carries one period drawn at random:
44,652 searches and 9,516 questions to ask. Every question handed out is appended to
``used-<kind>.txt`` in the workspace's ``bench/`` folder, and a later run over the same
workspace skips those, so a question is new to the server (and to its embedding cache) in
every run; ``bench/serve_load.py`` counts the vectors each run adds to that cache.
"""

from __future__ import annotations

import random
import re
import threading
from collections.abc import Iterator
from datetime import date
from pathlib import Path

from tansaku.demo.reports import generate

SEARCHES = [
    "冷蔵庫が壊れた",
    "先月のクレーム",
    "昨日の問題",
    "新宿店の売上",
    "食中毒の予防",
    "レジの釣り銭",
    "エアコンの故障",
    "予約の取り違え",
    "雨の日の客数",
    "アレルギーの問い合わせ",
    "忘年会の予約",
    "釣り銭の過不足",
    "料理が冷めていた",
    "スタッフの欠勤",
    "仕込み量を増やす",
    "先週の横浜店",
    "手洗いの手順",
    "提供が遅いというクレーム",
    "駐車場の案内",
    "食材の発注ミス",
]
ASKS = [
    "昨日の問題を教えて",
    "先月のクレームは何件ありましたか?",
    "冷蔵庫が故障したときの対応は?",
    "手洗いの手順は?",
    "新宿店の先週の売上は?",
    "アレルギーのお客様への対応は?",
    "料理が遅いと言われたらどうする?",
    "渋谷店で最近あったトラブルは?",
]
PERIODS = ("", "昨日の", "先週の", "先月の", "今月の", "最近の", "10月の", "11月の", "去年の")
AREAS = ("厨房", "ホール", "レジ", "倉庫", "バックヤード", "駐車場", "客席", "入口")
"""Parts of a shop, asked about as stores are."""
SEARCH_FRAMES = (
    "{p}{s}{c}",
    "{c} {s}",
    "{p}{c}",
    "{s}{p}「{c}」",
    "{c}という報告",
    "{p}{c}件",
    "{s}の{p}{c}について",
    "{c}({p}{s})",
    "{p}{s}で{c}日",
    "{s}の{c}の件",
    "{p}{s}で{c}",
    "{c}の対応({s})",
    "{s}{p}{c}の記録",
    "{p}{c}の報告 {s}",
    "{s}で{c}の原因",
    "{c}があった{s}",
    "{p}{s}の日報「{c}」",
    "{s}について{p}{c}",
)
ASK_FRAMES = (
    "{p}{s}で「{c}」ということはありましたか?",
    "「{c}」ときはどう対応すればいい?",
    "{p}{s}の「{c}」について教えて",
    "{s}で{p}「{c}」件は何回ありましたか?",
    "「{c}」の原因は何ですか?",
    "{p}「{c}」という日報を探して",
)
_SPLIT = re.compile(r"[。、!?!?\n]")


def clauses(since: date = date(2024, 1, 1), now: date = date(2025, 12, 11)) -> list[str]:
    """Distinct clauses (5–26 characters, no digits) of the demo's reports and posts."""
    data = generate(now, start=since)
    texts = [r.content for r in data.daily_reports]
    texts += [p.title for p in data.bbs_posts] + [p.body for p in data.bbs_posts]
    texts += [c.body for c in data.bbs_comments]
    out = {
        c.strip()
        for t in texts
        for c in _SPLIT.split(t)
        if 5 <= len(c.strip()) <= 26 and not re.search(r"\d", c)
    }
    return sorted(out)


def stores() -> list[str]:
    data = generate(date(2025, 12, 11), start=date(2025, 12, 1))
    return sorted({r.store for r in data.daily_reports})


def _fill(frame: str, p: str, s: str, c: str) -> str:
    """``frame`` with period ``p``, place ``s`` and clause ``c``, spaces collapsed."""
    return " ".join(frame.format(p=p, s=s, c=c).split())


def content_key(frame: str, s: str, c: str) -> str:
    """The question without its period: what its search embeds."""
    return _fill(frame, "", s, c)


def _all(frames: tuple[str, ...], seed: int) -> list[str]:
    """One question for each distinct :func:`content_key`, with a random period, shuffled; a
    frame with a place takes each store and part of a shop, one without it none."""
    rng = random.Random(seed)
    places, said = [*stores(), *AREAS], clauses()
    candidates = sorted(
        (content_key(f, s, c), f, s, c)
        for f in frames
        for s in (places if "{s}" in f else [""])
        for c in said
    )
    first: dict[str, tuple[str, str, str]] = {}
    for key, frame, place, clause in candidates:
        first.setdefault(key, (frame, place, clause))
    out = [_fill(f, rng.choice(PERIODS), s, c) for f, s, c in first.values()]
    rng.shuffle(out)
    return out


class NewQuestions:
    """A thread-safe supply of questions never handed out before over this workspace (see the
    module docstring); ``kind``: ``search`` or ``ask``."""

    def __init__(self, home: Path, kind: str, *, seed: int = 22) -> None:
        self.path = home / "bench" / f"used-{kind}.txt"
        self.path.parent.mkdir(parents=True, exist_ok=True)
        used = set()
        if self.path.exists():
            used = set(self.path.read_text(encoding="utf-8").splitlines())
        pool = _all(SEARCH_FRAMES if kind == "search" else ASK_FRAMES, seed)
        self._left: Iterator[str] = (q for q in pool if q not in used)
        self._lock = threading.Lock()
        self._fh = self.path.open("a", encoding="utf-8")
        self.handed_out = 0

    def __call__(self) -> str:
        with self._lock:
            try:
                q = next(self._left)
            except StopIteration:
                raise SystemExit(f"no new questions left; remove {self.path}") from None
            self._fh.write(q + "\n")
            self.handed_out += 1
            return q

    def close(self) -> None:
        with self._lock:
            self._fh.close()

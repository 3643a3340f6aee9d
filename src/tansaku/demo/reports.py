"""Seeded generator of Japanese restaurant daily reports (日報) and bulletin-board posts (掲示板).

Relative to one day: ``generate(now)`` covers the 1st of the month two months before ``now``
(Asia/Tokyo) up to yesterday (``tansaku.demo.days``), so 「昨日」, 「先週」 and 「先月」 always
have data. Deterministic: every report, post and comment comes from its own
``random.Random`` seeded with ``(seed, date, store)`` or ``(seed, week)``, so a day's data does
not depend on the window around it (building on a later day adds the new days and keeps the
others as they were) and nothing reads a clock except ``now=None``. Four stores (新宿店, 渋谷店,
池袋店, 横浜店), a few authors each, one report per store on ~90% of days. Sales follow
weekday/weekend, holidays, weather and December (忘年会・クリスマス). Wording is drawn from pools
with synonyms (クレーム/苦情/ご指摘, トラブル/不具合/故障) so that search has to bridge vocabulary.

Scripted facts (the sample searches need data) fall on days relative to ``now``: yesterday
新宿店 has a claim about lukewarm food, 渋谷店 a broken refrigerator (and a bulletin post),
池袋店 a register fault with a claim; the day before 新宿店 a claim about slow service; last
week 横浜店 a walk-in refrigerator fault (and a post); last month 新宿店 a reservation claim.

``python -m tansaku.demo.reports OUT_DIR [YYYY-MM-DD]`` writes ``daily_reports.csv`` and
``reports.jsonl`` for that day (default: today in Tokyo).
"""

from __future__ import annotations

import random
import sys
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from pathlib import Path

from tansaku.demo import report_phrases as phr
from tansaku.demo.days import demo_window, is_holiday, scripted_days
from tansaku.demo.report_io import (
    DAILY_REPORT_COLUMNS,
    BbsComment,
    BbsPost,
    DailyReport,
    ReportSet,
    report_text,
    write_daily_reports_csv,
    write_reports_jsonl,
)

__all__ = [
    "AUTHORS",
    "DAILY_REPORT_COLUMNS",
    "DEFAULT_SEED",
    "STORES",
    "BbsComment",
    "BbsPost",
    "DailyReport",
    "ReportSet",
    "generate",
    "report_text",
    "write_daily_reports_csv",
    "write_reports_jsonl",
]

DEFAULT_SEED = 20251001

STORES: tuple[tuple[int, str], ...] = ((1, "新宿店"), (2, "渋谷店"), (3, "池袋店"), (4, "横浜店"))
AUTHORS: dict[str, tuple[str, ...]] = {
    "新宿店": ("田中太郎", "佐藤花子", "鈴木一郎"),
    "渋谷店": ("高橋美咲", "伊藤健太", "渡辺由美"),
    "池袋店": ("山本大輔", "中村あゆみ", "小林誠"),
    "横浜店": ("加藤直樹", "吉田さくら", "山田浩二"),
}
HEAD_OFFICE = ("松本玲奈", "井上修")  # 本部 (area manager, operations)
_BASE_SALES = {1: 520_000, 2: 450_000, 3: 400_000, 4: 480_000}
_AVG_SPEND = {1: 3300, 2: 3000, 3: 2800, 4: 3400}
_DOW_FACTOR = (0.85, 0.88, 0.92, 0.95, 1.15, 1.35, 1.2)  # Monday .. Sunday
_WEATHER = (
    ("晴れ", 1.03, 40),
    ("曇り", 1.0, 28),
    ("晴れ時々曇り", 1.02, 12),
    ("雨", 0.88, 15),
    ("大雨", 0.78, 5),
)
_SKIP_RATE = 0.09
_CLAIM_RATE = 0.12
_CASH_RATE = 0.07

CLAIM_WORDS = ("クレーム", "苦情", "ご指摘", "お叱り")
TROUBLE_WORDS = ("トラブル", "不具合", "故障", "事故")


# --- scripted facts -------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Script:
    author: str
    trouble: str = ""
    claim_content: str = ""


def _scripts(today: date) -> dict[tuple[date, int], _Script]:
    days = scripted_days(today)
    return {
        (getattr(days, when), store_id): _Script(author, trouble, claim)
        for when, store_id, author, trouble, claim in phr.SCRIPT_REPORTS
    }


def _scripted_posts(today: date) -> list[tuple[date, str, str, str, str]]:
    days = scripted_days(today)
    return [(getattr(days, when), *rest) for when, *rest in phr.SCRIPT_POSTS]


# --- generation ----------------------------------------------------------------------------------


def _pick(rng: random.Random, pool: tuple[str, ...]) -> str:
    return pool[rng.randrange(len(pool))]


def _weather(rng: random.Random) -> tuple[str, float]:
    name, factor, _ = rng.choices(_WEATHER, weights=[w for _, _, w in _WEATHER])[0]
    return name, factor


def _season(day: date) -> float:
    factor = {10: 1.0, 11: 1.03, 12: 1.12}.get(day.month, 1.0)
    if day.month == 12 and 18 <= day.day <= 25:
        factor *= 1.15
    if day.month == 12 and day.day >= 29:
        factor *= 0.8
    return factor


def _fill(rng: random.Random, template: str, **known: object) -> str:
    values: dict[str, object] = {
        "item": _pick(rng, phr.ITEMS),
        "equipment": _pick(rng, phr.EQUIPMENT),
        "fault": _pick(rng, phr.FAULT),
        "n": rng.randint(1, 4),
        "peak": _pick(rng, phr.PEAKS),
        "slot": _pick(rng, ("ランチ帯", "ディナー帯", "夕方", "開店直後")),
        "word": _pick(rng, CLAIM_WORDS),
    }
    values.update(known)
    return template.format(**values)


def _rng(seed: int, *parts: object) -> random.Random:
    """A generator of its own for one report, week or post: ``Random(str)`` hashes the string
    with SHA-512, so it is the same in every process (no PYTHONHASHSEED)."""
    return random.Random(":".join(str(p) for p in (seed, *parts)))


def _report(
    rng: random.Random, day: date, store_id: int, store: str, script: _Script | None
) -> DailyReport:
    weather, w_factor = _weather(rng)
    dow = 6 if is_holiday(day) else day.weekday()
    expected = _BASE_SALES[store_id] * _DOW_FACTOR[dow] * _season(day)
    sales = int(expected * w_factor * rng.gauss(1.0, 0.06))
    customers = max(1, round(sales / (_AVG_SPEND[store_id] * rng.gauss(1.0, 0.05))))
    ratio = sales / expected
    flow = next(label for threshold, label in phr.FLOW if ratio >= threshold)
    author = script.author if script else _pick(rng, AUTHORS[store])

    claim = rng.random() < _CLAIM_RATE
    claim_content = ""
    if claim:
        reply = _pick(rng, phr.CLAIM_REPLY)
        claim_content = _fill(rng, _pick(rng, phr.CLAIMS)) + reply
    cash = 0
    if rng.random() < _CASH_RATE:
        cash = rng.choice((-1, -1, 1)) * rng.choice((100, 200, 500, 1000, 1500, 3000, 5000))
    trouble = _fill(rng, _pick(rng, phr.TROUBLE)) if rng.random() < 0.3 else ""
    if script:
        trouble = script.trouble or trouble
        claim = bool(script.claim_content)
        claim_content = script.claim_content

    # 本日の状況, 良かった点, 問題点 (trouble, claim, cash), 明日への申し送り: 2-5 sentences.
    situation = _fill(
        rng, _pick(rng, phr.SITUATION), weather=weather, flow=flow, sales=sales, customers=customers
    )
    good = [_pick(rng, phr.GOOD)] if rng.random() < 0.55 else []
    problems = [trouble] if trouble else []
    if claim:
        problems.append(_fill(rng, _pick(rng, phr.CLAIM_NOTE)))
    if cash:
        kind = "過剰" if cash > 0 else "不足"
        problems.append(_fill(rng, _pick(rng, phr.CASH_NOTE), amount=abs(cash), kind=kind))
    handover = _fill(rng, _pick(rng, phr.HANDOVER))
    wants_handover = rng.random() < 0.6 or not (good or problems)
    if len(good) + len(problems) + wants_handover > 4:
        good = []
    sentences = [situation, *good, *problems, *([handover] if wants_handover else [])]
    return DailyReport(
        report_id=f"DR-{day:%Y%m%d}-{store_id:02d}",
        date=day.isoformat(),
        store=store,
        store_id=store_id,
        author=author,
        weather=weather,
        sales=sales,
        customers=customers,
        claim=claim,
        claim_content=claim_content,
        cash_difference=cash,
        content="".join(sentences),
    )


def _comments(rng: random.Random, post: BbsPost) -> list[BbsComment]:
    """0–3 comments on the day of the post up to 2 days later (the caller drops later ones)."""
    count = rng.choice((0, 1, 1, 2, 2, 3))
    offsets = sorted(rng.randint(0, 2) for _ in range(count))
    out: list[BbsComment] = []
    for i, offset in enumerate(offsets, start=1):
        if rng.random() < 0.3:
            store, author, body = "本部", _pick(rng, HEAD_OFFICE), _pick(rng, phr.HQ_COMMENTS)
        else:
            store = _pick(rng, tuple(s for _, s in STORES if s != post.store))
            author, body = _pick(rng, AUTHORS[store]), _pick(rng, phr.COMMENTS[post.category])
        day = date.fromisoformat(post.date) + timedelta(days=offset)
        comment_id = f"CMT-{post.post_id.removeprefix('BBS-')}-{i}"
        out.append(BbsComment(comment_id, post.post_id, day.isoformat(), store, author, body))
    return out


_Planned = tuple[date, str, str, str, str, str]  # day, store, author, category, title, body


def _week_posts(seed: int, monday: date) -> list[_Planned]:
    """2–4 posts on days of the Monday–Sunday week, drawn over the whole week (so a week's posts
    do not change when the window cuts it)."""
    rng = _rng(seed, "bbs", monday.isoformat())
    days = [monday + timedelta(days=i) for i in range(7)]
    planned: list[_Planned] = []
    for day in sorted(rng.sample(days, rng.randint(2, 4))):
        category = rng.choices(
            [c for c, _ in phr.CATEGORY_WEIGHTS], weights=[w for _, w in phr.CATEGORY_WEIGHTS]
        )[0]
        months = phr.POST_MONTHS
        pool = [p for p in phr.POSTS[category] if day.month in months.get(p[0], (day.month,))]
        title, body = pool[rng.randrange(len(pool))]
        store = _pick(rng, tuple(s for _, s in STORES))
        planned.append((day, store, _pick(rng, AUTHORS[store]), category, title, body))
    return planned


def _posts(
    seed: int, start: date, end: date, today: date
) -> tuple[list[BbsPost], list[BbsComment]]:
    planned: list[_Planned] = []
    monday = start - timedelta(days=start.weekday())
    while monday <= end:
        planned.extend(p for p in _week_posts(seed, monday) if start <= p[0] <= end)
        monday += timedelta(days=7)
    for day, store, author, title, body in _scripted_posts(today):
        if start <= day <= end:  # after the day's generated posts: their ids do not move
            planned.append((day, store, author, "トラブル報告", title, body))
    planned.sort(key=lambda p: p[0])  # stable: same-day posts keep their order
    posts: list[BbsPost] = []
    comments: list[BbsComment] = []
    per_day: dict[date, int] = {}
    for day, store, author, category, title, body in planned:
        per_day[day] = per_day.get(day, 0) + 1
        post_id = f"BBS-{day:%Y%m%d}-{per_day[day]}"
        post = BbsPost(post_id, day.isoformat(), store, author, title, body, category)
        posts.append(post)
        rng = _rng(seed, "comments", post_id, title)
        comments.extend(c for c in _comments(rng, post) if c.date <= end.isoformat())
    return posts, comments


def generate(
    now: datetime | date | None = None,
    *,
    seed: int = DEFAULT_SEED,
    start: date | None = None,
    end: date | None = None,
) -> ReportSet:
    """Daily reports for every store on most days of the demo window of ``now`` (default: the
    current Asia/Tokyo time) plus bulletin posts and comments.

    ``start``/``end`` narrow or move the range (a day's data is the same whatever the range);
    the scripted facts stay relative to ``now``.
    """
    window = demo_window(now)
    start = window.start if start is None else start
    end = window.end if end is None else end
    if end < start:
        raise ValueError(f"end ({end}) must not be before start ({start})")
    scripts = _scripts(window.today)
    reports: list[DailyReport] = []
    day = start
    while day <= end:
        for store_id, store in STORES:
            rng = _rng(seed, "report", day.isoformat(), store_id)
            script = scripts.get((day, store_id))
            skipped = rng.random() < _SKIP_RATE
            if skipped and script is None:
                continue
            reports.append(_report(rng, day, store_id, store, script))
        day += timedelta(days=1)
    posts, comments = _posts(seed, start, end, window.today)
    return ReportSet(tuple(reports), tuple(posts), tuple(comments))


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    out = Path(args[0] if args else ".")
    now = date.fromisoformat(args[1]) if len(args) > 1 else None
    window = demo_window(now)
    data = generate(window.today)
    write_daily_reports_csv(data.daily_reports, out / "daily_reports.csv")
    write_reports_jsonl(data, out / "reports.jsonl")
    print(
        f"{out}: {window.start}〜{window.end} 日報 {len(data.daily_reports)} 件, "
        f"掲示板投稿 {len(data.bbs_posts)} 件, コメント {len(data.bbs_comments)} 件"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Seeded generator of Japanese restaurant daily reports (日報) and bulletin-board posts (掲示板).

Deterministic: the same ``seed`` and date range always give the same data (stdlib
``random.Random``, no clock, no global state). Four stores (新宿店, 渋谷店, 池袋店, 横浜店), a few
authors each, one report per store on ~90% of days. Sales follow weekday/weekend, holiday,
weather and December (忘年会・クリスマス) patterns. Wording is drawn from pools with synonyms
(クレーム/苦情/ご指摘, トラブル/不具合/故障) so that search has to bridge vocabulary.

Scripted facts (the designs' examples need data): on 2025-12-09 新宿店 has a claim about slow
service; on 2025-12-10 新宿店 has a claim about lukewarm food, 渋谷店 a broken refrigerator,
池袋店 a register fault with a claim, and a bulletin post reports the refrigerator trouble.

``python -m tansaku.demo.reports OUT_DIR`` writes ``daily_reports.csv`` and ``reports.jsonl``.
"""

from __future__ import annotations

import csv
import json
import random
import sys
from dataclasses import asdict, dataclass, fields
from datetime import date, timedelta
from pathlib import Path

from tansaku.demo import report_phrases as phr

DEFAULT_SEED = 20251001
DEFAULT_START = date(2025, 10, 1)
DEFAULT_END = date(2025, 12, 31)

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
_HOLIDAYS = {date(2025, 10, 13), date(2025, 11, 3), date(2025, 11, 24)}
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


@dataclass(frozen=True)
class DailyReport:
    report_id: str
    date: str
    store: str
    store_id: int
    author: str
    weather: str
    sales: int
    customers: int
    claim: bool
    claim_content: str
    cash_difference: int
    content: str


@dataclass(frozen=True)
class BbsPost:
    post_id: str
    date: str
    store: str
    author: str
    title: str
    body: str
    category: str  # 連絡 / 共有 / トラブル報告 / 改善提案


@dataclass(frozen=True)
class BbsComment:
    comment_id: str
    post_id: str
    date: str
    store: str  # the commenter's store, or 本部
    author: str
    body: str


@dataclass(frozen=True)
class ReportSet:
    daily_reports: tuple[DailyReport, ...]
    bbs_posts: tuple[BbsPost, ...]
    bbs_comments: tuple[BbsComment, ...]


# --- wording pools -------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Script:
    author: str
    trouble: str = ""
    claim_content: str = ""


_SCRIPT: dict[tuple[date, int], _Script] = {
    (date(2025, 12, 9), 1): _Script(
        "田中太郎",
        trouble="ディナー帯にオーダーが集中し、料理の提供が大幅に遅れました。",
        claim_content="お客様から料理の提供が遅いとのクレームをいただいた。30分以上お待たせして"
        "しまった。店長から謝罪し、ドリンクをサービスした。",
    ),
    (date(2025, 12, 10), 1): _Script(
        "田中太郎",
        trouble="保温庫の設定温度が下がっていたため、調整しました。",
        claim_content="お客様から料理の温度が低いとのクレームをいただいた。ランチのハンバーグが"
        "ぬるかったとのこと。すぐに作り直して提供し、謝罪した。",
    ),
    (date(2025, 12, 10), 2): _Script(
        "高橋美咲",
        trouble="朝の仕込み時に冷蔵庫の故障が発覚し、庫内温度が上がっていたため一部食材を"
        "廃棄しました。業者に修理を依頼済みです。",
    ),
    (date(2025, 12, 10), 3): _Script(
        "山本大輔",
        trouble="夕方にレジの不具合が発生し、会計を手作業で行いました。",
        claim_content="レジの不具合で会計に時間がかかり、お客様から苦情をいただいた。お詫びして"
        "次回使えるクーポンをお渡しした。",
    ),
}
_SCRIPTED_POST = (
    date(2025, 12, 10),
    "渋谷店",
    "高橋美咲",
    "冷蔵庫の故障について",
    "本日朝、厨房の冷蔵庫が故障し、庫内温度が12℃まで上がっていました。該当食材は廃棄し、"
    "修理業者に連絡済みです。明日午前に修理予定のため、冷蔵品の仕込みは最小限にします。",
)


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


def _report(rng: random.Random, day: date, store_id: int, store: str) -> DailyReport:
    script = _SCRIPT.get((day, store_id))
    weather, w_factor = _weather(rng)
    dow = 6 if day in _HOLIDAYS else day.weekday()
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


def _comments(rng: random.Random, post: BbsPost, end: date, start_no: int) -> list[BbsComment]:
    count = rng.choice((0, 1, 1, 2, 2, 3))
    offsets = sorted(rng.randint(0, 2) for _ in range(count))
    out: list[BbsComment] = []
    for i, offset in enumerate(offsets):
        if rng.random() < 0.3:
            store, author, body = "本部", _pick(rng, HEAD_OFFICE), _pick(rng, phr.HQ_COMMENTS)
        else:
            store = _pick(rng, tuple(s for _, s in STORES if s != post.store))
            author, body = _pick(rng, AUTHORS[store]), _pick(rng, phr.COMMENTS[post.category])
        day = min(date.fromisoformat(post.date) + timedelta(days=offset), end)
        out.append(
            BbsComment(
                f"CMT-{start_no + i:04d}", post.post_id, day.isoformat(), store, author, body
            )
        )
    return out


def _posts(rng: random.Random, start: date, end: date) -> tuple[list[BbsPost], list[BbsComment]]:
    planned: list[tuple[date, str, str, str, str, str]] = []
    week = start
    while week <= end:
        days = [week + timedelta(days=i) for i in range(7) if week + timedelta(days=i) <= end]
        for day in sorted(rng.sample(days, min(len(days), rng.randint(2, 4)))):
            category = rng.choices(
                [c for c, _ in phr.CATEGORY_WEIGHTS], weights=[w for _, w in phr.CATEGORY_WEIGHTS]
            )[0]
            months = phr.POST_MONTHS
            pool = [p for p in phr.POSTS[category] if day.month in months.get(p[0], (day.month,))]
            title, body = pool[rng.randrange(len(pool))]
            store = _pick(rng, tuple(s for _, s in STORES))
            planned.append((day, store, _pick(rng, AUTHORS[store]), category, title, body))
        week += timedelta(days=7)
    scripted_day, *rest = _SCRIPTED_POST
    if start <= scripted_day <= end:
        store, author, title, body = rest
        planned.append((scripted_day, store, author, "トラブル報告", title, body))
    planned.sort(key=lambda p: p[0])  # stable: same-day posts keep their generation order
    posts: list[BbsPost] = []
    comments: list[BbsComment] = []
    for n, (day, store, author, category, title, body) in enumerate(planned, start=1):
        post = BbsPost(f"BBS-{n:04d}", day.isoformat(), store, author, title, body, category)
        posts.append(post)
        comments.extend(_comments(rng, post, end, len(comments) + 1))
    return posts, comments


def generate(
    seed: int = DEFAULT_SEED, start: date = DEFAULT_START, end: date = DEFAULT_END
) -> ReportSet:
    """Daily reports for every store on most days in ``[start, end]`` plus bulletin posts."""
    if end < start:
        raise ValueError(f"end ({end}) must not be before start ({start})")
    rng = random.Random(seed)
    reports: list[DailyReport] = []
    day = start
    while day <= end:
        for store_id, store in STORES:
            skipped = rng.random() < _SKIP_RATE
            if skipped and (day, store_id) not in _SCRIPT:
                continue
            reports.append(_report(rng, day, store_id, store))
        day += timedelta(days=1)
    posts, comments = _posts(rng, start, end)
    return ReportSet(tuple(reports), tuple(posts), tuple(comments))


# --- output --------------------------------------------------------------------------------------

DAILY_REPORT_COLUMNS = tuple(f.name for f in fields(DailyReport))


def write_daily_reports_csv(
    reports: tuple[DailyReport, ...] | list[DailyReport], path: Path
) -> Path:
    """CSV with a header; ``claim`` as ``true``/``false``; empty strings, never nulls."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(DAILY_REPORT_COLUMNS)
        for r in reports:
            row = asdict(r)
            row["claim"] = "true" if r.claim else "false"
            writer.writerow([row[c] for c in DAILY_REPORT_COLUMNS])
    return path


def report_text(report: DailyReport) -> str:
    """The searchable text of a report: its content, plus the claim labelled ``クレーム:``."""
    if report.claim and report.claim_content:
        return f"{report.content}\nクレーム: {report.claim_content}"
    return report.content


def _jsonl_rows(report_set: ReportSet) -> list[dict[str, object]]:
    titles = {p.post_id: p.title for p in report_set.bbs_posts}
    rows: list[dict[str, object]] = []
    for r in report_set.daily_reports:
        rows.append(
            {
                "id": r.report_id,
                "source_type": "daily_report",
                "title": f"{r.date} {r.store} 日報",
                "text": report_text(r),
                "date": r.date,
                "store": r.store,
                "store_id": r.store_id,
                "author": r.author,
                "weather": r.weather,
                "sales": r.sales,
                "customers": r.customers,
                "claim": r.claim,
                "cash_difference": r.cash_difference,
            }
        )
    for p in report_set.bbs_posts:
        rows.append(
            {
                "id": p.post_id,
                "source_type": "bbs_post",
                "title": p.title,
                "text": p.body,
                "date": p.date,
                "store": p.store,
                "author": p.author,
                "category": p.category,
            }
        )
    for c in report_set.bbs_comments:
        rows.append(
            {
                "id": c.comment_id,
                "source_type": "bbs_comment",
                "title": f"Re: {titles[c.post_id]}",
                "text": c.body,
                "date": c.date,
                "store": c.store,
                "author": c.author,
                "post_id": c.post_id,
            }
        )
    return rows


def write_reports_jsonl(report_set: ReportSet, path: Path) -> Path:
    """One JSON object a line (reports, posts, comments) for search ingest; UTF-8, not escaped."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as fh:
        for row in _jsonl_rows(report_set):
            fh.write(json.dumps(row, ensure_ascii=False) + "\n")
    return path


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    out = Path(args[0] if args else ".")
    data = generate()
    write_daily_reports_csv(data.daily_reports, out / "daily_reports.csv")
    write_reports_jsonl(data, out / "reports.jsonl")
    print(
        f"{out}: 日報 {len(data.daily_reports)} 件, 掲示板投稿 {len(data.bbs_posts)} 件, "
        f"コメント {len(data.bbs_comments)} 件"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Store and event questions with no model: fixed SQL templates run through the registry's SQL
tools (``search_stores``, ``search_events``), so the sandbox checks them like any model's SQL.

A question's conditions come from a closed list (ファミリー向け → ``target_audience LIKE
'%ファミリー%'``, 駐車場 → ``parking`` available, 今週末 → the events overlapping Saturday and
Sunday …); what the list does not know becomes keyword conditions on the text columns — only
words of letters (Sudachi content terms), so no quote or wildcard of the question reaches SQL.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, datetime, timedelta

from tansaku.text import get_analyzer
from tansaku.text.dates import month_of, now_tokyo, resolve_dates, week_of

MAX_ROWS = 5


@dataclass(frozen=True)
class Condition:
    pattern: re.Pattern[str]
    label: str
    sql: str


def _c(pattern: str, label: str, sql: str) -> Condition:
    return Condition(re.compile(pattern), label, sql)


STORE_WORDS = re.compile(
    r"店舗|お店|レストラン|カフェ|飲食店|ランチ|ディナー|ショップ|イタリアン|フレンチ|和食|中華|"
    r"居酒屋|ビストロ|ベーカリー|パン屋|(?<![\u3400-\u9fff])店(?=[をはがでにも?？])"
)
EVENT_WORDS = re.compile(r"イベント|催し|祭|フェス|マルシェ|ワークショップ|教室|ライブ|体験会")

STORE_CONDITIONS = (
    _c(
        r"ファミリー|家族|子連れ|子ども連れ|子供連れ",
        "ファミリー向け",
        "target_audience LIKE '%ファミリー%'",
    ),
    _c(r"カップル|デート|記念日", "カップル向け", "target_audience LIKE '%カップル%'"),
    _c(r"一人|ひとり|おひとり", "一人客向け", "target_audience LIKE '%一人客%'"),
    _c(r"シニア|高齢", "シニア向け", "target_audience LIKE '%シニア%'"),
    _c(r"観光", "観光客向け", "target_audience LIKE '%観光客%'"),
    _c(r"ペット|犬連れ|わんちゃん", "ペット同伴可", "pets_allowed = 'TRUE'"),
    _c(r"個室", "個室あり", "private_room LIKE '%\"available\": true%'"),
    _c(r"駐車場|車で", "駐車場あり", "parking LIKE '%\"available\": true%'"),
    _c(r"接待|商談|ビジネス", "ビジネス・接待向け", "Biz_Entertainment_Available = 'TRUE'"),
    _c(r"授乳", "授乳室あり", "nursing_room <> ''"),
    _c(r"ヴィーガン|ビーガン|菜食", "ヴィーガン対応", "vegan_info <> ''"),
    _c(r"ハラール|ハラル", "ハラール対応", "halal_info <> ''"),
    _c(r"グルテン", "グルテンフリー対応", "gluten_free_info <> ''"),
    _c(r"アレルギー", "アレルギー対応", "allergy_info <> ''"),
    _c(r"バリアフリー|車いす|車椅子", "バリアフリー", "accessibility <> ''"),
    _c(
        r"キッズメニュー|お子様メニュー|子ども向けメニュー",
        "キッズメニューあり",
        "kids_info LIKE '%\"kids_menu\": true%'",
    ),
    _c(r"カフェ", "カフェ", "category = 'cafe'"),
    _c(r"レストラン|飲食店", "レストラン", "category = 'restaurant'"),
    _c(r"物販|ショップ|買い物", "物販店", "category = 'retail'"),
)
EVENT_CONDITIONS = (
    _c(r"祭|フェス", "祭り", "category = 'festival'"),
    _c(r"マルシェ|市場|朝市", "マーケット", "category = 'market'"),
    _c(r"ワークショップ|教室|体験", "ワークショップ", "category = 'workshop'"),
    _c(
        r"子ども|子供|キッズ|親子",
        "子ども向け",
        "(category = 'kids' OR target_audience LIKE '%ファミリー%')",
    ),
    _c(r"音楽|ライブ|ジャズ|コンサート", "音楽", "category = 'music'"),
    _c(r"ペット", "ペット", "category = 'pets'"),
    _c(r"無料", "無料", "price LIKE '%無料%'"),
)
# a daily-report question that names a store or an event is not a table question
REPORT_WORDS = re.compile(r"問題|クレーム|トラブル|故障|日報|売上|事故|ミス|報告|苦情|不具合")
_STORE_TEXT = ("store_name", "description", "menu", "seasonal_items", "store_exclusive_events")
_EVENT_TEXT = ("event_name", "description", "venue")
# words of the question that name the kind of thing asked for, not a condition on it
_DOMAIN = re.compile(
    r"^(店舗|店|お店|レストラン|カフェ|飲食|ランチ|ディナー|食事|イベント|催し|探す|教える|"
    r"知る|ある|出来る|できる|行く|向け|開催|予定|一覧|おすすめ|オススメ|良い|いい|場所|"
    r"今日|明日|今週|来週|週末|今週末|今月|来月|土日|同伴|可能|対応|利用|付き|飲食店|ショップ)$"
)
_WORD = re.compile(r"^[\w\u3040-\u30ff\u3400-\u9fff]+$")


@dataclass(frozen=True)
class TableQuery:
    tool: str
    sql: str
    conditions: tuple[str, ...]
    """What the query looks for, in Japanese (for the answer and the thought event)."""


def _keywords(question: str, known: tuple[Condition, ...]) -> list[str]:
    """Content nouns of ``question`` outside the spans its known conditions matched."""
    for c in known:
        question = c.pattern.sub(" ", question)
    out: list[str] = []
    for term in get_analyzer().terms(question):
        if len(term) < 2 or _DOMAIN.match(term) or not _WORD.match(term):
            continue
        if "\u3041" <= term[-1] <= "\u309f":  # a verb or adjective (食べる, 安い): not a keyword
            continue
        if any(c.pattern.search(term) for c in known):
            continue
        if term not in out:
            out.append(term)
    return out[:3]


def _like_any(term: str, columns: tuple[str, ...]) -> str:
    return "(" + " OR ".join(f"{c} LIKE '%{term}%'" for c in columns) + ")"


def _event_window(question: str, now: datetime) -> tuple[date, date, str] | None:
    """The days an event question is about (inclusive), from words the date resolver leaves
    to the past (it resolves 先週, 昨日 …; events are mostly ahead)."""
    today = now.date()
    saturday = today + timedelta(days=(5 - today.weekday()) % 7)
    weekend = (saturday, saturday + timedelta(days=1))
    words = (
        ("今週末", weekend),
        ("週末", weekend),
        ("土日", weekend),
        ("来週", week_of(today + timedelta(days=7))),
        ("今週", (today, week_of(today)[1])),
        ("明日", (today + timedelta(days=1), today + timedelta(days=1))),
        ("今日", (today, today)),
        ("来月", month_of(today, ahead=1)),
        ("今月", (today, month_of(today)[1])),
    )
    for word, (start, end) in words:
        if word in question:
            return start, end, word
    found = resolve_dates(question, now).range
    if found is not None:
        return found.start, found.end, ""
    return None


def plan(question: str, tools: set[str], now: datetime | None = None) -> TableQuery | None:
    """The SQL for a store or event question, or None when the question is neither (or the
    workspace has no such SQL tool)."""
    if REPORT_WORDS.search(question):
        return None
    if "search_events" in tools and EVENT_WORDS.search(question):
        return _events(question, now or now_tokyo())
    if "search_stores" in tools and STORE_WORDS.search(question):
        return _stores(question)
    return None


def _query(
    question: str,
    tool: str,
    conditions: tuple[Condition, ...],
    text_columns: tuple[str, ...],
    select: str,
    order: str,
    fixed: tuple[tuple[str, str], ...] = (),
) -> TableQuery:
    """SELECT ``select`` WHERE the ``fixed`` (sql, label) pairs, the known conditions the
    question names and its other content nouns as keywords over ``text_columns``."""
    hits = [c for c in conditions if c.pattern.search(question)]
    where = [c.sql for c in hits] + [sql for sql, _ in fixed]
    labels = [label for _, label in fixed] + [c.label for c in hits]
    for term in _keywords(question, conditions):
        where.append(_like_any(term, text_columns))
        labels.append(f"「{term}」")
    sql = select + (" WHERE " + " AND ".join(where) if where else "")
    return TableQuery(tool, f"{sql} ORDER BY {order} LIMIT {MAX_ROWS}", tuple(labels))


def _stores(question: str) -> TableQuery:
    select = "SELECT store_id, store_name, category, description, address FROM stores"
    return _query(question, "search_stores", STORE_CONDITIONS, _STORE_TEXT, select, "store_id")


def _events(question: str, now: datetime) -> TableQuery:
    window = _event_window(question, now)
    if window is not None:
        start, end, word = window
        when = (
            f"start_date <= '{end.isoformat()}' AND end_date >= '{start.isoformat()}'",
            f"{word}{start.isoformat()}〜{end.isoformat()}",
        )
    else:
        when = (f"end_date >= '{now.date().isoformat()}'", f"{now.date().isoformat()}以降")
    select = (
        "SELECT event_id, event_name, start_date, end_date, venue, price, description FROM events"
    )
    return _query(
        question,
        "search_events",
        EVENT_CONDITIONS,
        _EVENT_TEXT,
        select,
        "start_date, event_id",
        fixed=(when,),
    )

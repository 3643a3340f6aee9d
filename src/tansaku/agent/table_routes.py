"""Store and event questions with no model: fixed SQL templates run through the registry's SQL
tools (``search_stores``, ``search_events``), so the sandbox checks them like any model's SQL.

A question's conditions come from a closed list over the declared columns (ファミリー向け →
``target_audience LIKE '%ファミリー%'``, 駐車場 → ``parking`` available, 日曜に開いている → the
``opening_hours`` of Sunday not empty, STR-0008 → ``store_id``, 今週末 → the events overlapping
Saturday and Sunday …); a column the question asks about (電話番号, 住所, 営業時間 …) is shown.
What the list does not know comes back as keywords — only words of letters (Sudachi content
terms), so no quote or wildcard of the question reaches SQL — which ``table_answer`` checks
against the data before any of them may narrow the rows.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from datetime import date, datetime, timedelta

from tansaku.text import get_analyzer
from tansaku.text.dates import month_of, now_tokyo, resolve_dates, week_of

MAX_ROWS = 10


@dataclass(frozen=True)
class Condition:
    pattern: re.Pattern[str]
    label: str
    sql: str


def _c(pattern: str, label: str, sql: str) -> Condition:
    return Condition(re.compile(pattern), label, sql)


STORE_WORDS = re.compile(
    r"店舗|お店|レストラン|カフェ|飲食店|ランチ|ディナー|ショップ|イタリアン|フレンチ|和食|中華|"
    r"居酒屋|ビストロ|ベーカリー|パン屋|(?<![\u3400-\u9fff])店(?=[をはがでにも?？]|$)"
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
    _c(
        r"予約(が|は)?(必要|要る|いる|制|必須)",
        "予約が必要",
        "reservation_required = 'TRUE'",
    ),
    _c(
        r"予約(が|は)?(不要|いらない|要らない|なし|無し)",
        "予約不要",
        "COALESCE(reservation_required, '') <> 'TRUE'",
    ),
)
# a daily-report question that names a store or an event is not a table question
REPORT_WORDS = re.compile(r"問題|クレーム|トラブル|故障|日報|売上|事故|ミス|報告|苦情|不具合")
# words of the question that name the kind of thing asked for, not a condition on it
_DOMAIN = re.compile(
    r"^(店舗|店|お店|レストラン|カフェ|飲食|ランチ|ディナー|食事|イベント|催し|探す|教える|"
    r"知る|ある|出来る|できる|行く|向け|開催|予定|一覧|おすすめ|オススメ|良い|いい|場所|"
    r"今日|明日|今週|来週|週末|今週末|今月|来月|土日|同伴|可能|対応|利用|付き|飲食店|ショップ|"
    r"エリア|地区|地域|周辺|近く|付近|界隈|辺り|あたり|全部|全て|すべて|件数|何件|数|必要)$"
)
_WORD = re.compile(r"^[\w\u3040-\u30ff\u3400-\u9fff]+$")


_DAYS = {
    "月": "monday",
    "火": "tuesday",
    "水": "wednesday",
    "木": "thursday",
    "金": "friday",
    "土": "saturday",
    "日": "sunday",
}
_OPEN_ON = re.compile(
    r"([月火水木金土日])曜(?:日)?(?:の)?(?:に|は|も|でも)?.{0,6}?(開い|営業|やって|空い|行け|入れ)"
)
_CLOSED_ON = re.compile(
    r"([月火水木金土日])曜(?:日)?(?:が|は|の|に)?(?:定休日?|休み|お休み|休業|休店|閉まって|やってない)"
)
_CODE = re.compile(r"(?<![a-z0-9])(str|evt)-\d{1,6}(?![0-9])", re.IGNORECASE)
SHOW_COLUMNS = (
    (re.compile(r"電話番号|電話|連絡先|tel", re.IGNORECASE), "phone"),
    (re.compile(r"住所|所在地|どこにある"), "address"),
    (re.compile(r"営業時間|何時から|何時まで|開店|閉店"), "opening_hours"),
    (re.compile(r"メールアドレス|メール|e-?mail", re.IGNORECASE), "email"),
    (re.compile(r"アクセス|行き方|最寄り|駅から"), "access_route"),
    (re.compile(r"予約"), "reservations"),
    (re.compile(r"臨時休業|休業日"), "irregular_closures"),
    (re.compile(r"メニュー|料理"), "menu"),
)
EVENT_SHOW_COLUMNS = (
    (re.compile(r"会場|場所|どこ"), "venue"),
    (re.compile(r"料金|値段|いくら|参加費"), "price"),
    (re.compile(r"主催"), "organizer"),
    (re.compile(r"何時|時間"), "start_time"),
)
COLUMN_LABELS = {
    "venue": "会場",
    "price": "料金",
    "organizer": "主催",
    "start_time": "開始時刻",
    "phone": "電話",
    "address": "住所",
    "opening_hours": "営業時間",
    "email": "メール",
    "access_route": "アクセス",
    "reservations": "予約",
    "irregular_closures": "臨時休業",
    "menu": "メニュー",
}
_DAY_LABELS = {v: k for k, v in _DAYS.items()}


def describe_json(value: object) -> str:
    """A JSON cell for a person: opening hours as 月 11:30-15:00 …, a list joined."""
    if isinstance(value, dict) and set(value) <= set(_DAY_LABELS):
        parts = []
        for day, spans in value.items():
            hours = "・".join(f"{s.get('open')}-{s.get('close')}" for s in spans or [])
            parts.append(f"{_DAY_LABELS[day]} {hours or '休み'}")
        return " ".join(parts)
    if isinstance(value, list):
        return "、".join(
            str(v.get("reason") or v.get("date") or v) if isinstance(v, dict) else str(v)
            for v in value
        )
    if isinstance(value, dict):
        return "、".join(f"{k}: {v}" for k, v in value.items() if v not in (None, ""))
    return str(value)


@dataclass(frozen=True)
class TableQuery:
    tool: str
    select: str
    where: tuple[str, ...]
    """The known conditions (SQL)."""
    conditions: tuple[str, ...]
    """What the query looks for, in Japanese (for the answer and the thought event)."""
    order: str
    keywords: tuple[str, ...] = ()
    """Other content words: conditions only where the data holds them (``table_answer``)."""
    show: tuple[str, ...] = ()
    """Columns the question asks about (shown for each row)."""
    upcoming: str = ""
    """The condition "from today on" an event question got without naming a date: when no
    upcoming event matches, the past ones that do are listed, said to be past."""

    @property
    def sql(self) -> str:
        """The query with the known conditions only."""
        where = " WHERE " + " AND ".join(self.where) if self.where else ""
        return f"{self.select}{where} ORDER BY {self.order} LIMIT {MAX_ROWS}"


def _keywords(question: str, known: tuple[Condition, ...]) -> list[str]:
    """Content nouns of ``question`` outside the spans its known conditions matched."""
    for c in known:
        question = c.pattern.sub(" ", question)
    shows = (*SHOW_COLUMNS, *EVENT_SHOW_COLUMNS)
    fixed: tuple[re.Pattern[str], ...] = (
        _CLOSED_ON,
        _OPEN_ON,
        _CODE,
        _CAPACITY,
        _WALK,
        _STATION,
        _NO_ROOM_CHARGE,
    )
    if _YEAR_END.search(question) and _CLOSED.search(question):
        fixed = (*fixed, _YEAR_END, _CLOSED)
    for pattern in (*fixed, *(p for p, _ in shows)):
        question = pattern.sub(" ", question)
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
    if "search_stores" in tools and (STORE_WORDS.search(question) or _store_code(question)):
        return _stores(question)
    return None


def keyword_plans(question: str, tools: set[str]) -> list[TableQuery]:
    """For a question no template took: each registered table searched for the question's
    content words (「クリスマスマーケットっていつから?」 finds the event by its name) — the
    words still checked against the data by ``table_answer`` before any narrows the rows."""
    words = tuple(_keywords(question, ()))
    out = []
    if words and "search_events" in tools:
        select = (
            "SELECT event_id, event_name, start_date, end_date, venue, price, description "
            "FROM events"
        )
        show = tuple(dict.fromkeys(c for p, c in EVENT_SHOW_COLUMNS if p.search(question)))
        out.append(TableQuery("search_events", select, (), (), "start_date, event_id", words, show))
    if words and "search_stores" in tools:
        select = "SELECT store_id, store_name, category, description, address FROM stores"
        out.append(TableQuery("search_stores", select, (), (), "store_id", words))
    return out


def _store_code(question: str) -> str | None:
    m = _CODE.search(question)
    return m.group(0).upper() if m and m.group(1).lower() == "str" else None


def _query(
    question: str,
    tool: str,
    conditions: tuple[Condition, ...],
    select: str,
    order: str,
    fixed: tuple[tuple[str, str], ...] = (),
) -> TableQuery:
    """SELECT ``select`` WHERE the ``fixed`` (sql, label) pairs and the known conditions the
    question names; its other content nouns come back as keywords."""
    hits = [c for c in conditions if c.pattern.search(question)]
    where = [c.sql for c in hits] + [sql for sql, _ in fixed]
    labels = [label for _, label in fixed] + [c.label for c in hits]
    columns = EVENT_SHOW_COLUMNS if tool == "search_events" else SHOW_COLUMNS
    show = tuple(dict.fromkeys(col for p, col in columns if p.search(question)))
    if show:
        select = select.replace(" FROM ", ", " + ", ".join(show) + " FROM ", 1)
    return TableQuery(
        tool=tool,
        select=select,
        where=tuple(where),
        conditions=tuple(labels),
        order=order,
        keywords=tuple(_keywords(question, conditions)),
        show=show,
    )


_CAPACITY = re.compile(
    r"(\d{1,4})\s*(?:人|名)\s*(?:以上|から|超|も)?(?:で|が)?(?:も)?(?:入れ|入る|座れ|使え|利用)"
)
_WALK = re.compile(r"(?:徒歩|歩いて)\s*(\d{1,2})\s*分\s*(?:以内|まで|以下|圏内)")
_STATION = re.compile(r"([\u3400-\u9fff\u30a0-\u30ff]{1,8})駅")
_YEAR_END = re.compile(r"年末|年始|大晦日|お正月|正月")
_YEAR_END_DAYS = ("12-28", "12-29", "12-30", "12-31")
_NEW_YEAR_DAYS = ("01-01", "01-02", "01-03")
_CLOSED = re.compile(r"休業|休み|休店|閉まる|閉まって|やってない|定休")
_NO_ROOM_CHARGE = re.compile(
    r"(?:個室料|室料)(?:が|は)?(?:かからない|掛からない|無料|なし|無し|不要|タダ)"
)


def place_conditions(question: str) -> list[tuple[str, str]]:
    """A station (「田町駅から歩いて5分以内」「渋谷駅の近く」) is a required condition on the
    access route, never a word dropped: no store near it means none is listed."""
    out = []
    for m in _STATION.finditer(question):
        name = m.group(1).removeprefix("の")
        if name and _WORD.match(name):
            out.append(
                (
                    f"(access_route LIKE '%{name}%' OR address LIKE '%{name}%')",
                    f"{name}駅",
                )
            )
    walk = _WALK.search(question)
    if walk is not None:
        minutes = int(walk.group(1))
        sql = f"TRY_CAST(regexp_extract(access_route, '徒歩(\\d+)分', 1) AS INTEGER) <= {minutes}"
        out.append((sql, f"徒歩{minutes}分以内"))
    return out


def _stores(question: str) -> TableQuery:
    select = "SELECT store_id, store_name, category, description, address FROM stores"
    fixed: list[tuple[str, str]] = list(place_conditions(question))
    capacity = _CAPACITY.search(question)
    if capacity is not None and "個室" in question:
        n = int(capacity.group(1))
        sql = f"TRY_CAST(json_extract_string(private_room, '$.capacity') AS INTEGER) >= {n}"
        fixed.append((sql, f"個室{n}名以上"))
    if _NO_ROOM_CHARGE.search(question):
        fixed.append(
            (
                "(private_room LIKE '%室料なし%' OR private_room LIKE '%個室料なし%' "
                "OR private_room LIKE '%室料無料%')",
                "個室料なし",
            )
        )
    if _YEAR_END.search(question) and _CLOSED.search(question):
        end = "年末" in question or "大晦日" in question
        start = "年始" in question or "正月" in question
        wanted = (_YEAR_END_DAYS if end else ()) + (_NEW_YEAR_DAYS if start else ())
        days = " OR ".join(f"irregular_closures LIKE '%-{d}%'" for d in wanted)
        label = "年末年始" if end and start else "年末" if end else "年始"
        fixed.append((f"({days})", f"{label}に休業"))
    code = _store_code(question)
    if code:
        fixed.append((f"store_id = '{code}'", code))
    for m in _CLOSED_ON.finditer(question):
        day = _DAYS[m.group(1)]
        fixed.append((f"opening_hours LIKE '%\"{day}\": []%'", f"{m.group(1)}曜定休"))
    for m in _OPEN_ON.finditer(question):
        day = _DAYS[m.group(1)]
        fixed.append((f"opening_hours LIKE '%\"{day}\": [{{%'", f"{m.group(1)}曜日に営業"))
    return _query(question, "search_stores", STORE_CONDITIONS, select, "store_id", tuple(fixed))


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
    query = _query(
        question,
        "search_events",
        EVENT_CONDITIONS,
        select,
        "start_date, event_id",
        fixed=(when,),
    )
    return replace(query, upcoming=when[0]) if window is None else query

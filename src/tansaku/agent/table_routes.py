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

from tansaku.agent.table_words import (
    CAPACITY,
    CLOSED,
    CLOSED_ON,
    CODE,
    DAYS,
    DOMAIN,
    EVENT_CONDITIONS,
    EVENT_SHOW_COLUMNS,
    EVENT_WORDS,
    NEW_YEAR_DAYS,
    NO_ROOM_CHARGE,
    OPEN_ON,
    REPORT_WORDS,
    SHOW_COLUMNS,
    STATION,
    STORE_CONDITIONS,
    STORE_WORDS,
    WALK,
    WORD,
    YEAR_END,
    YEAR_END_DAYS,
    Condition,
)
from tansaku.text import get_analyzer
from tansaku.text.dates import month_of, now_tokyo, resolve_dates, week_of

MAX_ROWS = 10


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
        CLOSED_ON,
        OPEN_ON,
        CODE,
        CAPACITY,
        WALK,
        STATION,
        NO_ROOM_CHARGE,
    )
    if YEAR_END.search(question) and CLOSED.search(question):
        fixed = (*fixed, YEAR_END, CLOSED)
    for pattern in (*fixed, *(p for p, _ in shows)):
        question = pattern.sub(" ", question)
    out: list[str] = []
    for term in get_analyzer().terms(question):
        if len(term) < 2 or DOMAIN.match(term) or not WORD.match(term):
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
    m = CODE.search(question)
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


def place_conditions(question: str) -> list[tuple[str, str]]:
    """A station (「田町駅から歩いて5分以内」「渋谷駅の近く」) is a required condition on the
    access route, never a word dropped: no store near it means none is listed."""
    out = []
    for m in STATION.finditer(question):
        name = m.group(1).removeprefix("の")
        if name and WORD.match(name):
            out.append(
                (
                    f"(access_route LIKE '%{name}%' OR address LIKE '%{name}%')",
                    f"{name}駅",
                )
            )
    walk = WALK.search(question)
    if walk is not None:
        minutes = int(walk.group(1))
        sql = f"TRY_CAST(regexp_extract(access_route, '徒歩(\\d+)分', 1) AS INTEGER) <= {minutes}"
        out.append((sql, f"徒歩{minutes}分以内"))
    return out


def _stores(question: str) -> TableQuery:
    select = "SELECT store_id, store_name, category, description, address FROM stores"
    fixed: list[tuple[str, str]] = list(place_conditions(question))
    capacity = CAPACITY.search(question)
    if capacity is not None and "個室" in question:
        n = int(capacity.group(1))
        sql = f"TRY_CAST(json_extract_string(private_room, '$.capacity') AS INTEGER) >= {n}"
        fixed.append((sql, f"個室{n}名以上"))
    if NO_ROOM_CHARGE.search(question):
        fixed.append(
            (
                "(private_room LIKE '%室料なし%' OR private_room LIKE '%個室料なし%' "
                "OR private_room LIKE '%室料無料%')",
                "個室料なし",
            )
        )
    if YEAR_END.search(question) and CLOSED.search(question):
        end = "年末" in question or "大晦日" in question
        start = "年始" in question or "正月" in question
        wanted = (YEAR_END_DAYS if end else ()) + (NEW_YEAR_DAYS if start else ())
        days = " OR ".join(f"irregular_closures LIKE '%-{d}%'" for d in wanted)
        label = "年末年始" if end and start else "年末" if end else "年始"
        fixed.append((f"({days})", f"{label}に休業"))
    code = _store_code(question)
    if code:
        fixed.append((f"store_id = '{code}'", code))
    for m in CLOSED_ON.finditer(question):
        day = DAYS[m.group(1)]
        fixed.append((f"opening_hours LIKE '%\"{day}\": []%'", f"{m.group(1)}曜定休"))
    for m in OPEN_ON.finditer(question):
        day = DAYS[m.group(1)]
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

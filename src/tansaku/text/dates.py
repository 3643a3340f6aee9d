"""Deterministic relative-date resolution for Japanese queries (「昨日の問題」 → 2025-12-10).

Everything is computed from one "today" in Asia/Tokyo. Weeks start on Monday; every range is a
pair of inclusive dates. Only the first (leftmost) date expression of a query is resolved.

=========================================  ====================================================
expression                                  range (today = t)
=========================================  ====================================================
今日 / 本日                                 t
昨日 / きのう                               t−1
一昨日 / おととい / おとつい                t−2
明日                                        t+1
今週                                        Monday of this week .. t (no future days)
先週 / 先々週                               the previous Monday–Sunday week / the one before
今月                                        1st of this month .. t
先月 / 先々月                               the whole previous month / the one before
今年                                        Jan 1 .. t  (今年度 is a fiscal year: left alone)
去年 / 昨年 / 一昨年                        the whole previous year / the one before
最近 / 直近                                 t−6 .. t
過去N日 / 直近N日 / ここN日 / 最近N日(間)   t−(N−1) .. t      (過去N週間: t−(7N−1) .. t)
N日前                                       t−N
N週間前 / N週前                             the Monday–Sunday week containing t−7N
Nか月前 (ヶ/ケ/カ/ヵ/箇)                    the whole month N months back
N年前                                       the whole year N years back
先週の金曜(日) / 先週金曜 / 今週の月曜      that single day (bare 先週の金 only before a particle)
先週の土日                                  that Saturday .. Sunday
2025年12月9日, 2025/12/9, 2025-12-09        that day (2025.12.9 too)
12月9日, 12/9                               that day in the most recent year not after t
                                            (not 1/2 before a unit: 1/2カップ, 1/4個)
2025年12月 / 2025年12月中, 2025/12, 2025-12  the whole month
2025年 / 2025年中 (before の/に/は/も,      the whole year (2025年度, 2025年前半, 2025年版,
punctuation, a space or the end)            1990年代 are left alone)
12月 / 12月中 (before の/に/は/も,           the whole month, most recent not after this month
punctuation, a space or the end)            (12月中旬, 3月期, 12か月 are left alone)
=========================================  ====================================================

N is ASCII or full-width digits or a kanji numeral (一..九, 十, 二十, 二十三 …), N ≥ 1.
Invalid dates (2025年2月30日, 13/1, 2/30) are not date expressions: the text is left alone and
the search continues after them. Nothing here raises on user text.

Width variants: matching runs on a per-character NFKC copy of the raw query with an offset map
back to it, so 「１２／９」 and 「過去３０日」 match while ``query``, ``remainder`` and
``expression`` keep the user's own characters (only the expression itself is replaced).
"""

from __future__ import annotations

import calendar
import re
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from zoneinfo import ZoneInfo

__all__ = [
    "FIRST_DATE",
    "LAST_DATE",
    "TOKYO",
    "DateRange",
    "DateResolution",
    "now_tokyo",
    "parse_now",
    "resolve_dates",
]

TOKYO = ZoneInfo("Asia/Tokyo")
FIRST_DATE = date(1900, 1, 1)
LAST_DATE = date(2999, 12, 31)
"""The dates a caller may name (a "now", a filter bound, a period end): far enough from
``date.min``/``date.max`` that every range computed from them (a 10-year window, a month back,
a time-zone shift) stays a real date."""

_Span = tuple[date, date]

# --- patterns ------------------------------------------------------------------------------

_KANJI_DIGITS = {d: i for i, d in enumerate("一二三四五六七八九", start=1)}
_KANJI_NUM = "[一二三四五六七八九]?十[一二三四五六七八九]?|[一二三四五六七八九]"
_NOT_AFTER_NUM = "(?<![0-9〇一二三四五六七八九十百千万])"
_BOUNDARY = r"(?=$|[のにはも、。,.!?！？)」』\s])"  # after a bare 12月 or a bare weekday
_WEEKDAYS = "月火水木金土日"


def _num(name: str, digits: int) -> str:
    return f"{_NOT_AFTER_NUM}(?P<{name}>[0-9]{{1,{digits}}}|{_KANJI_NUM})"


# Order matters where two alternatives can start at the same position: the first one wins.
_ALTERNATIVES = {
    "ymd": r"(?<![0-9])(?P<a_y>[0-9]{4})年(?P<a_m>[0-9]{1,2})月(?P<a_d>[0-9]{1,2})日",
    "ymd_sep": r"(?<![0-9./-])(?P<b_y>[0-9]{4})(?P<b_s>[/.-])(?P<b_m>[0-9]{1,2})(?P=b_s)"
    r"(?P<b_d>[0-9]{1,2})(?![0-9])",
    "ym": r"(?<![0-9])(?P<c_y>[0-9]{4})年(?P<c_m>[0-9]{1,2})月(?![0-9])(?:中" + _BOUNDARY + ")?",
    # Not a code: AB2023-1, ET-2020-3, 2023-10A.
    "ym_sep": r"(?<![0-9A-Za-z./-])(?P<k_y>[0-9]{4})(?P<k_s>[/-])(?P<k_m>[0-9]{1,2})"
    r"(?![0-9A-Za-z]|(?P=k_s)[0-9])",
    "year": r"(?<![0-9])(?P<l_y>[0-9]{4})年(?:中?" + _BOUNDARY + ")",
    "md": r"(?<![0-9年])(?P<d_m>[0-9]{1,2})月(?P<d_d>[0-9]{1,2})日",
    # Not a fraction in a recipe: 1/2カップ, 1/4個, 1/3量.
    "md_slash": r"(?<![0-9./-])(?P<e_m>[0-9]{1,2})/(?P<e_d>[0-9]{1,2})(?![0-9]|[/.][0-9])"
    r"(?!\s?(?:カップ|杯|個|本|枚|倍|量|人前|切れ|(?i:cc|ml|kg|g)(?![a-z])))",
    "ago": _num("f_n", 3) + "(?P<f_u>日|週間?|[かヶケカヵ箇]月|年)前(?!後)",
    "month": r"(?<![0-9年])(?P<g_m>[0-9]{1,2})月(?:中?" + _BOUNDARY + ")",
    "last_n": r"(?:過去|直近|ここ|最近)\s?" + _num("h_n", 4) + "(?P<h_u>日|週間)間?",
    "weekday": r"(?P<i_w>先々週|先週|今週)の?(?:(?P<i_we>土日)|(?P<i_d>[月火水木金土日])"
    r"(?:曜日?|" + _BOUNDARY + "))",
    "word": r"(?P<j_w>一昨日|おととい|おとつい|一昨年|昨日|きのう|今日|本日|明日|先々週|先週"
    r"|今週|先々月|先月|今月|今年(?!度)|去年|昨年(?!度)|最近|直近)",
}
_DATE_RE = re.compile("|".join(f"(?P<{k}>{v})" for k, v in _ALTERNATIVES.items()))
_TRAILING_PARTICLE = re.compile("には|の|に|は")
_NOW_RE = re.compile(r"([0-9]{4})-([0-9]{2})-([0-9]{2})(?:[T ]([0-9]{2}):([0-9]{2}))?")

# --- calendar helpers ----------------------------------------------------------------------


def _monday(day: date) -> date:
    return day - timedelta(days=day.weekday())


def _week(monday: date) -> _Span:
    return monday, monday + timedelta(days=6)


def _month(year: int, month: int, back: int = 0) -> _Span:
    year, index = divmod(year * 12 + month - 1 - back, 12)
    return date(year, index + 1, 1), date(year, index + 1, calendar.monthrange(year, index + 1)[1])


def week_of(day: date) -> tuple[date, date]:
    """Monday .. Sunday of ``day``'s week (inclusive)."""
    return _week(_monday(day))


def month_of(day: date, ahead: int = 0) -> tuple[date, date]:
    """First .. last day of ``day``'s month, or of the month ``ahead`` months later."""
    return _month(day.year, day.month, back=-ahead)


def _year(year: int) -> _Span:
    return date(year, 1, 1), date(year, 12, 31)


def _day(day: date) -> _Span:
    return day, day


def _to_int(text: str) -> int:
    if text.isdigit():
        return int(text)
    if "十" not in text:
        return _KANJI_DIGITS[text]
    tens, _, ones = text.partition("十")
    return _KANJI_DIGITS.get(tens, 1) * 10 + _KANJI_DIGITS.get(ones, 0)


def _recent_day(month: int, day: int, today: date) -> _Span | None:
    """The most recent month/day not after ``today`` (2/29 goes back to a leap year)."""
    if not 1 <= month <= 12 or not 1 <= day <= calendar.monthrange(2000, month)[1]:
        return None
    for year in range(today.year, today.year - 9, -1):
        if (month, day) == (2, 29) and not calendar.isleap(year):
            continue
        if date(year, month, day) <= today:
            return _day(date(year, month, day))
    return None


# --- resolvers: one per alternative, (match, today) -> span or None ------------------------

_WORDS: dict[str, Callable[[date], _Span]] = {
    "今日": _day,
    "本日": _day,
    "昨日": lambda t: _day(t - timedelta(days=1)),
    "一昨日": lambda t: _day(t - timedelta(days=2)),
    "明日": lambda t: _day(t + timedelta(days=1)),
    "今週": lambda t: (_monday(t), t),
    "先週": lambda t: _week(_monday(t) - timedelta(days=7)),
    "先々週": lambda t: _week(_monday(t) - timedelta(days=14)),
    "今月": lambda t: (t.replace(day=1), t),
    "先月": lambda t: _month(t.year, t.month, 1),
    "先々月": lambda t: _month(t.year, t.month, 2),
    "今年": lambda t: (date(t.year, 1, 1), t),
    "去年": lambda t: _year(t.year - 1),
    "一昨年": lambda t: _year(t.year - 2),
    "最近": lambda t: (t - timedelta(days=6), t),
}
_ALIASES = {
    "きのう": "昨日",
    "おととい": "一昨日",
    "おとつい": "一昨日",
    "昨年": "去年",
    "直近": "最近",
}
_WEEK_BACK = {"今週": 0, "先週": 1, "先々週": 2}


def _r_ymd(m: re.Match[str], today: date) -> _Span | None:
    return _day(date(int(m["a_y"]), int(m["a_m"]), int(m["a_d"])))


def _r_ymd_sep(m: re.Match[str], today: date) -> _Span | None:
    return _day(date(int(m["b_y"]), int(m["b_m"]), int(m["b_d"])))


def _r_ym(m: re.Match[str], today: date) -> _Span | None:
    return _month(int(m["c_y"]), int(m["c_m"])) if 1 <= int(m["c_m"]) <= 12 else None


def _supported(year: int) -> bool:
    return FIRST_DATE.year <= year <= LAST_DATE.year


def _r_ym_sep(m: re.Match[str], today: date) -> _Span | None:
    year, month = int(m["k_y"]), int(m["k_m"])
    return _month(year, month) if _supported(year) and 1 <= month <= 12 else None


def _r_year(m: re.Match[str], today: date) -> _Span | None:
    year = int(m["l_y"])
    return _year(year) if _supported(year) else None


def _r_md(m: re.Match[str], today: date) -> _Span | None:
    return _recent_day(int(m["d_m"]), int(m["d_d"]), today)


def _r_md_slash(m: re.Match[str], today: date) -> _Span | None:
    return _recent_day(int(m["e_m"]), int(m["e_d"]), today)


def _r_ago(m: re.Match[str], today: date) -> _Span | None:
    n, unit = _to_int(m["f_n"]), m["f_u"]
    if n < 1:
        return None
    if unit == "日":
        return _day(today - timedelta(days=n))
    if unit.startswith("週"):
        return _week(_monday(today) - timedelta(days=7 * n))
    if unit == "年":
        return _year(today.year - n)
    return _month(today.year, today.month, n)


def _r_month(m: re.Match[str], today: date) -> _Span | None:
    month = int(m["g_m"])
    if not 1 <= month <= 12:
        return None
    return _month(today.year if month <= today.month else today.year - 1, month)


def _r_last_n(m: re.Match[str], today: date) -> _Span | None:
    n = _to_int(m["h_n"]) * (7 if m["h_u"] == "週間" else 1)
    return (today - timedelta(days=n - 1), today) if n >= 1 else None


def _r_weekday(m: re.Match[str], today: date) -> _Span | None:
    monday = _monday(today) - timedelta(days=7 * _WEEK_BACK[m["i_w"]])
    if m["i_we"]:
        return monday + timedelta(days=5), monday + timedelta(days=6)
    return _day(monday + timedelta(days=_WEEKDAYS.index(m["i_d"])))


def _r_word(m: re.Match[str], today: date) -> _Span | None:
    word = m["j_w"]
    return _WORDS[_ALIASES.get(word, word)](today)


_RESOLVERS: dict[str, Callable[[re.Match[str], date], _Span | None]] = {
    "ymd": _r_ymd,
    "ymd_sep": _r_ymd_sep,
    "ym": _r_ym,
    "ym_sep": _r_ym_sep,
    "year": _r_year,
    "md": _r_md,
    "md_slash": _r_md_slash,
    "ago": _r_ago,
    "month": _r_month,
    "last_n": _r_last_n,
    "weekday": _r_weekday,
    "word": _r_word,
}

# --- text helpers --------------------------------------------------------------------------


def _nfkc_with_offsets(text: str) -> tuple[str, list[int] | None]:
    """NFKC copy of ``text`` and, per copy character, its index in ``text`` (None: identical)."""
    if text.isascii() or unicodedata.is_normalized("NFKC", text):
        return text, None
    pieces: list[str] = []
    origin: list[int] = []
    for i, ch in enumerate(text):
        piece = unicodedata.normalize("NFKC", ch)
        pieces.append(piece)
        origin.extend([i] * len(piece))
    return "".join(pieces), origin


def _find(text: str, today: date) -> tuple[int, int, _Span] | None:
    """Span (in ``text``) and dates of the first valid date expression."""
    folded, origin = _nfkc_with_offsets(text)
    pos = 0
    while match := _DATE_RE.search(folded, pos):
        try:
            span = _RESOLVERS[match.lastgroup or ""](match, today)
        except (ValueError, OverflowError):  # date(2025, 2, 30), year 0 …
            span = None
        if span is not None:
            start, end = match.span()
            if origin is not None:
                start, end = origin[start], origin[end - 1] + 1
            return start, end, span
        pos = match.end()
    return None


def _join(left: str, right: str) -> str:
    if left and right and (left[-1].isspace() or right[0].isspace()):
        return f"{left.rstrip()} {right.lstrip()}".strip()
    return (left + right).strip()


def _to_today(now: datetime | date | None) -> date:
    if now is None:
        return now_tokyo().date()
    if isinstance(now, datetime):
        return now.astimezone(TOKYO).date() if now.tzinfo is not None else now.date()
    return now


# --- public API ----------------------------------------------------------------------------


@dataclass(frozen=True)
class DateRange:
    """An inclusive range of calendar dates and the query text it came from."""

    start: date
    end: date
    expression: str

    def __post_init__(self) -> None:
        if self.start > self.end:
            raise ValueError(f"start must not be after end: {self.start} > {self.end}")

    def to_dict(self) -> dict[str, str]:
        return {"from": self.start.isoformat(), "to": self.end.isoformat()}

    def days(self) -> list[date]:
        return [self.start + timedelta(days=i) for i in range((self.end - self.start).days + 1)]

    def __str__(self) -> str:
        if self.start == self.end:
            return self.start.isoformat()
        return f"{self.start.isoformat()}から{self.end.isoformat()}"


@dataclass(frozen=True)
class DateResolution:
    """``range`` is None when the query has no date expression (then ``query`` is unchanged)."""

    range: DateRange | None
    query: str  # the expression replaced by the concrete date(s)
    remainder: str  # the expression and a following の/に/は removed, stripped


def now_tokyo() -> datetime:
    """The current time, timezone-aware, in Asia/Tokyo."""
    return datetime.now(TOKYO)


def resolve_dates(query: str, now: datetime | date | None = None) -> DateResolution:
    """Resolve the first date expression of ``query`` against ``now`` (default: now in Tokyo).

    An aware ``now`` is converted to Asia/Tokyo; a naive datetime or a date is Tokyo local.

    >>> r = resolve_dates("昨日の問題", date(2025, 12, 11))
    >>> r.range.to_dict(), r.query, r.remainder
    ({'from': '2025-12-10', 'to': '2025-12-10'}, '2025-12-10の問題', '問題')
    """
    found = _find(query, _to_today(now))
    if found is None:
        return DateResolution(range=None, query=query, remainder=query.strip())
    start, end, (first, last) = found
    date_range = DateRange(first, last, query[start:end])
    after = query[end:]
    particle = _TRAILING_PARTICLE.match(after)
    rest = after[particle.end() :] if particle else after
    return DateResolution(
        range=date_range,
        query=query[:start] + str(date_range) + after,
        remainder=_join(query[:start], rest),
    )


def parse_now(value: str) -> datetime:
    """Parse ``--now``: ``YYYY-MM-DD`` or ``YYYY-MM-DDTHH:MM``, as Asia/Tokyo local time."""
    text = unicodedata.normalize("NFKC", value).strip()
    match = _NOW_RE.fullmatch(text)
    if match is None:
        raise ValueError(
            f"日時「{value}」を解釈できません。YYYY-MM-DD または YYYY-MM-DDTHH:MM の形式で"
            "指定してください（例: 2025-12-11, 2025-12-11T09:30）"
        )
    year, month, day, hour, minute = (int(g) if g else 0 for g in match.groups())
    try:
        moment = datetime(year, month, day, hour, minute, tzinfo=TOKYO)
    except ValueError:
        raise ValueError(
            f"日時「{value}」は存在しない日付または時刻です。"
            "YYYY-MM-DD または YYYY-MM-DDTHH:MM の形式で正しい値を指定してください"
        ) from None
    if not FIRST_DATE <= moment.date() <= LAST_DATE:
        raise ValueError(
            f"日時「{value}」は範囲外です。{FIRST_DATE}〜{LAST_DATE} の日付で指定してください"
        )
    return moment

"""Dates at the edge of the API: every date a request names (a query parameter such as
``from``/``to``/``now``, a body's ``now`` or filter bound) must lie in the supported range
(:data:`tansaku.text.dates.FIRST_DATE` … :data:`~tansaku.text.dates.LAST_DATE`), checked before
any route computes with it. Out of range is a 422 ``date_out_of_range`` naming the parameter and
the range::

    {"error": {"code": "date_out_of_range",
               "message": "to: 日付は 1900-01-01〜2999-12-31 の範囲で…(指定: 9999-12-31)",
               "parameter": "to", "range": {"min": "1900-01-01", "max": "2999-12-31"}}}

A value that is not a date at all is left to the route's own parser (its 400/422 as before).
"""

from __future__ import annotations

import re
from datetime import date, datetime
from typing import Annotated, Any

from fastapi import Query
from pydantic import AfterValidator
from pydantic_core import PydanticCustomError

from tansaku.server.errors import DATE_OUT_OF_RANGE as CODE
from tansaku.server.errors import ApiError
from tansaku.text.dates import FIRST_DATE, LAST_DATE

_LEADING_DATE = re.compile(r"\s*([0-9]{4})[-/]([0-9]{1,2})[-/]([0-9]{1,2})")


def supported_range() -> dict[str, str]:
    return {"min": FIRST_DATE.isoformat(), "max": LAST_DATE.isoformat()}


def out_of_range_message(parameter: str, value: object) -> str:
    shown = str(value)[:40]
    return f"{parameter}: 日付は {FIRST_DATE}〜{LAST_DATE} の範囲で指定してください(指定: {shown})"


def out_of_range(parameter: str, value: object) -> ApiError:
    return ApiError(
        422,
        CODE,
        out_of_range_message(parameter, value),
        extra={"parameter": parameter, "range": supported_range()},
    )


def _day_of(text: str) -> date | None:
    match = _LEADING_DATE.match(text)
    if match is None:
        return None
    try:
        return date(*(int(g) for g in match.groups()))
    except ValueError:
        return None


def check_date_text(value: str | None, parameter: str) -> str | None:
    """``value`` unchanged, or a 422 :class:`ApiError` when it names a day outside the range
    (``YYYY-MM-DD`` or ``YYYY/MM/DD``, with or without a time after it)."""
    if value is None:
        return None
    day = _day_of(value)
    if day is not None and not FIRST_DATE <= day <= LAST_DATE:
        raise out_of_range(parameter, value.strip())
    return value


def _in_range(value: Any) -> Any:
    day = value.date() if isinstance(value, datetime) else value
    if isinstance(day, date) and not FIRST_DATE <= day <= LAST_DATE:
        raise PydanticCustomError(
            CODE,
            "date must be between {min} and {max}",
            {**supported_range(), "value": value.isoformat()},
        )
    return value


SupportedDate = Annotated[date, AfterValidator(_in_range)]
"""A body's date field within the supported range (else 422 ``date_out_of_range``)."""
SupportedMoment = Annotated[datetime | date, AfterValidator(_in_range)]
"""A body's ``now`` (a datetime or a date) within the supported range."""

DateText = Annotated[str | None, Query(max_length=40)]
"""A query parameter naming a day or a moment as written; the route parses it and checks it
with :func:`check_date_text`."""
DateFrom = Annotated[str | None, Query(alias="from", max_length=40)]
"""``?from=``: the start of a period (:data:`DateText`)."""
DateTo = Annotated[str | None, Query(alias="to", max_length=40)]
"""``?to=``: the end of a period (:data:`DateText`)."""

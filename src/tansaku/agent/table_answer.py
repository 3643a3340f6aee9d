"""Store and event questions answered from the registered tables with no model.

The template (``table_routes.plan``) gives the known conditions; every other content word of
the question is checked against the data before it may narrow anything: a word found in some
text column (an area in ``address``, a dish in ``menu``, a store's name) becomes a condition on
exactly the columns that hold it, a word found nowhere is left out and said so — it never
empties the answer. The matches are counted, up to ten are listed with 「N件中M件を表示」, and
the SQL that ran is shown in the thoughts. Every query goes through the registry's SQL tool, so
the sandbox checks it like any model's SQL.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from tansaku.agent import table_routes, table_words
from tansaku.agent.events import Citation, Event

MAX_LISTED = 10
KEYWORD_COLUMNS = {
    "search_stores": (
        "store_name",
        "address",
        "description",
        "menu",
        "seasonal_items",
        "store_exclusive_events",
        "access_route",
    ),
    "search_events": ("event_name", "venue", "address", "description", "organizer", "price"),
}
TABLE_OF = {"search_stores": "stores", "search_events": "events"}

Call = Callable[[list[Event], str, dict[str, Any]], Any]


def _where(conditions: list[str]) -> str:
    return " WHERE " + " AND ".join(conditions) if conditions else ""


def _run(call: Call, events: list[Event], tool: str, sql: str) -> tuple[Any, Any]:
    """(what the SQL tool answered, its ``results`` rows or None)."""
    data = call(events, tool, {"sql_query": sql})
    return data, data.get("results") if isinstance(data, dict) else None


def _listed(call: Call, events: list[Event], tool: str, sql: str, thought: str) -> tuple[Any, Any]:
    """:func:`_run` of ``sql``, shown first in the thoughts after ``thought``."""
    events.append(Event(type="thought", text=thought + sql))
    return _run(call, events, tool, sql)


def _count(call: Call, events: list[Event], tool: str, where: list[str]) -> int | None:
    sql = f"SELECT COUNT(*) AS n FROM {TABLE_OF[tool]}" + _where(where)
    rows = _run(call, events, tool, sql)[1]
    return int(rows[0]["n"]) if rows else None


def _keyword_conditions(
    call: Call, events: list[Event], tool: str, words: tuple[str, ...]
) -> tuple[int, dict[str, tuple[str, list[str], int]]]:
    """One SQL for every word: the table's row count and, for each word some text column of
    ``tool``'s table holds, ``(column LIKE …)`` over those columns, the columns and the number
    of rows matching it (a word no column holds is left out)."""
    columns = KEYWORD_COLUMNS[tool]
    parts = ["COUNT(*) AS n"]
    for i, word in enumerate(words):
        likes = [f"{c} LIKE '%{word}%'" for c in columns]
        parts += [
            f"SUM(CASE WHEN {like} THEN 1 ELSE 0 END) AS w{i}_{j}" for j, like in enumerate(likes)
        ]
        parts.append(f"SUM(CASE WHEN {' OR '.join(likes)} THEN 1 ELSE 0 END) AS w{i}")
    rows = _run(call, events, tool, f"SELECT {', '.join(parts)} FROM {TABLE_OF[tool]}")[1]
    if not rows:
        return 0, {}
    counts = rows[0]
    found = {}
    for i, word in enumerate(words):
        held = [c for j, c in enumerate(columns) if (counts.get(f"w{i}_{j}") or 0) > 0]
        if held:
            cond = "(" + " OR ".join(f"{c} LIKE '%{word}%'" for c in held) + ")"
            found[word] = (cond, held, int(counts.get(f"w{i}") or 0))
    return int(counts.get("n") or 0), found


def _line(tool: str, row: dict[str, Any], extra: tuple[str, ...]) -> tuple[str, str, str]:
    rid = str(row.get("event_id") or row.get("store_id") or "")
    name = str(row.get("event_name") or row.get("store_name") or rid)
    if tool == "search_events":
        when = f"{row.get('start_date')}〜{row.get('end_date')}、{row.get('venue', '')}"
    else:
        when = str(row.get("category") or "")
    shown = [f"{table_words.COLUMN_LABELS.get(c, c)}: {_cell(row.get(c))}" for c in extra]
    about = str(row.get("description") or "")
    about = about if len(about) <= 50 else about[:49] + "…"
    detail = "、".join(shown) if shown else about
    return rid, name, f"・{name}({when}){detail}({rid})"


def _cell(value: Any) -> str:
    if isinstance(value, str) and value[:1] in "[{":
        try:
            return table_words.describe_json(json.loads(value))
        except json.JSONDecodeError:
            return value
    return "" if value is None else str(value)


def table_answer(
    question: str,
    table: table_routes.TableQuery,
    call: Call,
    events: list[Event],
    *,
    strict: bool = False,
) -> tuple[str | None, list[Citation], str]:
    """The rows a store/event question asks for, as a list with their ids; (None, [], reason)
    when no row matches. A word every other row holds (東京 in every address) narrows nothing
    and is left out. ``strict`` (a question no template took): every word must be found, or
    the question is about something the table does not hold."""
    tool = table.tool
    where = list(table.where)
    labels = list(table.conditions)
    dropped = []
    show = list(table.show)
    select = table.select
    rows_in_table, conditions = _keyword_conditions(call, events, tool, tuple(table.keywords))
    for word in table.keywords:
        found = conditions.get(word)
        if found is None or found[2] * 2 > rows_in_table:
            dropped.append(word)
            continue
        where.append(found[0])
        labels.append(f"「{word}」")
        if "address" in found[1] and "address" not in show:  # an area: show where each is
            show.append("address")
    if strict and dropped:
        return None, [], f"「{'」「'.join(dropped)}」は表で絞り込めません"
    if dropped and not where:  # the question's only point is a word no row holds
        missing = "」「".join(dropped)
        return None, [], f"「{missing}」は表のどの列にもありません"
    wanted = "・".join(labels) or "すべて"
    note = f"「{'」「'.join(dropped)}」では表を絞り込めないので条件にしません。" if dropped else ""
    total = _count(call, events, tool, where)
    sql = select + _where(where) + f" ORDER BY {table.order} LIMIT {MAX_LISTED}"
    data, rows = _listed(
        call, events, tool, sql, f"表の条件: {wanted}。{note}次の SQL で検索します: "
    )
    past = ""
    if not rows and table.upcoming in where:  # nothing ahead: what there was, said to be past
        where = [w for w in where if w != table.upcoming]
        before = select + _where(where) + f" ORDER BY start_date DESC, event_id LIMIT {MAX_LISTED}"
        data, rows = _listed(
            call, events, tool, before, "これからの予定はないので、過去の開催を探します: "
        )
        total = _count(call, events, tool, where)
        upcoming = labels[0] if labels else ""
        past = f"{upcoming}の予定はありません。過去の開催:" if rows else ""
        wanted = "・".join(labels[1:]) or "すべて"
    if not rows:
        message = data.get("message") or data.get("error") or "該当する行がありません"
        return None, [], f"{wanted}: {message}"
    kind = "イベント" if tool == "search_events" else "店舗"
    lines, cites = [], []
    for row in rows:
        rid, name, line = _line(tool, row, tuple(show))
        lines.append(line)
        cites.append(Citation(doc_id=rid, collection=TABLE_OF[tool], title=name, tool=tool))
    n = total if total is not None else len(rows)
    shown = f"{n}件中{len(rows)}件を表示" if n > len(rows) else f"{n}件"
    head = f"{wanted}の{kind}は次のとおりです(表 {TABLE_OF[tool]}、{shown})。{note}"
    if past:
        head = f"{past}{wanted}の{kind}(表 {TABLE_OF[tool]}、{shown})。{note}"
    return head + "\n" + "\n".join(lines), cites, ""

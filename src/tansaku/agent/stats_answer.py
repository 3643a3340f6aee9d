"""Statistics questions answered from the daily-report table with no model: the figure asked
for, a breakdown a manager reads (per store, per week, the words the claims repeat), the change
against the period just before (``compare_periods``) and example reports cited by id — every
figure from a tool call shown in the thoughts."""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import date, timedelta
from typing import Any

from tansaku.agent.events import Citation, Event
from tansaku.text.dates import resolve_dates
from tansaku.tools.spec import ToolScope

_STAT_TOOLS = (
    (re.compile(r"売上|売り上げ|客数"), "get_sales_trend", "売上", "sales"),
    (re.compile(r"現金|過不足|レジ"), "get_cash_difference_analysis", "現金過不足", "cash_diff"),
    (re.compile(r"."), "get_claim_breakdown", "クレーム", "claim_count"),
)
Call = Callable[[list[Event], str, dict[str, Any]], Any]
_COMPARE = re.compile(r"比べ|比較|どっち|どちら|違い|差|多か|少なか|増え|減っ")
_ASKS_TOP = re.compile(r"一番|いちばん|最も|もっとも|トップ|どの店|どこの店|どこが")


def _signed(n: int, unit: str) -> str:
    return f"{n:+,}{unit}" if n else f"±0{unit}"


def _compare(
    call: Call, events: list[Event], metric: str, start: date, end: date
) -> dict[str, Any] | None:
    length = (end - start).days + 1
    before_end = start - timedelta(days=1)
    args = {
        "metric": metric,
        "current_start": start.isoformat(),
        "current_end": end.isoformat(),
        "previous_start": (before_end - timedelta(days=length - 1)).isoformat(),
        "previous_end": before_end.isoformat(),
    }
    data = call(events, "compare_periods", args)
    return None if not isinstance(data, dict) or "error" in data else data


def _claims(data: dict[str, Any]) -> tuple[str, list[Citation]]:
    s = data["summary"]
    stores = "、".join(f"{r['store']} {r['count']}件" for r in data.get("by_store", []))
    weeks = "、".join(f"{r['week'][5:]}週 {r['count']}件" for r in data.get("by_week", []))
    topics = "、".join(f"{r['term']}({r['count']}件)" for r in data.get("topics", []))
    prev = data.get("previous_period") or {}
    lines = [
        f"クレーム {s['claim_count']}件(日報 {s['total_reports']}件、発生率 {s['claim_rate']})。"
        f"直前の同じ長さの期間({prev.get('start_date')}〜{prev.get('end_date')})の"
        f"{s['previous_claim_count']}件から{_signed(s['change'], '件')}。"
    ]
    if stores:
        lines.append(f"・店舗別: {stores}")
    if weeks:
        lines.append(f"・週別: {weeks}")
    if topics:
        lines.append(f"・内容に多い語: {topics}")
    cites = []
    for ex in data.get("examples", []):
        content = ex["content"] if len(ex["content"]) <= 40 else ex["content"][:39] + "…"
        lines.append(f"・例: {ex['date']} {ex['store']}「{content}」({ex['report_id']})")
        cites.append(
            Citation(
                doc_id=ex["report_id"] or f"{ex['date']}:{ex['store']}",
                collection="daily_reports",
                title=f"{ex['date']} {ex['store']} 日報",
                date=ex["date"],
                store=ex["store"],
                tool="get_claim_breakdown",
            )
        )
    return "\n".join(lines), cites


def statistics_answer(
    question: str, scope: ToolScope, call: Call, events: list[Event]
) -> tuple[str | None, list[Citation], str]:
    """The answer to a statistics question, or (None, [], why not)."""
    name, what, metric = next(
        (n, w, m) for pattern, n, w, m in _STAT_TOOLS if pattern.search(question)
    )
    resolved = resolve_dates(question, scope.now)
    found = resolved.range
    other = resolve_dates(resolved.remainder, scope.now).range if found else None
    if found is not None and other is not None and _COMPARE.search(question):
        return _two_periods(call, events, (what, metric), (found, other))
    today = (scope.now.date() if scope.now else None) or date.today()
    start, end = (found.start, found.end) if found else (today - timedelta(days=30), today)
    data = call(events, name, {"date_from": start.isoformat(), "date_to": end.isoformat()})
    if "error" in data:
        return None, [], str(data["error"])
    summary = data.get("summary") or {}
    period = data.get("period") or {}
    counted = summary.get("total_reports", summary.get("report_count", 0))
    if not counted:
        return None, [], f"{start.isoformat()}〜{end.isoformat()}に集計できる日報がありません"
    span = f"{period.get('start_date')}〜{period.get('end_date')}({data.get('store', '全店舗')})"
    if name == "get_claim_breakdown":
        figures, cites = _claims(data)
        return f"{span}の{what}: {figures}\n(表 daily_reports の集計)", cites, ""
    if name == "get_sales_trend":
        figures = (
            f"売上合計 {summary['total_sales']:,}円、日報1件あたり平均 {summary['avg_sales']:,}円"
            f"(日報 {summary['report_count']}件)"
        )
        unit = "円"
        stores = data.get("by_store") or []
        if len(stores) > 1:
            listed = "、".join(f"{r['store']} {r['sales']:,}円" for r in stores)
            figures += f"。店舗別: {listed}"
            if _ASKS_TOP.search(question):
                best = stores[0]
                figures = f"最も多いのは{best['store']}({best['sales']:,}円)。" + figures
    else:
        split = data.get("breakdown") or {}
        plus, minus = split.get("plus") or {}, split.get("minus") or {}
        figures = (
            f"過不足のあった日 {summary['diff_count']}件(日報 {summary['total_reports']}件、"
            f"発生率 {summary['diff_rate'] or '0%'})、合計 {summary['total_diff']:+,}円"
            f"(過剰 {plus.get('count', 0)}件 {plus.get('total', 0):+,}円、"
            f"不足 {minus.get('count', 0)}件 {minus.get('total', 0):+,}円)"
        )
        unit = "円"
    compared = _compare(
        call,
        events,
        metric,
        date.fromisoformat(period["start_date"]),
        date.fromisoformat(period["end_date"]),
    )
    if compared is not None:
        figures += _comparison_text(compared, unit)
    return f"{span}の{what}: {figures}。(表 daily_reports の集計)", [], ""


def _two_periods(
    call: Call, events: list[Event], measure: tuple[str, str], periods: tuple[Any, Any]
) -> tuple[str | None, list[Citation], str]:
    """「先月と先々月、クレームはどっちが多かった?」: the two periods the question names."""
    what, metric = measure
    later, earlier = sorted(periods, key=lambda p: p.start, reverse=True)
    args = {
        "metric": metric,
        "current_start": later.start.isoformat(),
        "current_end": later.end.isoformat(),
        "previous_start": earlier.start.isoformat(),
        "previous_end": earlier.end.isoformat(),
    }
    data = call(events, "compare_periods", args)
    if not isinstance(data, dict) or "error" in data:
        return None, [], str(data.get("error") if isinstance(data, dict) else data)
    unit = "件" if metric == "claim_count" else "円"
    now, before = data.get("current_period") or {}, data.get("previous_period") or {}
    a, b = int(now.get("value") or 0), int(before.get("value") or 0)
    first = f"{later.expression or '後の期間'}({later.start}〜{later.end})"
    second = f"{earlier.expression or '前の期間'}({earlier.start}〜{earlier.end})"
    if a == b:
        verdict = "同じです"
    else:
        verdict = f"{first if a > b else second}のほうが{abs(a - b):,}{unit}多い"
    text = (
        f"{what}: {first} {a:,}{unit}、{second} {b:,}{unit}。{verdict}。(表 daily_reports の集計)"
    )
    return text, [], ""


def _comparison_text(data: dict[str, Any], unit: str) -> str:
    prev = data.get("previous_period") or {}
    comparison = data.get("comparison") or {}
    diff = comparison.get("diff")
    if diff is None or not prev:
        return ""
    rate = comparison.get("change_rate")
    return (
        f"。直前の同じ長さの期間({prev.get('start')}〜{prev.get('end')})の"
        f"{prev.get('value', 0):,}{unit}に比べ{_signed(int(diff), unit)}"
        + (f"({rate})" if rate else "")
    )

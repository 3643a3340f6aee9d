"""Human-readable output for the CLI (rich), and what keeps it safe for a terminal.

Everything printed from outside the program — queries, stored text and metadata, file names,
error messages — goes through :func:`safe` (or :func:`inline`): control characters (C0 but
tab and newline, DEL, C1) and bidirectional-override characters are shown as visible escapes
(``\\x1b``, ``\\u202e``) instead of reaching the terminal, and rich markup is escaped. JSON
output never goes through rich; :func:`json_safe` escapes the same characters there.
"""

from __future__ import annotations

import re
from datetime import date
from typing import TYPE_CHECKING

from rich.console import Console
from rich.markup import escape
from rich.table import Table

if TYPE_CHECKING:  # what is rendered; imported by the commands that make it
    from tansaku.client import CollectionInfo
    from tansaku.ingest.pipeline import IngestReport
    from tansaku.search.plan import SearchPlan
    from tansaku.search.types import SearchResult

# C0 except tab and newline, DEL, C1, and the bidi marks/embeddings/overrides/isolates that can
# reorder what a terminal shows ("Trojan source")
_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]")
_UNSAFE_IN_JSON = re.compile("[\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]")  # C0: json


def _visible(m: re.Match[str]) -> str:
    code = ord(m.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def plain(text: object) -> str:
    """``text`` with its unsafe characters as visible escapes (no markup escaping)."""
    return _UNSAFE.sub(_visible, str(text))


def safe(text: object) -> str:
    """``text`` ready for ``console.print`` with markup: unsafe characters escaped, markup
    (``[bold]``…) shown literally."""
    return escape(plain(text))


def inline(text: object) -> str:
    """:func:`safe` on one line: runs of whitespace (newlines included) become one space."""
    return safe(" ".join(str(text).split()))


def json_safe(text: str) -> str:
    """JSON text with DEL, C1 and bidi characters as ``\\uXXXX`` escapes (still the same JSON:
    those characters only occur inside strings; ``json.dumps`` escapes C0 itself)."""
    return _UNSAFE_IN_JSON.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def print_ingest(console: Console, report: IngestReport, collection: str, team: str) -> None:
    head = "[dry-run] " if report.dry_run else ""
    console.print(
        f"{escape(head)}コレクション [bold]{safe(collection)}[/] (チーム {safe(team)}): "
        f"追加 {report.inserted} / 更新 {report.updated} / 変更なし {report.unchanged} / "
        f"削除 {report.deleted} / 埋め込み {report.embedded} / スキップ {report.skipped}"
    )
    fields = report.by_field()
    if len(fields) > 1:  # the namespaces' breakdown (one field says nothing more)
        parts = " / ".join(f"{safe(name)} {n}" for name, n in fields.items())
        console.print(f"フィールド別の記録数: {parts}")
    for f in report.failed:
        console.print(f"[red]失敗[/] {inline(f.path)}: {inline(f.reason)}")


_UNUSED_DATE = {
    "filter": "日付の指定があるため使いませんでした",
    "no_dates": "日付のある記録がないため使いませんでした",
}


def date_line(plan: SearchPlan) -> str | None:
    """「日付: 2025-12-10 〜 2025-12-10(「昨日」から)」: the date filter the search ran with,
    and a date expression of the query that did not filter (plain text, not yet escaped)."""
    parts: list[str] = []
    applied = plan.date_filter
    if applied:
        span = f"{_day(applied.start)} 〜 {_day(applied.end)}".strip()
        origin = f"「{applied.expression}」から" if applied.source == "query" else "指定"
        parts.append(f"日付: {span}({origin})")
    unused = plan.date_unused
    if unused:
        reason = _UNUSED_DATE.get(unused.reason, "使いませんでした")
        r = unused.range
        parts.append(f"「{r.expression}」({_day(r.start)} 〜 {_day(r.end)})は{reason}")
    return " / ".join(parts) or None


def _day(value: date | None) -> str:
    return value.isoformat() if value else ""


def _preview(text: str, limit: int) -> str:
    from tansaku.search.merge import preview

    return preview(text, limit)


def print_suggestion(console: Console, result: SearchResult) -> None:
    """What a search that found nothing tried and what to try next (``result.suggestion``)."""
    hint = result.suggestion
    if hint is None:
        console.print(
            "[yellow]該当する結果がありません。言い換えるか、別のコレクションを試してください[/]"
        )
        return
    console.print(f"[yellow]{inline(hint.message)}[/]")
    for line in hint.tried:
        console.print(f"[dim]  済: {inline(line)}[/]")
    for tip in hint.tips:
        console.print(f"  ・{inline(tip)}")
    if hint.queries:
        console.print("  言い換えの例: " + " ".join(f"「{inline(q)}」" for q in hint.queries))


def print_search(console: Console, result: SearchResult, *, empty: bool = False) -> None:
    """The result; ``empty``: the team has no record in the collection at all (a different
    message from a search that found nothing)."""
    plan = result.plan
    console.print(
        f"[bold]「{inline(result.query)}」[/] — {len(result.hits)}件 "
        f"({safe(plan.collection)}, {result.timings_ms.get('total', 0):.1f} ms)"
    )
    dates = date_line(plan)
    if dates:
        console.print(f"[dim]{inline(dates)}[/]")
    where = plan.filter.where
    if where:
        console.print(f"[dim]条件: {inline(', '.join(where))}[/]")
    if not result.hits and empty:
        console.print(
            f"[yellow]コレクション「{safe(plan.collection)}」にはチーム「{safe(plan.tenant)}」の"
            "データがまだありません。tansaku ingest で取り込んでから検索してください[/]"
        )
        return
    if not result.hits:
        print_suggestion(console, result)
        return
    for i, hit in enumerate(result.hits, start=1):
        meta = hit.record.metadata
        title = inline(meta.get("title") or hit.doc_id)
        extra = " ".join(inline(meta[k]) for k in ("date", "store", "chapter") if meta.get(k))
        axes = " ".join(f"{inline(name)}#{a.rank}" for name, a in hit.axes.items())
        console.print(
            f"[bold cyan]{i:>2}.[/] [green]{hit.score:.3f}[/] [bold]{title}[/]"
            f" [dim]{inline(hit.record.id)}{'  ' + extra if extra else ''}  ({axes})[/]"
        )
        console.print(f"    {safe(_preview(hit.record.text, 110))}")


def print_collections(console: Console, infos: list[CollectionInfo]) -> None:
    if not infos:
        console.print(
            "コレクションはまだありません。`tansaku ingest PATH --collection 名前` で作成できます"
        )
        return
    table = Table()
    table.add_column("コレクション")
    table.add_column("件数", justify="right")
    table.add_column("チーム")
    table.add_column("検索軸")
    table.add_column("説明", overflow="fold")
    for info in infos:
        table.add_row(
            inline(info.name),
            str(info.points),
            inline(", ".join(info.teams)) or "-",
            inline(", ".join(info.axes)),
            inline(info.description),
        )
    console.print(table)

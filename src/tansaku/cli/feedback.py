"""``tansaku feedback export`` — the improvement loop of design 004 from the command line.

Without a format flag: a summary (searches, zero-hit rate, 👎 rate by query type, the terms
most frequent in 👎 queries). ``--json``: the statistics and every feedback row. ``--csv``: the
feedback rows, one a line, cells that a spreadsheet would run as a formula neutralised.
Dates are days in Asia/Tokyo; ``--to`` is inclusive.
"""

from __future__ import annotations

import csv
import sys
from datetime import date, datetime, time, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any
from zoneinfo import ZoneInfo

import typer

from tansaku.cli import render
from tansaku.cli.common import (
    EXIT_REJECTED,
    HomeOpt,
    JsonOpt,
    TeamOpt,
    emit_json,
    fail,
    library_errors,
    out,
)
from tansaku.cli.keys import open_db
from tansaku.workspace import DEFAULT_TEAM

if TYPE_CHECKING:
    from tansaku.appdb.feedback import FeedbackRecord
    from tansaku.appdb.stats import FeedbackStats

TOKYO = ZoneInfo("Asia/Tokyo")
DEFAULT_DAYS = 30
CSV_COLUMNS = (
    "created_at",
    "query_id",
    "rating",
    "reason",
    "query",
    "normalized_query",
    "query_type",
    "collection",
    "namespaces",
    "top_titles",
    "top_scores",
    "min_score",
    "stage",
    "zero_hit",
)
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")

group = typer.Typer(help="検索結果への評価(👍/👎)の集計と書き出し", no_args_is_help=True)


def _day(value: str | None, option: str) -> date | None:
    if value is None:
        return None
    try:
        return date.fromisoformat(value.strip())
    except ValueError:
        raise fail(
            f"{option} の日付「{value}」を読めません。YYYY-MM-DD で指定してください",
            EXIT_REJECTED,
        ) from None


def period(date_from: str | None, date_to: str | None) -> tuple[datetime, datetime]:
    """``[from 00:00, to+1 00:00)`` in Tokyo; defaults: the last 30 days up to today."""
    end_day = _day(date_to, "--to") or datetime.now(TOKYO).date()
    start_day = _day(date_from, "--from") or end_day - timedelta(days=DEFAULT_DAYS - 1)
    if start_day > end_day:
        raise fail(f"--from({start_day})は --to({end_day})以前にしてください", EXIT_REJECTED)
    start = datetime.combine(start_day, time(), TOKYO)
    end = datetime.combine(end_day + timedelta(days=1), time(), TOKYO)
    return start, end


def _cell(value: Any) -> str:
    if isinstance(value, list | tuple):
        value = "|".join(str(v) for v in value)
    text = "" if value is None else str(value)
    return "'" + text if text.startswith(_FORMULA_START) else text


def csv_row(fb: FeedbackRecord) -> list[str]:
    meta = fb.meta
    row: dict[str, Any] = {
        "created_at": fb.created_at.astimezone(TOKYO).isoformat(timespec="seconds"),
        "query_id": fb.query_id,
        "rating": fb.rating,
        "reason": fb.reason,
        **{k: meta.get(k) for k in CSV_COLUMNS[4:]},
    }
    return [_cell(row[c]) if c != "rating" else str(row[c]) for c in CSV_COLUMNS]


def _pct(rate: float | None) -> str:
    return "-" if rate is None else f"{rate * 100:.1f}%"


def print_summary(stats: FeedbackStats, start: datetime, end: datetime) -> None:
    from rich.table import Table

    last = (end - timedelta(days=1)).date()
    out.print(f"[bold]チーム「{render.inline(stats.team)}」 {start.date()} 〜 {last}[/]")
    out.print(
        f"検索 {stats.searches:,} 件(0件 {stats.zero_hit:,} 件、0件率 {_pct(stats.zero_hit_rate)})"
    )
    if stats.questions:
        out.print(
            f"質問 {stats.questions:,} 件(未回答 {stats.unanswered:,} 件、"
            f"未回答率 {_pct(stats.unanswered_rate)})"
        )
    out.print(
        f"評価 {stats.feedback:,} 件(👍 {stats.positive:,} / 👎 {stats.negative:,}、"
        f"👎率 {_pct(stats.negative_rate)})"
    )
    if stats.by_query_type:
        table = Table(box=None, header_style="bold", title="クエリ種別ごと", title_justify="left")
        for col in ("種別", "検索", "0件率", "評価", "👎", "👎率"):
            table.add_column(col, justify="left" if col == "種別" else "right")
        for t in stats.by_query_type:
            table.add_row(
                render.inline(t.query_type or "(不明)"),
                f"{t.searches:,}",
                _pct(t.zero_hit_rate),
                f"{t.feedback:,}",
                f"{t.negative:,}",
                _pct(t.negative_rate),
            )
        out.print(table)
    if stats.top_negative_terms:
        terms = "、".join(f"{render.inline(t)}({n})" for t, n in stats.top_negative_terms)
        out.print(f"👎 のクエリに多い語: {terms}", highlight=False)
    if stats.top_zero_hit_queries:
        out.print("0件の多いクエリ:")
        for q, n in stats.top_zero_hit_queries:
            out.print(f"  {n:>4}  {render.inline(q)}", highlight=False)


@group.command("export")
def export(
    date_from: Annotated[
        str | None, typer.Option("--from", help="集計の初日 YYYY-MM-DD(既定: --to の29日前)")
    ] = None,
    date_to: Annotated[
        str | None, typer.Option("--to", help="集計の最終日 YYYY-MM-DD(この日を含む、既定: 今日)")
    ] = None,
    as_csv: Annotated[bool, typer.Option("--csv", help="評価を1行ずつ CSV で出力する")] = False,
    as_json: JsonOpt = False,
    team: TeamOpt = DEFAULT_TEAM,
    home: HomeOpt = None,
) -> None:
    """期間の評価を集計して書き出す(検索数・0件率・種別ごとの👎率・👎のクエリに多い語)。"""
    if as_csv and as_json:
        raise fail("--csv と --json はどちらか一方を指定してください", EXIT_REJECTED)
    from tansaku.appdb.rows import Period

    start, end = period(date_from, date_to)
    with library_errors(), open_db(home, create=False) as db:
        rows = db.feedback.find(team, Period(start, end))
        if as_csv:
            writer = csv.writer(sys.stdout, lineterminator="\n")
            writer.writerow(CSV_COLUMNS)
            writer.writerows(csv_row(fb) for fb in rows)
            return
        stats = db.feedback.feedback_stats(team, start, end)
    if as_json:
        items = []
        for fb in rows:
            item = fb.to_dict()
            item.pop("client", None)  # an IP address or key id: not for exports
            items.append(item)
        emit_json({"stats": stats.to_dict(), "feedback": items})
        return
    print_summary(stats, start, end)


@group.command("judgements")
def judgements_command(
    collection: Annotated[
        str | None,
        typer.Option(
            "--collection", "-c", help="コレクション(👎 の正解が複数のコレクションにあるとき必須)"
        ),
    ] = None,
    out_path: Annotated[
        Path | None, typer.Option("--out", help="書き出す YAML ファイル(既定: 標準出力)")
    ] = None,
    date_from: Annotated[str | None, typer.Option("--from", help="初日 YYYY-MM-DD")] = None,
    date_to: Annotated[
        str | None, typer.Option("--to", help="最終日 YYYY-MM-DD(この日を含む)")
    ] = None,
    team: TeamOpt = DEFAULT_TEAM,
    home: HomeOpt = None,
) -> None:
    """👎 で「正しい結果はこれ」と選ばれた検索を、tansaku eval / tune の判定ファイルにする。"""
    import yaml

    from tansaku.appdb.judgements import judgement_file, judgements
    from tansaku.appdb.rows import EVER, Period

    chosen = Period(*period(date_from, date_to)) if date_from or date_to else EVER
    with library_errors(), open_db(home, create=False) as db:
        rows = db.feedback.find(team, chosen)
    items = judgements(rows, collection)
    names = sorted({j.collection for j in items})
    if not items:
        raise fail("正しい結果が選ばれた 👎 はまだありません", EXIT_REJECTED)
    if collection is None and len(names) > 1:
        raise fail(
            f"正しい結果が複数のコレクションにあります({'、'.join(names)})。"
            "--collection で一つ選んでください",
            EXIT_REJECTED,
        )
    data = judgement_file(items, collection or names[0], team)
    text = yaml.safe_dump(data, allow_unicode=True, sort_keys=False)
    if out_path is None:
        sys.stdout.write(text)
        return
    out_path.write_text(text, encoding="utf-8")
    typer.echo(f"{len(data['queries'])}件のクエリを {out_path} に書き出しました")


def register(app: typer.Typer) -> None:
    app.add_typer(group, name="feedback")

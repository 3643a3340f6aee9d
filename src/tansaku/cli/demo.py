"""``tansaku demo``: build the demo workspace from the bundled examples and show searches."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from tansaku.cli import render
from tansaku.cli.common import HomeOpt

if TYPE_CHECKING:
    from tansaku.ingest.pipeline import IngestReport

demo_app = typer.Typer(
    help="同梱のサンプルデータでデモ用ワークスペースを作り、検索例を表示する",
    invoke_without_command=True,
    no_args_is_help=False,
)


def _clock(now: str | None) -> datetime:
    """``--now`` as an aware Tokyo datetime; the current time when not given."""
    from tansaku.cli.common import parse_now
    from tansaku.text.dates import now_tokyo

    return parse_now(now) or now_tokyo()


def _build(home: Path | None, clock: datetime) -> bool:
    """Build or update the demo for the day of ``clock``; True when the tables were installed."""
    from tansaku.cli.common import EXIT_ERROR, err, library_errors, out
    from tansaku.cli.common import connect as _connect
    from tansaku.cli.common import progress_bar as _progress_bar
    from tansaku.demo.build import build_demo, install_tables
    from tansaku.demo.days import demo_window

    window = demo_window(clock)
    with library_errors(EXIT_ERROR), _connect(home) as ts, _progress_bar() as bar:
        tasks: dict[str, Any] = {}

        def progress(stage: str, done: int, total: int) -> None:
            if stage != "embed":
                return
            if stage not in tasks:
                tasks[stage] = bar.add_task("埋め込み", total=total, rate="")
            bar.update(tasks[stage], completed=done, total=total)

        def on_collection(name: str, report: IngestReport) -> None:
            if "embed" in tasks:
                bar.remove_task(tasks.pop("embed"))
            render.print_ingest(out, report, name, "default")

        out.print(f"デモ用ワークスペース: {ts.workspace.home}")
        out.print(
            f"日報の基準日: {window.today}(日報は {window.start}〜{window.end}。"
            "別の日に再実行すると、その日に合わせて更新します)"
        )
        reports = build_demo(ts, now=clock, progress=progress, on_collection=on_collection)
        tables = install_tables(ts.workspace.home, now=clock)
    if tables:
        out.print(f"表(SQL ツール用): {', '.join(tables)}")
    else:
        err.print("表の登録は省略しました(`pip install 'tansaku[tables]'` で有効になります)")
    if any(r.failed for r in reports.values()):
        raise typer.Exit(1)
    return bool(tables)


def _run(home: Path | None, clock: datetime, *, tables: bool) -> None:
    from tansaku.cli.common import EXIT_ERROR, library_errors, out
    from tansaku.cli.common import connect as _connect
    from tansaku.demo.build import SAMPLE_QUERIES, demo_hints
    from tansaku.demo.days import demo_today

    with library_errors(EXIT_ERROR), _connect(home) as ts:
        for sample in SAMPLE_QUERIES:
            result = ts.search(sample.query, collection=sample.collection, top_k=3, now=clock)
            out.print()
            out.rule(f"[bold]{sample.collection}[/] — {sample.why}")
            render.print_search(out, result)
    out.print()
    out.print("自分で試すには:")
    for hint in demo_hints(demo_today(clock), home=home, tables=tables):
        out.print(
            f"  {hint.command}    # {hint.why}", markup=False, highlight=False, soft_wrap=True
        )


NowOpt = Annotated[
    str | None,
    typer.Option(
        "--now",
        help="日報の基準日 YYYY-MM-DD[THH:MM](既定: 現在の東京時刻)。日報はこの日の前日まで",
    ),
]


@demo_app.callback()
def demo(ctx: typer.Context, home: HomeOpt = None, now: NowOpt = None) -> None:
    """デモ用ワークスペースを作成(更新)して、検索例を実行する。"""
    ctx.obj = (home, now)
    if ctx.invoked_subcommand is None:
        clock = _clock(now)
        tables = _build(home, clock)
        _run(home, clock, tables=tables)


@demo_app.command("build")
def build(ctx: typer.Context, home: HomeOpt = None, now: NowOpt = None) -> None:
    """デモ用ワークスペースを作成・更新する(同じ日なら何度実行しても同じ結果)。"""
    parent_home, parent_now = ctx.obj or (None, None)
    _build(home if home is not None else parent_home, _clock(now or parent_now))


def register(app: typer.Typer) -> None:
    app.add_typer(demo_app, name="demo")

"""``tansaku demo``: build the demo workspace from the bundled examples and show searches."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from tansaku.cli import render
from tansaku.errors import TansakuError
from tansaku.ingest.pipeline import IngestReport

demo_app = typer.Typer(
    help="同梱のサンプルデータでデモ用ワークスペースを作り、検索例を表示する",
    invoke_without_command=True,
    no_args_is_help=False,
)


def _build(home: Path | None) -> None:
    from tansaku.cli.main import _connect, _progress_bar, err, fail, out
    from tansaku.demo.build import build_demo, install_tables

    try:
        with _connect(home) as ts, _progress_bar() as bar:
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
            reports = build_demo(ts, progress=progress, on_collection=on_collection)
            tables = install_tables(ts.workspace.home)
    except TansakuError as exc:
        raise fail(str(exc)) from None
    if tables:
        out.print(f"表(SQL ツール用): {', '.join(tables)}")
    else:
        err.print("表の登録は省略しました(`pip install 'tansaku[tables]'` で有効になります)")
    if any(r.failed for r in reports.values()):
        raise typer.Exit(1)


def _run(home: Path | None) -> None:
    from tansaku.cli.main import _connect, fail, out
    from tansaku.demo.build import SAMPLE_QUERIES

    try:
        with _connect(home) as ts:
            for sample in SAMPLE_QUERIES:
                result = ts.search(sample.query, collection=sample.collection, top_k=3)
                out.print()
                out.rule(f"[bold]{sample.collection}[/] — {sample.why}")
                render.print_search(out, result)
    except TansakuError as exc:
        raise fail(str(exc)) from None
    out.print()
    out.print('自分で検索するには: tansaku search "昨日のクレーム" --collection reports')


HomeOpt = Annotated[
    Path | None,
    typer.Option("--home", help="ワークスペースのフォルダ(既定: $TANSAKU_HOME または ./.tansaku)"),
]


@demo_app.callback()
def demo(ctx: typer.Context, home: HomeOpt = None) -> None:
    """デモ用ワークスペースを作成(更新)して、検索例を実行する。"""
    ctx.obj = home
    if ctx.invoked_subcommand is None:
        _build(home)
        _run(home)


@demo_app.command("build")
def build(ctx: typer.Context, home: HomeOpt = None) -> None:
    """デモ用ワークスペースを作成・更新する(何度実行しても同じ結果)。"""
    _build(home if home is not None else ctx.obj)


def register(app: typer.Typer) -> None:
    app.add_typer(demo_app, name="demo")

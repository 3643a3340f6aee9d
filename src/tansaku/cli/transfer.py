"""``tansaku export`` / ``tansaku import``: a collection to one file and back, in another
workspace or backend, without re-embedding (``tansaku.transfer``)."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from tansaku.cli.common import (
    HomeOpt,
    JsonOpt,
    connect,
    err,
    library_errors,
    progress_bar,
    show_report,
)

ProgressFn = Callable[[str, int, int], None]
STAGES = {
    "export": ("書き出し", "件"),
    "verify": ("ファイルの検査", "バイト"),
    "import": ("取り込み", "件"),
    "index": ("索引の作成", ""),
}


@contextmanager
def _progress() -> Iterator[ProgressFn]:
    """A progress bar per stage on a terminal; else one line on stderr as each stage ends."""
    if not err.is_terminal:
        ended: set[str] = set()

        def line(stage: str, done: int, total: int) -> None:
            label, unit = STAGES.get(stage, (stage, ""))
            if done >= total and stage not in ended:
                ended.add(stage)
                err.print(f"{label}: {done:,} {unit}".rstrip(), highlight=False)

        yield line
        return
    bar = progress_bar()
    tasks: dict[str, tuple[object, float]] = {}

    def show(stage: str, done: int, total: int) -> None:
        label, unit = STAGES.get(stage, (stage, ""))
        if stage not in tasks:
            tasks[stage] = (bar.add_task(label, total=max(total, 1), rate=""), time.monotonic())
        task, start = tasks[stage]
        rate = done / max(time.monotonic() - start, 1e-6)
        text = f"{rate:,.0f} {unit}/秒" if unit else ""
        bar.update(task, completed=done, total=max(total, 1), rate=text)  # type: ignore[arg-type]

    with bar:
        yield show


def _size(n: int) -> str:
    return f"{n / 1_000_000:,.1f} MB" if n >= 100_000 else f"{n:,} バイト"


def export(
    collection: Annotated[str, typer.Argument(help="書き出すコレクション名")],
    output: Annotated[
        Path | None,
        typer.Option(
            "--output",
            "-o",
            help="出力ファイル(フォルダなら その中に 名前.tansaku.tar。既定: ./名前.tansaku.tar)",
        ),
    ] = None,
    force: Annotated[bool, typer.Option("--force", help="既存の出力ファイルを上書きする")] = False,
    as_json: JsonOpt = False,
    home: HomeOpt = None,
) -> None:
    """コレクション(設定・統計・全チームの記録とベクトル)を1つのファイルに書き出す。
    埋め込みキャッシュは含みません。"""
    from tansaku.transfer import export_collection

    with library_errors(), connect(home, create=False) as ts, _progress() as progress:
        report = export_collection(ts, collection, output, overwrite=force, progress=progress)
    summary = (
        f"コレクション「{escape(collection)}」を書き出しました: {escape(str(report.path))}"
        f"({report.records:,} 件、チーム {len(report.teams)}、{_size(report.bytes)})"
    )
    show_report(report, as_json, summary)


def import_(
    file: Annotated[Path, typer.Argument(help="tansaku export で書き出したファイル")],
    name: Annotated[
        str | None, typer.Option("--as", help="この名前のコレクションとして取り込む")
    ] = None,
    replace: Annotated[
        bool, typer.Option("--replace", help="同じ名前の既存コレクションを置き換える")
    ] = False,
    as_json: JsonOpt = False,
    home: HomeOpt = None,
) -> None:
    """tansaku export のファイルをコレクションとして取り込む(埋め込み直しはしません)。"""
    from tansaku.transfer import import_collection

    with library_errors(), connect(home) as ts, _progress() as progress:
        report = import_collection(ts, file, name=name, replace=replace, progress=progress)
    verb = "置き換えました" if report.replaced else "取り込みました"
    summary = (
        f"コレクション「{escape(report.collection)}」に {report.records:,} 件を{verb}"
        f"(チーム {len(report.teams)}、文単位 {report.units:,} 件を再構築、埋め込みなし)"
    )
    show_report(report, as_json, summary)


def register(app: typer.Typer) -> None:
    app.command("export")(export)
    app.command("import")(import_)

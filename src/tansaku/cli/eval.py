"""The ``tansaku eval`` command (a thin adapter over :mod:`tansaku.eval`).

``register(app)`` adds it to the main ``tansaku`` app. Exit codes: 0 when the evaluation ran,
1 for a dataset, config or workspace error (Japanese message on stderr). ``--json`` prints
``{"dataset", "configs": [{"name", "metrics": {...}}]}`` on stdout.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from tansaku.cli.common import EXIT_ERROR, HomeOpt, JsonOpt, TeamOpt, library_errors
from tansaku.workspace import DEFAULT_TEAM

ConnectFn = Callable[[Path | None], Any]


def _default_connect(home: Path | None) -> Any:
    import tansaku

    return tansaku.connect(home)


def _print_table(report: Any) -> None:
    from tansaku.eval.metrics import METRIC_KEYS
    from tansaku.eval.report import HEADERS, _fmt, summary_lines

    out = Console(soft_wrap=False)
    if not out.is_terminal:  # piped: a Markdown table that no terminal width truncates
        from tansaku.eval.report import markdown_table

        sys.stdout.write(markdown_table(report))
        for line in summary_lines(report):
            sys.stdout.write(f"{line}\n")
        return
    table = Table(title=f"tansaku eval: {report.dataset.name}")
    table.add_column("設定")
    for k in METRIC_KEYS:
        table.add_column(HEADERS[k], justify="right")
    for c in report.configs:
        table.add_row(c.name, *(_fmt(k, c.metrics[k]) for k in METRIC_KEYS))
    out.print(table)
    for line in summary_lines(report):
        out.print(line, highlight=False, markup=False)


def register(app: typer.Typer, *, connect: ConnectFn | None = None) -> None:
    """Add ``eval`` to ``app``; ``connect(home)`` opens the workspace (tests inject a fake
    embedder through it)."""
    opener = connect or _default_connect

    @app.command("eval")
    def eval_command(
        dataset: Annotated[
            Path,
            typer.Argument(help="BEIR 形式のフォルダ、または判定ファイル(.yaml/.yml/.csv)"),
        ],
        config: Annotated[
            list[Path] | None,
            typer.Option(
                "--config",
                help="比較する設定(TOML、複数可)。省略時は default・bm25・dense",
            ),
        ] = None,
        as_json: JsonOpt = False,
        out: Annotated[
            Path | None,
            typer.Option("--out", help="結果(results.md / results.csv / results.png)の出力先"),
        ] = None,
        collection: Annotated[
            str | None,
            typer.Option("--collection", "-c", help="判定ファイルで評価するコレクション"),
        ] = None,
        split: Annotated[str, typer.Option("--split", help="BEIR の qrels(既定: test)")] = "test",
        team: TeamOpt = DEFAULT_TEAM,
        home: HomeOpt = None,
        keep: Annotated[
            bool,
            typer.Option(
                "--keep",
                help="評価用に作った一時コレクション(eval-…)を残す(次回の取り込みを省ける)",
            ),
        ] = False,
        record: Annotated[
            bool,
            typer.Option(
                "--record",
                help="結果(Recall@10・P@10・MRR・nDCG@10)をワークスペースに記録し、"
                "サーバーの /metrics(tansaku_recall_batch)に出す",
            ),
        ] = False,
    ) -> None:
        """検索の品質(nDCG@10・Recall・MRR・P@10・R@1・0件率)と速度を評価する。"""
        from dataclasses import replace

        from tansaku.eval import load_dataset, load_eval_config, run_eval, write_report

        with library_errors(EXIT_ERROR):
            ds = load_dataset(dataset, split=split)
            if collection:
                ds = replace(ds, collection=collection)
            configs = [load_eval_config(p) for p in config or []]
            progress_bar = Progress(
                TextColumn("[bold]{task.description}"),
                BarColumn(),
                MofNCompleteColumn(),
                TimeElapsedColumn(),
                console=Console(stderr=True),
                transient=True,
                disable=as_json,
            )
            tasks: dict[str, Any] = {}

            def progress(stage: str, done: int, total: int) -> None:
                if stage not in tasks:
                    label = {"embed": "埋め込み", "write": "書き込み", "units": "文単位の索引"}.get(
                        stage, stage
                    )
                    tasks[stage] = progress_bar.add_task(label, total=total)
                progress_bar.update(tasks[stage], completed=done, total=total)

            with opener(home) as ts, progress_bar:
                report = run_eval(ts, ds, configs or None, team=team, progress=progress, keep=keep)
                recorded = None
                if record:
                    from tansaku.eval.batch import batch_file, record_batch

                    recorded = batch_file(ts.workspace.logs_dir)
                    record_batch(report, recorded)
            written = write_report(report, out) if out is not None else None
        if as_json:
            sys.stdout.write(json.dumps(report.to_dict(), ensure_ascii=False, indent=2) + "\n")
        else:
            _print_table(report)
        if recorded is not None:
            Console(stderr=True).print(
                f"記録しました(/metrics の tansaku_recall_batch): {recorded}"
            )
        if written is not None:
            err = Console(stderr=True)
            for w in written.warnings:
                err.print(f"[yellow]注意:[/] {w}", highlight=False)
            if not as_json:
                for f in written.files:
                    sys.stdout.write(f"書き出し: {f}\n")


__all__ = ["register"]

"""The ``tansaku tune`` command (a thin adapter over :mod:`tansaku.eval.tune`).

Exit codes: 0 when the fit ran (whether or not it changed anything), 1 for a workspace or
judgement-file error, 2 for bad options. ``--json`` prints the report as JSON on stdout.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from tansaku.cli.common import EXIT_ERROR, HomeOpt, JsonOpt, TeamOpt, fail, library_errors
from tansaku.workspace import DEFAULT_TEAM


def register(app: typer.Typer) -> None:
    @app.command("tune")
    def tune_command(
        collection: Annotated[str, typer.Argument(help="調整するコレクション")],
        judgements: Annotated[
            Path,
            typer.Option(
                "--judgements",
                "-j",
                help="判定ファイル(.yaml/.yml/.csv、BEIR 形式のフォルダ): クエリと正解の文書",
            ),
        ],
        folds: Annotated[int, typer.Option("--folds", help="交差検証の分割数(2〜20)")] = 5,
        write: Annotated[
            bool,
            typer.Option("--write", help="現在の設定より良いと言えるときだけ設定を書き換える"),
        ] = False,
        team: TeamOpt = DEFAULT_TEAM,
        home: HomeOpt = None,
        as_json: JsonOpt = False,
    ) -> None:
        """コレクションの融合(軸の重み・スコアの合わせ方)をチームの判定つきクエリで調整する。"""
        import tansaku
        from tansaku.eval import load_dataset
        from tansaku.eval.tune import tune_collection, write_setting

        if not 2 <= folds <= 20:
            raise fail(f"--folds は 2〜20 で指定してください(現在: {folds})", 2)
        written: Any = None
        with library_errors(EXIT_ERROR):
            ds = load_dataset(judgements)
            with tansaku.connect(home, create=False) as ts:
                report = tune_collection(ts, collection, ds, team=team, folds=folds)
                if write and report.better:
                    written = write_setting(ts, collection, report.best)
        if as_json:
            body = report.to_dict() | {"written": written is not None}
            sys.stdout.write(json.dumps(body, ensure_ascii=False, indent=2) + "\n")
            return
        typer.echo(report.summary())
        if written is not None:
            typer.echo(f"コレクション「{collection}」の設定を書き換えました: {report.best.label()}")
        elif write:
            typer.echo("設定は変えていません。")

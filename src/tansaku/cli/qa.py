"""``tansaku qa generate``: question/answer pairs for every chunk of a collection, written by the
configured chat model into another collection (resumable; see ``tansaku.agent.qa``)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Annotated

import typer

from tansaku.cli import render
from tansaku.cli.common import (
    EXIT_ERROR,
    HomeOpt,
    JsonOpt,
    TeamOpt,
    connect,
    emit_json,
    err,
    fail,
    library_error,
    out,
    progress_bar,
)
from tansaku.errors import TansakuError
from tansaku.workspace import DEFAULT_TEAM

NO_MODEL = (
    "Q/A の生成には言語モデルが必要ですが、設定されていません。"
    "TANSAKU_LLM_MODEL と TANSAKU_LLM_BASE_URL(または ワークスペースの tansaku.toml の [llm])で"
    "モデルを設定してください(docs/qa.md)"
)
qa_app = typer.Typer(help="質問と回答のペア(Q/A)を生成する", no_args_is_help=True)


@qa_app.command("generate")
def generate(
    source: Annotated[str, typer.Option("--from", help="生成元のコレクション")],
    target: Annotated[str, typer.Option("--into", help="生成したペアを入れるコレクション")],
    team: TeamOpt = DEFAULT_TEAM,
    per_chunk: Annotated[
        int, typer.Option("--per-chunk", help="1チャンクあたりのペア数(1〜10)")
    ] = 3,
    workers: Annotated[int, typer.Option("--workers", help="同時にモデルへ問い合わせる数")] = 4,
    limit: Annotated[
        int | None, typer.Option("--limit", help="先頭から N チャンクだけ生成する(試し実行)")
    ] = None,
    fields: Annotated[
        str | None,
        typer.Option("--fields", help="対象のフィールド(カンマ区切り。既定: combined 以外すべて)"),
    ] = None,
    config: Annotated[
        Path | None, typer.Option("--config", help="生成先コレクションを新しく作るときの設定 TOML")
    ] = None,
    as_json: JsonOpt = False,
    home: HomeOpt = None,
) -> None:
    """チャンクごとに質問と回答のペアをモデルに書かせ、別のコレクションに登録する。

    中断しても同じコマンドで続きから再開します(済んだチャンクはワークスペースの qa/ に記録)。
    """
    from tansaku.agent import configured_model
    from tansaku.agent.qa import generate_qa
    from tansaku.config import load_config

    chosen = [f.strip() for f in fields.split(",") if f.strip()] if fields else None
    try:
        cfg = load_config(config, name=target) if config is not None else None
        with connect(home, create=False) as ts:
            model = configured_model(ts)
            if model is None:
                raise fail(NO_MODEL)
            with progress_bar() as bar:
                task = bar.add_task("Q/A 生成", total=None, rate="")
                started = time.monotonic()
                baseline: int | None = None  # chunks already done when this run started

                def tick(done: int, total: int) -> None:
                    nonlocal baseline
                    baseline = done if baseline is None else baseline
                    minutes = max(time.monotonic() - started, 1e-6) / 60
                    new = done - baseline
                    rate = f"{new / minutes:.1f} チャンク/分" if new else ""
                    bar.update(task, completed=done, total=total, rate=rate)

                report = generate_qa(
                    ts,
                    model,
                    source=source,
                    target=target,
                    team=team,
                    per_chunk=per_chunk,
                    workers=workers,
                    limit=limit,
                    fields=chosen,
                    config=cfg,
                    progress=tick,
                )
    except KeyboardInterrupt:
        err.print("中断しました。生成済みのペアは保存されています。同じコマンドで再開できます")
        raise typer.Exit(130) from None
    except TansakuError as exc:
        raise library_error(exc) from None
    if as_json:
        emit_json({"source": source, "target": target, "team": team, **report.to_dict()})
    else:
        ing = report.ingested
        out.print(
            f"{render.inline(source)} → {render.inline(target)}: "
            f"{report.chunks} チャンク(今回生成 {report.generated}、生成済み {report.skipped}、"
            f"失敗 {len(report.failed)})、ペア {report.pairs} 件"
        )
        out.print(
            f"[dim]登録: 追加 {ing.get('inserted', 0)}、更新 {ing.get('updated', 0)}、"
            f"変更なし {ing.get('unchanged', 0)} レコード / 進捗: {report.progress_file}[/]"
        )
        for chunk_id, reason in report.failed[:5]:
            err.print(f"[yellow]失敗:[/] {render.inline(chunk_id)}: {render.inline(reason)}")
    if report.failed:
        err.print("失敗したチャンクは、同じコマンドをもう一度実行すると再び生成します")
        raise typer.Exit(EXIT_ERROR)


def register(app: typer.Typer) -> None:
    app.add_typer(qa_app, name="qa")

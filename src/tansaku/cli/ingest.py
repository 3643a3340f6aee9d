"""``tansaku ingest``: files and folders into a collection, with a progress bar."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from tansaku.cli import render
from tansaku.cli.common import (
    EXIT_ERROR,
    CollectionNameOpt,
    HomeOpt,
    JsonOpt,
    TeamOpt,
    emit_json,
    err,
    library_errors,
    out,
)
from tansaku.workspace import DEFAULT_TEAM


def ingest(
    paths: Annotated[list[Path], typer.Argument(help="取り込むファイルまたはフォルダ")],
    collection: CollectionNameOpt,
    team: TeamOpt = DEFAULT_TEAM,
    config: Annotated[Path | None, typer.Option("--config", help="コレクション設定(TOML)")] = None,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="書き込まずに監査ログ(JSONL)だけ出す")
    ] = False,
    audit: Annotated[Path | None, typer.Option("--audit", help="監査ログ(JSONL)の出力先")] = None,
    sync: Annotated[
        bool, typer.Option("--sync", help="ソースから消えた文書をコレクションからも削除する")
    ] = False,
    combined: Annotated[
        bool | None,
        typer.Option(
            "--combined/--no-combined",
            help="文書全体の記録(項目 combined)を作る/作らない(コレクションの設定に保存。"
            "既定: 設定どおり)",
        ),
    ] = None,
    follow_symlinks: Annotated[
        bool,
        typer.Option(
            "--follow-symlinks",
            help="フォルダの外を指すシンボリックリンクもたどる(既定: 報告して読まない)",
        ),
    ] = False,
    as_json: JsonOpt = False,
    home: HomeOpt = None,
) -> None:
    """ファイルやフォルダをコレクションに取り込む(変更のない内容は再埋め込みしない)。

    読み込み・埋め込み・書き込みを並行して進め、進み具合(文書/秒・チャンク/秒・残り時間)を
    表示する。途中で止まっても(kill -9 でも)、もう一度実行すれば続きから取り込む。"""
    from tansaku.ingest.pipeline import write_audit

    with library_errors(EXIT_ERROR), _ingest_client(home) as ts:
        config = _with_combined(ts, collection, config, combined)
        if dry_run:
            report = ts.ingest(
                paths,
                collection=collection,
                team=team,
                config=config,
                sync=sync,
                dry_run=True,
                follow_symlinks=follow_symlinks,
            )
        else:
            report = _bulk(
                ts, paths, collection, team, config, sync, follow_symlinks, audit, as_json
            )
        audit_path = audit
        if dry_run and audit_path is None:
            audit_path = ts.workspace.logs_dir / f"ingest-audit-{collection}.jsonl"
        if audit_path is not None:
            write_audit(report, audit_path)
    if as_json:
        data = report.to_dict()
        if audit_path is not None:
            data["audit"] = str(audit_path)
        emit_json(data)
    else:
        render.print_ingest(out, report, collection, team)
        if audit_path is not None:
            out.print(f"監査ログ: {audit_path}")
    if report.failed:
        raise typer.Exit(1)


def _with_combined(ts: Any, collection: str, config: Any, combined: bool | None) -> Any:
    """The config with ``[ingest] combined`` set when ``--combined``/``--no-combined`` was
    given (from ``--config``, else the collection's, else the default one)."""
    if combined is None:
        return config
    from dataclasses import replace

    from tansaku.config import CollectionConfig, load_config

    if config is not None:
        cfg = load_config(config, name=collection)
    elif ts.has_collection(collection):
        cfg = ts.collection(collection).config
    else:
        cfg = CollectionConfig(name=collection)
    return replace(cfg, ingest={**cfg.ingest, "combined": combined})


def _ingest_client(home: Path | None) -> Any:
    """The workspace with its configured embedder (``[embedder]`` in tansaku.toml or
    ``TANSAKU_EMBED*``; the bundled model when none is configured)."""
    import tansaku
    from tansaku.embed import load_embedder

    return tansaku.connect(home, embedder=load_embedder(home))


_INGEST_STAGES = {
    "load": "読み込み",
    "write": "取り込み",
    "sync": "削除の反映",
    "index": "索引の構築",
}


def _bulk(
    ts: Any,
    paths: list[Path],
    collection: str,
    team: str,
    config: Any,
    sync: bool,
    follow_symlinks: bool,
    audit: Path | None,
    quiet: bool,
) -> Any:
    """``tansaku ingest`` as a bulk ingest, with one bar over the source bytes: documents and
    chunks per second, and the time left at the rate of the last seconds."""
    from rich.progress import BarColumn, Progress, TaskProgressColumn, TextColumn

    from tansaku.ingest.bulk import BulkOptions, BulkProgress, bulk_ingest

    def clock(seconds: float | None) -> str:
        if seconds is None:
            return "残り --:--"
        s = int(seconds + 0.5)
        return (
            f"残り {s // 3600}:{s // 60 % 60:02d}:{s % 60:02d}"
            if s >= 3600
            else (f"残り {s // 60:02d}:{s % 60:02d}")
        )

    bar = Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        TaskProgressColumn(),
        TextColumn("{task.fields[counts]}"),
        TextColumn("{task.fields[rate]}"),
        TextColumn("{task.fields[eta]}"),
        console=err,
        transient=True,
        disable=quiet,
    )
    task = bar.add_task("取り込み", total=None, counts="", rate="", eta="")

    def show(p: BulkProgress) -> None:
        bar.update(
            task,
            description=_INGEST_STAGES.get(p.stage, p.stage),
            total=max(p.bytes_total, 1),
            completed=p.bytes_done,
            counts=f"{p.documents:,} 文書 / {p.chunks:,} チャンク",
            rate=f"{p.docs_per_s:,.1f} 文書/秒 · {p.chunks_per_s:,.1f} チャンク/秒",
            eta=clock(p.eta_s),
        )

    with bar:
        return bulk_ingest(
            ts,
            paths,
            collection=collection,
            team=team,
            config=config,
            sync=sync,
            on_progress=show,
            on_wait=lambda message: err.print(f"[yellow]{message}[/]"),
            follow_symlinks=follow_symlinks,
            options=BulkOptions(collect_audit=audit is not None),
        )


def register(app: typer.Typer) -> None:
    """Add ``ingest`` to the main app."""
    app.command()(ingest)

"""Keeping collections current: ``tansaku migrate`` (the on-disk layout) and ``tansaku
reembed`` (the embedding model). Thin adapters over ``tansaku.backends.embedded.migrate`` and
``tansaku.maintenance.reembed``."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Annotated, TypeVar

import typer

from tansaku.cli.common import (
    EXIT_ERROR,
    HomeOpt,
    JsonOpt,
    confirm,
    connect,
    emit_json,
    err,
    library_error,
    library_errors,
    out,
    progress_bar,
)
from tansaku.errors import WorkspaceNotFound

if TYPE_CHECKING:
    from rich.console import Console

    from tansaku.maintenance.reembed import ProgressFn

T = TypeVar("T")

_LAYOUTS = {0: "世代導入前の形式", 1: "形式1(UUID の点ID)"}


def _layout(n: int) -> str:
    return _LAYOUTS.get(n, f"形式{n}")


def migrate(
    check: Annotated[
        bool,
        typer.Option(
            "--check", help="移行が必要なコレクションを表示するだけ(必要なら終了コード 1)"
        ),
    ] = False,
    as_json: JsonOpt = False,
    home: HomeOpt = None,
) -> None:
    """古い保存形式のコレクションを現在の形式に移行する(開いたときと同じ安全な手順)。

    移行が終わって新しい世代が確定するまで、元のデータはバックアップとして残る。
    --check は何も変えずに移行の要否だけを調べる(スクリプト向け: 必要なら終了コード 1)。"""
    from tansaku.maintenance.layout import LAYOUT, migrate_workspace, pending
    from tansaku.workspace import Workspace

    ws = Workspace.from_env(home)
    if not ws.home.is_dir():
        raise library_error(WorkspaceNotFound(str(ws.home)))
    with library_errors():
        todo = pending(ws)
        if check:
            if as_json:
                emit_json({"pending": [m.to_dict() for m in todo], "layout": LAYOUT})
            elif todo:
                for m in todo:
                    _say(out, f"要移行: {m.collection}({_layout(m.layout)})")
            else:
                out.print("移行が必要なコレクションはありません")
            raise typer.Exit(EXIT_ERROR if todo else 0)
        for m in todo:
            _say(err, f"移行中: {m.collection}({_layout(m.layout)})")
        done = migrate_workspace(ws)
    if as_json:
        emit_json({"migrated": [m.to_dict() for m in done], "layout": LAYOUT})
        return
    if not done:
        out.print("移行が必要なコレクションはありません")
    for m in done:
        _say(
            out,
            f"移行しました: {m.collection}({_layout(m.layout)} → 形式{LAYOUT}、"
            f"{m.records:,} 件、世代 {m.generation})",
        )


def reembed(
    collection: Annotated[str, typer.Argument(help="埋め込み直すコレクション名")],
    embedder_from_config: Annotated[
        bool,
        typer.Option(
            "--embedder-from-config",
            help="ワークスペースの設定(\\[embedder] / TANSAKU_EMBED*)のモデルで埋め込み直す"
            "(既定。モデルの指定元は今のところ設定だけ)",
        ),
    ] = True,
    force: Annotated[
        bool, typer.Option("--force", help="すでに同じモデルでも埋め込み直す")
    ] = False,
    yes: Annotated[bool, typer.Option("--yes", "-y", help="確認なしで実行する")] = False,
    as_json: JsonOpt = False,
    home: HomeOpt = None,
) -> None:
    """コレクションの全記録を、設定された埋め込みモデルで埋め込み直す。

    書き込みは新しい世代に行い、最後に一度に確定する: 実行中も元のモデルでの検索は続けられ、
    途中で止まっても(kill -9 でも)元のコレクションはそのまま。もう一度実行すれば、
    埋め込み済みの分はキャッシュから読むので二度は埋め込まない。"""
    from tansaku.maintenance.reembed import plan_reembed
    from tansaku.maintenance.reembed import reembed as run

    del embedder_from_config  # the configuration is the only source of the model for now
    with library_errors(), connect(home, create=False) as ts:
        plan = plan_reembed(ts, collection)
        if not plan.has_dense:
            _nothing(as_json, plan.to_dict(), f"「{collection}」には dense 軸がありません")
            return
        if not plan.needed and not force:
            _nothing(
                as_json,
                plan.to_dict(),
                f"「{collection}」はすでにモデル「{plan.new_model}」で埋め込まれています",
            )
            return
        old = f"「{plan.old_model}」({plan.old_dim}次元)" if plan.old_model else "(記録なし)"
        what = (
            f"コレクション「{collection}」の {plan.records:,} 件をモデル{old}から"
            f"「{plan.new_model}」({plan.new_dim}次元)に埋め込み直します"
        )
        _confirm(what, yes)
        report = _with_progress(lambda p: run(ts, collection, force=force, progress=p))
    if as_json:
        emit_json(report.to_dict())
        return
    _say(
        out,
        f"埋め込み直しました: 「{collection}」{report.written:,} 件をモデル"
        f"「{plan.new_model}」({plan.new_dim}次元)で(モデルに送ったテキスト "
        f"{report.embedded:,} 件、残りはキャッシュから)",
    )


def _say(console: Console, text: str) -> None:
    """``text`` as it is (collection and model names may hold brackets: no markup), wrapped."""
    console.print(text, highlight=False, markup=False, soft_wrap=True)


def _nothing(as_json: bool, plan: dict[str, object], message: str) -> None:
    if as_json:
        emit_json(plan | {"changed": False})
    else:
        _say(out, f"{message}。何もしませんでした")


def _confirm(what: str, yes: bool) -> None:
    if yes:
        _say(err, what)
        return
    confirm(f"{what}。よろしいですか?", f"{what}。実行するには --yes を付けてください", yes)


def _with_progress(job: Callable[[ProgressFn], T]) -> T:
    """Run ``job(progress)`` with a progress bar on a terminal, plain lines on stderr else."""
    if err.is_terminal:
        bar = progress_bar()
        task = bar.add_task("埋め込み直し", total=None, rate="")
        start = time.monotonic()

        def show(done: int, total: int) -> None:
            rate = done / max(time.monotonic() - start, 1e-6)
            bar.update(task, completed=done, total=max(total, 1), rate=f"{rate:,.1f} 件/秒")

        with bar:
            return job(show)
    last = [-1]

    def line(done: int, total: int) -> None:
        step = max(total // 10, 1)
        if done == total or done // step != last[0] // step:
            _say(err, f"埋め込み直し: {done:,}/{total:,} 件")
        last[0] = done

    return job(line)


def register(app: typer.Typer) -> None:
    app.command("migrate")(migrate)
    app.command("reembed")(reembed)

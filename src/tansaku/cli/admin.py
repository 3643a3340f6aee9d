"""Workspace administration: ``tansaku collections`` (list, delete, merge, reset), ``doctor``."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.markup import escape

from tansaku.cli import render
from tansaku.cli.common import (
    EXIT_ERROR,
    HomeOpt,
    JsonOpt,
    confirm_delete,
    connect,
    emit_json,
    library_errors,
    out,
    show_report,
)

YesOpt = Annotated[bool, typer.Option("--yes", "-y", help="確認なしで削除する")]
group = typer.Typer(
    help="コレクションの一覧・削除・統合・チームのリセット",
    invoke_without_command=True,
    no_args_is_help=False,
)


@group.callback()
def listing(ctx: typer.Context, as_json: JsonOpt = False, home: HomeOpt = None) -> None:
    """コレクションの一覧を表示する(取り込み中も表示できる)。"""
    if ctx.invoked_subcommand is not None:
        return
    with library_errors(EXIT_ERROR), connect(home, create=False) as ts:
        infos = ts.collections()
    if as_json:
        emit_json(
            {
                "collections": [
                    vars(i) | {"teams": list(i.teams), "axes": list(i.axes)} for i in infos
                ]
            }
        )
    else:
        render.print_collections(out, infos)


@group.command("delete")
def delete(
    name: Annotated[str, typer.Argument(help="削除するコレクション名")],
    team: Annotated[
        str | None, typer.Option("--team", "-t", help="このチームのデータだけを削除する")
    ] = None,
    yes: YesOpt = False,
    home: HomeOpt = None,
) -> None:
    """コレクション(または --team のチームのデータ)を削除する。元に戻せません。"""
    what = (
        f"コレクション「{name}」のチーム「{team}」のデータ" if team else f"コレクション「{name}」"
    )
    confirm_delete(what, yes)
    with library_errors(EXIT_ERROR), connect(home, create=False) as ts:
        ts.delete_collection(name, team=team)
    out.print(f"{what}を削除しました")


@group.command("reset")
def reset(
    team: Annotated[str, typer.Option("--team", "-t", help="記録をすべて削除するチーム")],
    yes: YesOpt = False,
    keep_empty: Annotated[
        bool,
        typer.Option("--keep-empty", help="記録がなくなったコレクションも残す(既定: 削除)"),
    ] = False,
    as_json: JsonOpt = False,
    home: HomeOpt = None,
) -> None:
    """チームの記録をすべてのコレクションから一度に削除する。ほかのチームの記録は残ります。
    元に戻せません。"""
    from tansaku.transfer.reset import reset_team

    what = f"チーム「{team}」の記録(すべてのコレクション)"
    confirm_delete(what, yes)
    with library_errors(), connect(home, create=False) as ts:
        report = reset_team(ts, team, drop_empty=not keep_empty)
    if as_json:
        emit_json(report.to_dict())
        return
    if not report.collections:
        out.print(
            f"チーム「{escape(team)}」の記録はどのコレクションにもありません", highlight=False
        )
        return
    out.print(
        f"チーム「{escape(team)}」の記録 {report.records:,} 件を"
        f"{len(report.collections)} 個のコレクションから削除しました",
        highlight=False,
    )
    for name, n in report.collections.items():
        gone = "(記録がなくなったためコレクションも削除)" if name in report.removed else ""
        out.print(f"  {escape(name)}: {n:,} 件{gone}", highlight=False)


@group.command("merge")
def merge(
    sources: Annotated[list[str], typer.Argument(help="統合元のコレクション名(複数可)")],
    into: Annotated[str, typer.Option("--into", help="統合先のコレクション名(なければ作成)")],
    team: Annotated[
        str | None, typer.Option("--team", "-t", help="このチームの記録だけを統合する")
    ] = None,
    on_conflict: Annotated[
        str,
        typer.Option(
            "--on-conflict",
            help="統合先に同じ文書があるとき: skip(残す、既定)/ overwrite(統合元で置き換える)",
        ),
    ] = "skip",
    as_json: JsonOpt = False,
    home: HomeOpt = None,
) -> None:
    """コレクションの記録を別のコレクションにまとめる(記録の id はそのまま、埋め込み直しなし)。
    統合元はそのまま残ります。"""
    from tansaku.transfer.merge import merge_collections

    with library_errors(), connect(home, create=False) as ts:
        report = merge_collections(ts, sources, into, team=team, conflict=on_conflict)
    made = "を作成して" if report.created else "に"
    summary = (
        f"{'・'.join(f'「{escape(s)}」' for s in report.sources)}をコレクション"
        f"「{escape(report.into)}」{made}統合しました: 文書 {report.documents:,} 件"
        f"(うち置き換え {report.replaced:,} 件)、重複で除外 {report.skipped:,} 件、"
        f"記録 追加 {report.inserted:,} / 更新 {report.updated:,} / 変更なし "
        f"{report.unchanged:,} / 削除 {report.deleted:,}、埋め込み {report.embedded:,} 件"
    )
    show_report(report, as_json, summary)


def doctor(
    fix: Annotated[bool, typer.Option("--fix", help="見つかった問題を修復する")] = False,
    as_json: JsonOpt = False,
    home: HomeOpt = None,
) -> None:
    """ワークスペースの整合性(世代・BM25 統計・文単位の件数)を確かめ、--fix で修復する。"""
    from tansaku.maintenance.doctor import check

    with library_errors(EXIT_ERROR), connect(home, create=False) as ts:
        findings = check(ts, fix=fix)
    if as_json:
        emit_json({"findings": [f.to_dict() for f in findings]})
    elif not findings:
        out.print("問題は見つかりませんでした")
    else:
        for f in findings:
            mark = "[green]修復済み[/]" if f.repaired else "[yellow]要修復[/]"
            out.print(f"{mark} {f.collection} [{f.check}] {escape(f.message)}")
        if not fix and any(not f.repaired for f in findings):
            out.print("`tansaku doctor --fix` で修復できます")
    if any(not f.repaired for f in findings):
        raise typer.Exit(1)


def register(app: typer.Typer) -> None:
    app.add_typer(group, name="collections")
    app.command("doctor")(doctor)

"""``tansaku keys create|list|revoke|keyless`` — API keys of the server (stored hashed in
appdb) and whether a loopback server serves requests without a key.

The key is printed once, alone on stdout (so ``KEY=$(tansaku keys create --team T)`` works);
everything else goes to stderr.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from tansaku.cli import render
from tansaku.cli.common import HomeOpt, JsonOpt, emit_json, err, fail, library_errors, out
from tansaku.errors import WorkspaceNotFound

if TYPE_CHECKING:
    from tansaku.appdb import AppDB
    from tansaku.appdb.keys import ApiKeyRecord

group = typer.Typer(
    help="サーバーの API キー(チームごと)の作成・一覧・無効化", no_args_is_help=True
)


def open_db(home: Path | None, *, create: bool) -> AppDB:
    """The workspace's appdb (or ``$TANSAKU_DATABASE_URL``'s); a read of a workspace that does
    not exist is an error, not a new empty database."""
    import os

    from tansaku.appdb import ENV_DATABASE_URL, open_appdb
    from tansaku.workspace import Workspace

    ws = Workspace.from_env(home)
    if not create and not os.environ.get(ENV_DATABASE_URL) and not ws.home.is_dir():
        raise WorkspaceNotFound(str(ws.home))
    return open_appdb(ws.home)


def _when(record: ApiKeyRecord) -> str:
    return record.created_at.astimezone().strftime("%Y-%m-%d %H:%M")


@group.command("create")
def create(
    team: Annotated[str, typer.Option("--team", "-t", help="キーを使うチーム(テナント)名")],
    name: Annotated[str, typer.Option("--name", "-n", help="キーの名前(用途のメモ)")] = "",
    as_json: JsonOpt = False,
    home: HomeOpt = None,
) -> None:
    """API キーを作成する(キーはこの一度だけ表示されます)。"""
    with library_errors(), open_db(home, create=True) as db:
        key, record = db.keys.create_key(team, name)
    if as_json:
        emit_json({"key": key, **record.to_dict()})
        return
    out.print(key, highlight=False, soft_wrap=True)
    err.print(
        f"チーム「{render.inline(team)}」の API キーを作成しました(表示名 {record.prefix})。\n"
        "[bold]このキーは今だけ表示されます。[/]安全な場所に保存してください。"
        "サーバーへは Authorization: Bearer <キー> で送ります",
        highlight=False,
    )


@group.command("list")
def list_keys(
    team: Annotated[
        str | None, typer.Option("--team", "-t", help="このチームのキーだけ表示する")
    ] = None,
    as_json: JsonOpt = False,
    home: HomeOpt = None,
) -> None:
    """API キーの一覧(キーそのものは保存されていないため表示名だけ)。"""
    with library_errors(), open_db(home, create=False) as db:
        records = db.keys.list_keys(team)
    if as_json:
        emit_json({"keys": [r.to_dict() for r in records]})
        return
    if not records:
        out.print("API キーはありません。`tansaku keys create --team チーム名` で作成できます")
        return
    from rich.table import Table

    table = Table(box=None, header_style="bold")
    for col in ("表示名", "チーム", "名前", "作成", "最終使用", "状態"):
        table.add_column(col)
    for r in records:
        used = r.last_used_at.astimezone().strftime("%Y-%m-%d %H:%M") if r.last_used_at else "-"
        state = "有効" if r.active else "[dim]無効[/]"
        table.add_row(r.prefix, render.inline(r.team), render.inline(r.name), _when(r), used, state)
    out.print(table)


@group.command("revoke")
def revoke(
    prefix: Annotated[str, typer.Argument(help="無効にするキーの表示名(tsk_ で始まる12文字)")],
    as_json: JsonOpt = False,
    home: HomeOpt = None,
) -> None:
    """API キーを無効にする(以後そのキーの要求は 401 になります)。"""
    with library_errors(), open_db(home, create=False) as db:
        record = db.keys.revoke(prefix)
    if as_json:
        emit_json(record.to_dict())
        return
    out.print(
        f"キー {record.prefix}(チーム「{render.inline(record.team)}」)を無効にしました",
        highlight=False,
    )


@group.command("keyless")
def keyless(
    state: Annotated[
        str | None,
        typer.Argument(help="on(キーなしを許可)か off(キー必須)。省略すると現在の設定を表示"),
    ] = None,
    as_json: JsonOpt = False,
    home: HomeOpt = None,
) -> None:
    """127.0.0.1 で動くサーバーがキーなしのリクエストを受け付けるか(キーを作ると off になり、
    キーを無効にしても on には戻りません)。"""
    if state is not None and state not in ("on", "off"):
        raise fail(f"on か off を指定してください(指定: {state})", 2)
    with library_errors(), open_db(home, create=state is not None) as db:
        if state is not None:
            db.keys.set_keyless(state == "on")
        on = db.keys.keyless()
        active = len(db.keys.list_keys(include_revoked=False))
    if as_json:
        emit_json({"keyless": on, "active_keys": active})
        return
    if on:
        note = f"(有効なキーが {active} 個あります。キーを送った要求はそのチームとして扱います)"
        out.print(
            "キーなしアクセス: on — 127.0.0.1 で動くサーバーはキーなしのリクエストを"
            "既定チームとして受け付けます" + (note if active else ""),
            highlight=False,
        )
    else:
        out.print(
            "キーなしアクセス: off — サーバーはすべてのリクエストに API キーを求めます"
            "(`tansaku keys keyless on` で許可)",
            highlight=False,
        )


def register(app: typer.Typer) -> None:
    app.add_typer(group, name="keys")

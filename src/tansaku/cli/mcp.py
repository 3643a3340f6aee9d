"""``tansaku mcp``: the agent's tools as an MCP server (stdio or streamable HTTP), scoped to one
team and the named collections when it starts.

stdout belongs to the protocol on stdio, so every message for people goes to stderr.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Mapping
from typing import Annotated, Any

import typer

from tansaku.cli import render
from tansaku.cli.ask import open_tables, team_tables
from tansaku.cli.common import (
    EXIT_REJECTED,
    HomeOpt,
    NowOpt,
    TeamOpt,
    connect,
    err,
    fail,
    library_error,
    library_errors,
    parse_now,
)
from tansaku.errors import TansakuError
from tansaku.integrations.mcp_server import DEFAULT_HOST, DEFAULT_PORT, TOKEN_ENV
from tansaku.workspace import DEFAULT_TEAM, validate_name

TRANSPORTS = ("stdio", "http")


def _collections(pairs: list[str] | None) -> list[str] | dict[str, str] | None:
    """``--collection`` values: plain names (each one's role read from its config) or
    ``role=name`` pairs (a plain name then under its own name); None: the default roles."""
    if not pairs:
        return None
    out: dict[str, str] = {}
    for pair in pairs:
        role, sep, name = pair.partition("=")
        role, name = role.strip(), name.strip()
        if sep and (not role or not name):
            raise fail(
                f"--collection「{pair}」は コレクション名 か 役割=コレクション名 で指定してください"
                "(例: --collection faq / --collection manuals=manuals)",
                EXIT_REJECTED,
            )
        if not sep:
            name = role
        key = _name(role, "役割名") if sep else _name(name, "コレクション名")
        out[key] = _name(name, "コレクション名")
    if all(k == v for k, v in out.items()) and not any("=" in p for p in pairs):
        return list(out.values())
    return out


def _name(value: str, what: str) -> str:
    """A plain name (team, role, collection); a bad one ends the command with exit code 2."""
    with library_errors(EXIT_REJECTED):
        return validate_name(value, what)


def mcp(
    team: TeamOpt = DEFAULT_TEAM,
    transport: Annotated[
        str, typer.Option("--transport", help="stdio(既定、MCPクライアントが起動)か http")
    ] = "stdio",
    host: Annotated[
        str, typer.Option("--host", help="http で待ち受けるアドレス(既定: ループバックのみ)")
    ] = DEFAULT_HOST,
    port: Annotated[
        int, typer.Option("--port", min=0, max=65535, help="http のポート(0: 空きポート)")
    ] = DEFAULT_PORT,
    collection: Annotated[
        list[str] | None,
        typer.Option(
            "--collection",
            "-c",
            help="公開するコレクション 役割=名前(例: manuals=manuals)。複数指定可。"
            "省略時は既定の役割(起動時に表示)",
        ),
    ] = None,
    allow_remote: Annotated[
        bool,
        typer.Option("--allow-remote", help="ループバック以外での待ち受けを許す(--token 必須)"),
    ] = False,
    token: Annotated[
        str | None,
        typer.Option(
            "--token",
            envvar=TOKEN_ENV,
            show_envvar=True,
            help="http の全リクエストで確かめる Bearer トークン(16文字以上)",
        ),
    ] = None,
    now: NowOpt = None,
    home: HomeOpt = None,
) -> None:
    """エージェントのツールを MCP サーバーとして公開する(チームとコレクションは起動時に固定)。"""
    import anyio

    from tansaku.agent.answer.tool import with_answer_tool
    from tansaku.integrations import mcp_server as srv
    from tansaku.tools import Toolset, toolset

    if transport not in TRANSPORTS:
        raise fail(
            f"--transport は {' か '.join(TRANSPORTS)} です(指定: {transport})", EXIT_REJECTED
        )
    _name(team, "チーム名")
    roles = _collections(collection)
    clock = parse_now(now)
    try:
        if transport == "http":
            srv.check_bind(host, allow_remote=allow_remote, token=token)
        srv.require_sdk()
        with contextlib.ExitStack() as stack:
            ts = stack.enter_context(connect(home, create=False))
            tables = open_tables(home, note=True)
            if tables is not None:
                stack.enter_context(tables)
            if roles is not None:
                _check_exist(ts, roles)
            scoped = team_tables(tables, team)
            tools = toolset(ts, team=team, collections=roles, now=clock, tables=scoped)
            tools = Toolset(with_answer_tool(tools.specs), tools.scope)
            present, notes = _served(ts, team, tools.scope.collections)
            for note in notes:
                err.print(f"[yellow]注意:[/] {render.inline(note)}", highlight=False)
            names = ", ".join(s.name for s in tools.specs)
            scope = "、".join(f"{r}={n}" for r, n in present.items()) or "なし"
            err.print(
                f"tansaku MCP サーバー: チーム「{render.inline(team)}」"
                f"(コレクション {render.inline(scope)})、ツール {len(tools.specs)} 個: "
                f"{render.inline(names)}",
                soft_wrap=True,
                highlight=False,
            )
            if transport == "stdio":
                err.print("stdio で待ち受けます(終了: 入力を閉じる / Ctrl+C)", highlight=False)
                anyio.run(srv.serve_stdio, tools)
                return

            def ready(url: str) -> None:
                auth = "Bearer トークンあり" if token else "認証なし(ループバックのみ)"
                err.print(f"待ち受け中: {url}({auth}、終了: Ctrl+C)", highlight=False)

            serve = functools.partial(
                srv.serve_http,
                tools,
                host=host,
                port=port,
                token=token,
                allow_remote=allow_remote,
                on_ready=ready,
            )
            anyio.run(serve)
    except TansakuError as exc:
        raise library_error(exc) from None
    except KeyboardInterrupt:
        err.print("終了しました", highlight=False)


def _check_exist(ts: Any, roles: list[str] | dict[str, str]) -> None:
    """A mistyped --collection fails at start, not at every call."""
    from tansaku.errors import CollectionNotFound

    for name in roles.values() if isinstance(roles, dict) else roles:
        if not ts.has_collection(name):
            raise CollectionNotFound(name, [c.name for c in ts.collections()])


def _served(ts: Any, team: str, roles: Mapping[str, str]) -> tuple[dict[str, str], list[str]]:
    """The roles whose collection exists, and what a user would want to know before a client
    gets empty answers: no collection at all, or a team with no data in them (a typo)."""
    infos = {c.name: c for c in ts.collections()}
    present = {role: name for role, name in roles.items() if name in infos}
    if not present:
        return present, ["公開するコレクションがまだありません(`tansaku ingest` で作成できます)"]
    if not any(team in infos[name].teams for name in present.values()):
        names = "、".join(present.values())
        return present, [f"チーム「{team}」のデータはコレクション {names} にまだありません"]
    return present, []


def register(app: typer.Typer) -> None:
    app.command("mcp")(mcp)

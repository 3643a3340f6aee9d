"""The ``tansaku`` command: a thin adapter over the library.

Library errors become Japanese messages on stderr and a non-zero exit code (2 for an invalid
request or option, 1 otherwise); ``--json`` prints one JSON object on stdout for machines. Any
other exception, in any subcommand, becomes one Japanese line and exit code 1; its traceback
only with ``tansaku --debug ...`` or ``TANSAKU_DEBUG=1``.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable
from datetime import date
from typing import Annotated, Any

import typer
from typer.core import TyperGroup

from tansaku.cli import render
from tansaku.cli.common import (
    EXIT_REJECTED,
    CollectionNameOpt,
    HomeOpt,
    JsonOpt,
    TeamOpt,
    emit_json,
    fail,
    failing,
    library_error,
    library_errors,
    out,
    parse_now,
)
from tansaku.cli.common import connect as _connect
from tansaku.errors import TansakuError
from tansaku.search.limits import MAX_TOP_K
from tansaku.workspace import DEFAULT_TEAM, Workspace

DEBUG_ENV = "TANSAKU_DEBUG"
QDRANT_URL_ENV = "TANSAKU_QDRANT_URL"  # tansaku.store.qdrant.settings.ENV_URL
_DEBUG_META = "tansaku.debug"


def _debug(ctx: typer.Context) -> bool:
    if ctx.meta.get(_DEBUG_META):
        return True
    return os.environ.get(DEBUG_ENV, "").strip().lower() in {"1", "true", "yes", "on"}


def _unexpected(exc: Exception) -> typer.Exit:
    """One line on stderr for an exception no command handled; exit code 2 for an invalid
    request, else 1."""
    if isinstance(exc, TansakuError):
        return library_error(exc)
    detail = " ".join(f"{type(exc).__name__}: {exc}".split())
    if len(detail) > 300:
        detail = detail[:299] + "…"
    return fail(
        f"予期しないエラーが発生しました({detail})。"
        f"詳細は `tansaku --debug ...` または {DEBUG_ENV}=1 で再実行すると表示されます"
    )


class _Commands(TyperGroup):
    """Runs every subcommand (those of ``cli/tables.py``, ``cli/eval.py``, ``cli/demo.py``
    too) inside :meth:`invoke`, where an exception it did not handle becomes one line."""

    def invoke(self, ctx: typer.Context) -> Any:  # type: ignore[override]
        try:
            return super().invoke(ctx)
        except (typer.Exit, typer.Abort, typer.TyperException):
            raise
        except Exception as exc:
            if _debug(ctx):
                raise
            raise _unexpected(exc) from None


_app = typer.Typer(
    name="tansaku",
    cls=_Commands,
    help="探索 tansaku — 日本語の業務ナレッジを検索するツールキット",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


@_app.callback()
def _root(
    ctx: typer.Context,
    debug: Annotated[
        bool,
        typer.Option(
            "--debug",
            envvar=DEBUG_ENV,
            help="予期しないエラーのトレースバックを表示する(tansaku --debug COMMAND ...)",
        ),
    ] = False,
    qdrant_url: Annotated[
        str | None,
        typer.Option(
            "--qdrant-url",
            envvar=QDRANT_URL_ENV,
            help=(
                "コレクションを Qdrant に保存・検索する(http(s)://ホスト:6333、"
                "qdrant+local:///絶対パス など)。ワークスペースはキャッシュ・ログ用に使う"
            ),
        ),
    ] = None,
) -> None:
    ctx.meta[_DEBUG_META] = debug
    if qdrant_url:  # every command's connect(home) picks the server backend from the env
        _set_env(ctx, QDRANT_URL_ENV, qdrant_url)


def _set_env(ctx: typer.Context, name: str, value: str) -> None:
    """Set ``name`` for the command, and put the previous value back after it (a test runs
    many commands in one process)."""
    before = os.environ.get(name)
    os.environ[name] = value

    def restore() -> None:
        if before is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = before

    ctx.call_on_close(restore)


@_app.command()
def init(home: HomeOpt = None) -> None:
    """ワークスペースを作成する。"""
    ws = Workspace.from_env(home).ensure()
    out.print(f"ワークスペースを用意しました: {ws.home}")


def _parse_date(value: str | None, option: str) -> date | None:
    if value is None:
        return None
    try:
        return date.fromisoformat(value)
    except ValueError:
        raise fail(
            f"{option} の日付「{value}」を読めません。YYYY-MM-DD で指定してください", 2
        ) from None


@_app.command()
def search(
    query: Annotated[str, typer.Argument(help="検索クエリ(日本語)")],
    collection: CollectionNameOpt,
    team: TeamOpt = DEFAULT_TEAM,
    top_k: Annotated[
        int | None, typer.Option("--top-k", "-k", min=1, max=MAX_TOP_K, help="返す件数")
    ] = None,
    field: Annotated[list[str], typer.Option("--field", help="対象フィールド(複数可)")] = [],  # noqa: B006
    where: Annotated[
        list[str],
        typer.Option(
            "--where",
            help="メタデータ条件(複数可): キー=値[,値] / キー<=値 など(例: cost<=3)",
        ),
    ] = [],  # noqa: B006
    axis_query: Annotated[
        list[str],
        typer.Option(
            "--axis-query",
            help="軸ごとの検索文(複数可): 軸の名前=検索文(例: material=TEOS エタノール)",
        ),
    ] = [],  # noqa: B006
    date_from: Annotated[str | None, typer.Option("--from", help="日付の下限 YYYY-MM-DD")] = None,
    date_to: Annotated[str | None, typer.Option("--to", help="日付の上限 YYYY-MM-DD")] = None,
    min_score: Annotated[float | None, typer.Option("--min-score", help="最終スコアの下限")] = None,
    now: Annotated[
        str | None,
        typer.Option(
            "--now", help="「昨日」などの基準日時 YYYY-MM-DD[THH:MM](既定: 現在の東京時刻)"
        ),
    ] = None,
    expand: Annotated[
        bool | None,
        typer.Option("--expand/--no-expand", help="複数クエリへの展開(既定: 曖昧なクエリのみ)"),
    ] = None,
    synonyms: Annotated[
        bool | None,
        typer.Option("--synonyms/--no-synonyms", help="同義語展開(既定: コレクション設定)"),
    ] = None,
    rerank: Annotated[
        bool | None,
        typer.Option("--rerank/--no-rerank", help="リランク(既定: コレクション設定)"),
    ] = None,
    as_json: JsonOpt = False,
    home: HomeOpt = None,
) -> None:
    """コレクションをハイブリッド検索する(BM25 + ベクトル、同義語・相対日付・クエリ展開つき)。"""
    from tansaku.store.base import Filter

    if not query.strip():
        raise fail("検索クエリが空です", 2)
    with failing(EXIT_REJECTED, ValueError):
        flt = Filter(
            fields=tuple(field),
            date_from=_parse_date(date_from, "--from"),
            date_to=_parse_date(date_to, "--to"),
        )
    clock = parse_now(now)
    axis_queries = []
    for pair in axis_query:
        axis, sep, text = pair.partition("=")
        if not sep or not axis.strip() or not text.strip():
            raise fail(f"--axis-query は 軸の名前=検索文 の形で指定してください: {pair!r}", 2)
        axis_queries.append((axis.strip(), text.strip()))
    with library_errors(), _connect(home, create=False) as ts:
        result = ts.search(
            query,
            collection=collection,
            team=team,
            top_k=top_k,
            filter=flt,
            where=tuple(where),
            axis_queries=tuple(axis_queries),
            min_score=min_score,
            now=clock,
            expand=expand,
            synonyms=synonyms,
            rerank=rerank,
        )
        empty = not result.hits and not ts.collection(collection).has_records(team)
    if as_json:
        emit_json(result.to_dict())
    else:
        render.print_search(out, result, empty=empty)


# Each module registers its commands with ``register(app)``; imported lazily so that a command's
# heavy imports (duckdb, fastapi, mcp …) cost nothing to the others: ``tansaku search`` imports
# none of them, ``tansaku ask`` only ``cli/ask.py``; ``--help`` (or an unknown name) all.
COMMANDS = {
    "collections": "admin",
    "ingest": "ingest",
    "fetch": "fetch",
    "doctor": "admin",
    "ask": "ask",
    "unanswered": "ask",
    "chat": "chat",
    "demo": "demo",
    "eval": "eval",
    "feedback": "feedback",
    "keys": "keys",
    "migrate": "maintenance",
    "reembed": "maintenance",
    "mcp": "mcp",
    "models": "models",
    "qa": "qa",
    "serve": "serve",
    "sql": "tables",
    "stats": "tables",
    "tables": "tables",
    "export": "transfer",
    "import": "transfer",
    "tune": "tune",
}
_OWN = frozenset({"init", "search"})
_ROOT_VALUED = frozenset({"--qdrant-url"})
_registered: set[str] = set()


def _register(modules: Iterable[str]) -> None:
    import importlib

    for name in modules:
        if name in _registered:
            continue
        _registered.add(name)
        importlib.import_module(f"tansaku.cli.{name}").register(_app)


def register_all() -> typer.Typer:
    """Every subcommand registered (``--help``, the tests' ``CliRunner``): the app."""
    _register(dict.fromkeys(COMMANDS.values()))
    return _app


def __getattr__(name: str) -> Any:
    if name == "app":  # ``from tansaku.cli.main import app``: the whole command
        return register_all()
    raise AttributeError(f"module 'tansaku.cli.main' has no attribute {name!r}")


def _command_of(argv: list[str]) -> str | None:
    """The subcommand named on the command line (after the root options), or None."""
    args = iter(argv)
    for arg in args:
        if arg in _ROOT_VALUED:
            next(args, None)
        elif not arg.startswith("-"):
            return arg
    return None


def main() -> None:
    name = _command_of(sys.argv[1:])
    if name in _OWN:
        pass
    elif name in COMMANDS:
        _register([COMMANDS[name]])
    else:
        register_all()
    _app()


if __name__ == "__main__":  # pragma: no cover
    main()

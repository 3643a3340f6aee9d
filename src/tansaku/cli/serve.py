"""``tansaku serve``: the JSON API (and web UI) over a workspace, under uvicorn."""

from __future__ import annotations

from typing import Annotated

import typer

from tansaku.cli.common import EXIT_ERROR, EXIT_REJECTED, HomeOpt, err, fail, failing
from tansaku.errors import TansakuError


def serve(
    host: Annotated[
        str, typer.Option("--host", help="待ち受けるアドレス(127.0.0.1 以外では API キーが必須)")
    ] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", min=1, max=65535, help="ポート番号")] = 8000,
    allow_host: Annotated[
        list[str] | None,
        typer.Option(
            "--allow-host",
            help="キーなしで動くときに受け付けるホスト名(127.0.0.1・localhost・[::1] 以外。"
            "繰り返し指定可)",
        ),
    ] = None,
    admin_team: Annotated[
        list[str] | None,
        typer.Option(
            "--admin-team",
            help="このチームのキーを管理用とする(/metrics と全体の件数を見られる。繰り返し指定可)",
        ),
    ] = None,
    search_processes: Annotated[
        int | None,
        typer.Option(
            "--search-processes",
            min=0,
            help="検索を受け持つプロセスの数(0: サーバー自身で検索。既定: 環境変数 "
            "TANSAKU_SEARCH_PROCESSES、なければ 0)。コア数まで増やすと検索が複数コアで並列に動く",
        ),
    ] = None,
    home: HomeOpt = None,
) -> None:
    """API サーバー(と Web 画面)を起動する。Ctrl+C で停止。"""
    try:
        import uvicorn

        from tansaku.server import ServerNotSecured, ServerSettings, create_app
    except ImportError:
        raise fail(
            "サーバーには追加パッケージが必要です。`pip install 'tansaku[server]'` で"
            "インストールしてください"
        ) from None
    settings = ServerSettings(
        host=host,
        port=port,
        allowed_hosts=tuple(allow_host or ()),
        admin_teams=tuple(admin_team or ()),
        search_processes=search_processes,
    )
    from tansaku.workspace import Workspace

    folder = Workspace.from_env(home).home
    created = not folder.exists()
    with failing(EXIT_ERROR, TansakuError), failing(EXIT_REJECTED, ServerNotSecured):
        app = create_app(home, settings=settings, freeze_heap=True)
    if created:  # a mistyped --home should not go unnoticed behind an empty server
        err.print(f"新しいワークスペースを作成しました: {folder}(コレクションはまだありません)")
    shown = f"[{host}]" if ":" in host else host
    err.print(f"tansaku サーバーを起動します: http://{shown}:{port}/ (API 説明: /docs)")
    if app.state.tansaku.keyless():
        err.print(
            "キーなしで動いています: キーなしのリクエストは既定チームとして扱います"
            "(受け付けるホスト名は 127.0.0.1・localhost・[::1]"
            + "".join(f"・{h}" for h in settings.allowed_hosts)
            + ")"
        )
    elif settings.loopback and not app.state.tansaku.keys.any():
        err.print(
            "有効な API キーがなく、キーなしアクセスも off です。すべてのリクエストが 401 に"
            "なります: `tansaku keys create --team チーム名` か `tansaku keys keyless on`"
        )
    if (searchers := getattr(app.state.tansaku, "searchers", None)) is not None:
        err.print(f"検索プロセス {searchers.count} 個で検索します(--search-processes)")
    from tansaku.server.protocol import http_protocol

    uvicorn.run(
        app,
        host=host,
        port=port,
        log_level="info",
        proxy_headers=False,
        http=http_protocol(),  # a request uvicorn cannot parse gets the API's JSON 400
    )


def register(app: typer.Typer) -> None:
    app.command("serve")(serve)

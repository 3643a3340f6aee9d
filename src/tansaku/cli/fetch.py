"""``tansaku fetch``: download a public dataset file from a URL (or ``hf://datasets/…``) into
the workspace's upload folder and ingest it as ``tansaku ingest`` does (same loaders, mapping
and limits), then remove the download."""

from __future__ import annotations

import shutil
from typing import Annotated

import typer

from tansaku.cli.common import (
    EXIT_ERROR,
    CollectionNameOpt,
    HomeOpt,
    JsonOpt,
    TeamOpt,
    err,
    failing,
)
from tansaku.workspace import DEFAULT_TEAM, Workspace


def fetch(
    url: Annotated[
        str,
        typer.Argument(
            help="https:// か http:// のファイルの URL、または hf://datasets/所有者/名前/パス"
        ),
    ],
    collection: CollectionNameOpt,
    team: TeamOpt = DEFAULT_TEAM,
    as_json: JsonOpt = False,
    home: HomeOpt = None,
) -> None:
    """公開データセットのファイル(JSONL・CSV・TSV・JSON・テキスト・Markdown、またはそれらの
    zip)を URL からダウンロードしてコレクションに取り込む。

    公開アドレスのホストだけに接続する(社内のホストは tansaku.toml の [fetch] allow_hosts に
    書く)。大きさの上限は [fetch] max_mb(既定 100)。"""
    from tansaku.cli.ingest import ingest
    from tansaku.ingest.limits import workspace_limits
    from tansaku.server.uploads import new_folder
    from tansaku.transfer.fetch import download
    from tansaku.transfer.fetch_guard import FetchError, workspace_settings
    from tansaku.workspace import validate_name

    ws = Workspace.from_env(home)
    with failing(EXIT_ERROR, Exception):  # a TansakuError: the name or tansaku.toml
        validate_name(collection)
        settings = workspace_settings(ws.home)
        inflated = workspace_limits(ws.home).max_inflated_bytes
    folder = new_folder(ws.home)
    try:
        with failing(EXIT_ERROR, FetchError):
            got = download(url, folder, settings, max_inflated=inflated)
        if not as_json:
            err.print(f"ダウンロードしました: {got.name}({got.size:,} バイト)")
        ingest(got.sources, collection, team=team, as_json=as_json, home=ws.home)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def register(app: typer.Typer) -> None:
    """Add ``fetch`` to the main app."""
    app.command()(fetch)

"""``tansaku tables reload | infer | add``: keeping the registered tables up to date.

- ``reload [NAME]`` reads the table files again and asks every running server, MCP server or
  chat serving this workspace to reload them before its next query (``tables.reload.json``);
  a file that cannot be read is reported and the running processes keep its old rows.
- ``infer FILE`` prints a ``tables.toml`` entry inferred from the file, to correct and paste.
- ``add FILE --name NAME`` registers the file with that entry (``--tool`` also makes it an SQL
  tool of the agent); a name already registered is refused.

Exit codes as the other table commands: 0 done, 2 a bad argument (unknown table, a file that is
not a table, a name taken), 1 a file that cannot be loaded or a broken registry.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from tansaku.cli.common import (
    EXIT_ERROR,
    EXIT_REJECTED,
    HomeOpt,
    JsonOpt,
    emit_json,
    err,
    fail,
    failing,
    library_errors,
)
from tansaku.errors import ConfigError, LoadError
from tansaku.tables.engine import probe_table
from tansaku.tables.infer import InferredTable, infer_table, inferred_toml
from tansaku.tables.register import NameTaken, add_table
from tansaku.tables.registry import SqlToolConfig, TablesConfig, load_tables_config
from tansaku.tables.reload import ReloadReport, TableReload, kept_message, request_reload
from tansaku.workspace import Workspace

FileArg = Annotated[Path, typer.Argument(help="CSV または Parquet のファイル", show_default=False)]


def _registry(home: Path | None) -> tuple[Workspace, TablesConfig]:
    ws = Workspace.from_env(home)
    with library_errors(EXIT_ERROR):
        return ws, load_tables_config(ws.tables_file)


def reload_tables(
    name: Annotated[
        str | None, typer.Argument(help="読み込み直すテーブル(省略: すべて)", show_default=False)
    ] = None,
    json_out: JsonOpt = False,
    home: HomeOpt = None,
) -> None:
    """テーブルのファイルを読み込み直す(実行中のサーバー・エージェントも次のクエリの前に読み込み直す)。"""
    ws, config = _registry(home)
    with failing(EXIT_REJECTED, ConfigError):
        targets = [config.table(name)] if name else list(config.tables)
    results = []
    for table in targets:
        try:
            results.append(TableReload(table.name, True, rows=probe_table(table)))
        except LoadError as e:
            results.append(TableReload(table.name, False, error=kept_message(e.reason)))
    report = ReloadReport(tuple(results))
    done = [r.name for r in report.tables if r.reloaded]
    if done:
        request_reload(ws.tables_file, done)
    if json_out:
        emit_json(report.to_dict())
        raise typer.Exit(0 if report.ok else EXIT_ERROR)
    for r in report.tables:
        if r.reloaded:
            sys.stdout.write(f"{r.name}: {r.rows:,}行を読み込みました\n")
    if done:
        err.print(
            "実行中のサーバー・エージェントは次のクエリの前に読み込み直します",
            highlight=False,
            soft_wrap=True,
        )
    if not report.ok:
        raise fail("\n".join(f"{r.name}: {r.error}" for r in report.failed), EXIT_ERROR)


def _infer(file: Path, name: str | None) -> InferredTable:
    """The table ``file`` holds, inferred (a file that cannot be read: exit 2)."""
    with failing(EXIT_REJECTED, LoadError, ConfigError):
        return infer_table(file, name=name)


def infer(
    file: FileArg,
    name: Annotated[
        str | None, typer.Option("--name", help="テーブル名(既定: ファイル名から)")
    ] = None,
    home: HomeOpt = None,
) -> None:
    """CSV / Parquet から tables.toml の項目(列名・型・説明の仮の文・例)を推定して表示する。"""
    ws = Workspace.from_env(home)
    inferred = _infer(file, name)
    sys.stdout.write(inferred_toml(inferred, ws.home))


def add(
    file: FileArg,
    name: Annotated[str, typer.Option("--name", help="テーブル名(英小文字・数字・_)")],
    tool: Annotated[
        str | None,
        typer.Option(
            "--tool", help="このテーブルだけを読むエージェントのSQLツールも作る(例: search_menu)"
        ),
    ] = None,
    json_out: JsonOpt = False,
    home: HomeOpt = None,
) -> None:
    """CSV / Parquet を推定した設定でテーブルとして登録する(同じ名前は上書きしない)。"""
    ws = Workspace.from_env(home)
    inferred = _infer(file, name)
    spec = inferred.spec
    purpose = f"{spec.name} の表をSQLクエリで検索します。"
    tool_config = SqlToolConfig(name=tool, purpose=purpose, tables=(spec.name,)) if tool else None
    with failing(EXIT_ERROR, ConfigError), failing(EXIT_REJECTED, NameTaken, LoadError):
        added = add_table(ws.tables_file, spec, tool=tool_config)
    if json_out:
        emit_json(
            {
                "table": spec.name,
                "rows": added.rows,
                "columns": [c.name for c in spec.columns],
                "tool": tool,
                "tables_file": str(ws.tables_file),
            }
        )
        return
    sys.stdout.write(
        f"テーブル「{spec.name}」を登録しました({added.rows:,}行、{len(spec.columns)}列): "
        f"{ws.tables_file}\n"
    )
    err.print(
        "説明(description)は列名から作った仮の文です。tables.toml で日本語に書き直してください。"
        "実行中のサーバーでは再起動後に使えます",
        highlight=False,
        soft_wrap=True,
    )


def register(tables_app: typer.Typer) -> None:
    tables_app.command("reload")(reload_tables)
    tables_app.command("infer")(infer)
    tables_app.command("add")(add)

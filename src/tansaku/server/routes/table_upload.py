"""``POST /api/ingest/table/infer`` (a CSV/TSV file's columns, types, descriptions and examples,
registering nothing) and ``POST /api/ingest/table`` (the corrected inference and the same file
registered as a workspace table that SQL reads, with its ``search_<name>`` tool).

The file is saved under its base name only in an upload folder of its own, read there and
removed when the request ends; a file the table reader cannot read is a 422.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated

from fastapi import APIRouter, File, Form, UploadFile
from fastapi.responses import Response

from tansaku.errors import LoadError, public_message
from tansaku.server import uploads
from tansaku.server.errors import ApiError
from tansaku.server.respond import json_response
from tansaku.server.responses import WRITE, documented
from tansaku.server.responses.tables import TableInferred, TableRegistered
from tansaku.server.state import AppState, StateDep, TeamDep

router = APIRouter(tags=["取り込み"])


@contextmanager
def _table_file(state: AppState, file: UploadFile) -> Iterator[tuple[str, Path]]:
    """The uploaded CSV/TSV as ``(name as sent, path of the server's copy)``: a file the
    reader cannot read (:class:`LoadError`) is a 422; the copy is removed afterwards."""
    home = state.client.workspace.home
    folder = uploads.new_folder(home)
    try:
        fname = uploads.safe_filename(file.filename)
        if Path(fname).suffix.lower() not in (".csv", ".tsv"):
            raise ApiError(400, "invalid_file", "表として登録できるのは CSV と TSV のファイルです")
        target = folder / fname
        uploads.save_upload(file, target, state.settings.max_upload_file_bytes)
        yield fname, target
    except LoadError as exc:
        raise ApiError(422, "invalid_file", public_message(str(exc), home=home)) from None
    finally:
        shutil.rmtree(folder, ignore_errors=True)


@router.post(
    "/api/ingest/table/infer",
    summary="CSV の列の型・説明・例を推定",
    responses=documented(TableInferred, *WRITE),
)
def table_infer(
    state: StateDep,
    team: TeamDep,
    file: Annotated[UploadFile, File(description="csv か tsv のファイル1つ")],
    name: Annotated[str | None, Form(max_length=63)] = None,
) -> Response:
    """CSV を表(SQL)として登録する前に、列ごとの型(INTEGER・DATE など)・説明・例と表の名前を
    推定して返す(何も登録しない)。直したものを `POST /api/ingest/table` に送る。"""
    from tansaku.tables.infer import infer_table, table_name_of
    from tansaku.tables.registry import check_table_name
    from tansaku.tables.upload import inferred_dict

    with _table_file(state, file) as (fname, path):
        body = inferred_dict(infer_table(path, name=check_table_name(name) if name else None))
    if not name:  # named after the file as it was sent, not the server's copy
        body["name"] = table_name_of(Path(fname))
    return json_response(body)


@router.post(
    "/api/ingest/table",
    status_code=201,
    summary="CSV を表(SQL)として登録",
    responses=documented(TableRegistered, *WRITE, 409, status=201, description="登録した"),
)
def table_register(
    state: StateDep,
    team: TeamDep,
    file: Annotated[UploadFile, File(description="csv か tsv のファイル1つ")],
    entry: Annotated[str, Form(max_length=200_000, description="推定結果を直した JSON")],
) -> Response:
    """`POST /api/ingest/table/infer` の結果(name・description・columns の type/description/
    example)を直した JSON と同じファイルを送ると、ワークスペースの表として登録し、その表だけを
    読む SQL ツール `search_名前` も作る。表はワークスペース全体のものなので、管理用のキー
    (またはキーなしのローカルサーバー)だけが登録できる(ほかは 403)。"""
    from tansaku.tables.register import NameTaken
    from tansaku.tables.upload import register_upload

    if not (state.keyless() or team in state.settings.admin_teams):
        raise ApiError(
            403,
            "admin_only",
            "表はワークスペース全体で使われるため、管理用のキー(tansaku serve --admin-team)"
            "でだけ登録できます",
        )
    try:
        data = json.loads(entry)
    except ValueError:
        raise ApiError(400, "invalid_request", "entry が JSON として読めません") from None
    if not isinstance(data, dict):
        raise ApiError(400, "invalid_request", "entry は JSON のオブジェクトにしてください")
    with _table_file(state, file) as (fname, path):
        try:
            added = register_upload(state.client.workspace, path, fname, data)
        except NameTaken as exc:
            raise ApiError(409, "table_exists", str(exc)) from None
    state.close_tables()  # reopened with the new table at the next use
    spec = added.config.table(data["name"])
    return json_response(
        {
            "table": spec.name,
            "rows": added.rows,
            "columns": [{"name": c.name, "type": c.type.value} for c in spec.columns],
            "tool": f"search_{spec.name}",
        },
        201,
    )

"""``POST /api/collections/{name}/fetch``: download a public dataset file from a URL (or
``hf://datasets/…``) and ingest it into the caller's team's collection as a background job, like
an upload.

The download runs while the request waits (bounded by ``[fetch] max_mb`` and ``timeout_s`` of
the workspace's ``tansaku.toml``), so a refused host, a file too large or of a wrong type, and a
server that cannot be reached are answered at once as 4xx with a Japanese message; the ingest
then runs as a job (``GET /api/jobs/{id}``) with the collection's own field mapping and limits.
The team is the caller's key's, never the body's. See :mod:`tansaku.transfer.fetch` for the
checks (public addresses only unless ``allow_hosts`` names the host).
"""

from __future__ import annotations

import shutil
from typing import Annotated

from fastapi import APIRouter
from fastapi.responses import Response
from pydantic import BaseModel, ConfigDict, Field

from tansaku.server import uploads
from tansaku.server.errors import ApiError
from tansaku.server.responses import WRITE, documented
from tansaku.server.responses.jobs import JobResponse
from tansaku.server.routes.ingest import _check_target, submit_ingest
from tansaku.server.state import StateDep, TeamDep
from tansaku.transfer.fetch_guard import FetchError, workspace_settings
from tansaku.workspace import validate_name

router = APIRouter(tags=["取り込み"])


class FetchBody(BaseModel):
    model_config = ConfigDict(extra="forbid")

    url: Annotated[
        str,
        Field(
            min_length=1,
            max_length=2000,
            description="https:// か http:// のファイルの URL、または"
            " hf://datasets/所有者/名前/ファイルのパス(Hugging Face のデータセット)",
            examples=["hf://datasets/owner/faq-ja/data/train.jsonl"],
        ),
    ]


@router.post(
    "/api/collections/{name}/fetch",
    status_code=202,
    summary="URL から取り込む",
    responses=documented(
        JobResponse, *WRITE, 409, 415, status=202, description="取り込みジョブを開始した"
    ),
)
def fetch(name: str, body: FetchBody, state: StateDep, team: TeamDep) -> Response:
    """公開データセットのファイル(JSONL・CSV・TSV・JSON・テキスト・Markdown、またはそれらの
    zip)を URL からダウンロードし、チームのコレクションに取り込むジョブを開始して 202 と
    ジョブを返す。許可されていないホスト・内部のアドレスは 403、大きすぎるファイルは 413、
    対応していない形式は 415、取得できない URL は 422。
    例: `{"url": "hf://datasets/owner/faq-ja/data/train.jsonl"}`"""
    collection = validate_name(name)
    exists = _check_target(state, team, collection)
    home = state.client.workspace.home
    folder = uploads.new_folder(home)
    from tansaku.transfer.fetch import download  # httpx (and its CLI's rich) only when used

    try:
        got = download(
            body.url,
            folder,
            workspace_settings(home),
            max_inflated=state.client.ingest_limits.max_inflated_bytes,
        )
    except FetchError as exc:
        shutil.rmtree(folder, ignore_errors=True)
        raise ApiError(exc.status, exc.code, str(exc)) from None
    except BaseException:
        shutil.rmtree(folder, ignore_errors=True)
        raise
    if not exists:
        state.owners.add(collection, team)
    return submit_ingest(
        state,
        team,
        collection,
        folder,
        got.sources,
        [p.relative_to(folder).as_posix() for p in got.paths],
        params={"url": got.url, "bytes": got.size},
    )

"""``POST /api/ingest`` (multipart upload into a collection, run as a background job in a worker
process), ``POST /api/ingest/preview`` (a table file's columns, first rows and a suggested
field mapping), ``GET /api/jobs/{job_id}`` (progress, counts and per-file failures) and
``POST /api/jobs/{job_id}/cancel``.

Uploads are capped in total (the body limit), per file and in number of files; each file is
saved under its base name only (no directories, no hidden names) in a folder of the job, read
by the same loaders as ``tansaku ingest`` and removed when the job ends. A file that fails is
reported with its reason while the others are ingested. An upload's ``mapping`` (the form's
field mapping, JSON) is checked against every CSV/TSV/JSON file's header before the job starts
and saved into the collection's ``[ingest.csv]`` / ``[ingest.json]`` with the job's commit.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Annotated, Any

from fastapi import APIRouter, File, Form, UploadFile
from fastapi.responses import Response

from tansaku.errors import public_message
from tansaku.ingest.mapping import (
    MAX_MAPPING_BYTES,
    MappingError,
    check_against,
    parse_mapping,
    saved_mapping,
    with_mapping,
)
from tansaku.ingest.preview import FileProblem, Table, preview, read_table, table_format
from tansaku.server import uploads
from tansaku.server.errors import ApiError, name_unavailable, not_found
from tansaku.server.owners import find_visible
from tansaku.server.respond import json_response
from tansaku.server.responses import WRITE, documented
from tansaku.server.responses.jobs import JobResponse, TablePreview
from tansaku.server.state import AppState, StateDep, TeamDep
from tansaku.server.worker import IngestTask, portable_embedder
from tansaku.workspace import validate_name

router = APIRouter(tags=["取り込み"])


def _unprocessable(exc: Exception) -> ApiError:
    if isinstance(exc, FileProblem):
        return ApiError(422, "invalid_file", f"ファイル「{exc.path}」を読めません: {exc.reason}")
    return ApiError(422, "invalid_mapping", str(exc))


def _config_ingest(state: AppState, name: str) -> dict[str, Any]:
    if not state.client.has_collection(name):
        return {}
    with state.client.reading(name) as col:
        return dict(col.config.ingest)


def _read(state: AppState, collection: str | None, name: str, data: bytes) -> Table:
    """``data`` as a table, read with the collection's ``[ingest.csv]`` encoding/delimiter."""
    csv: dict[str, Any] = {}
    if collection:
        section = _config_ingest(state, collection).get("csv")
        csv = section if isinstance(section, dict) else {}
    encoding = csv.get("encoding") if isinstance(csv.get("encoding"), str) else None
    delimiter = csv.get("delimiter") if isinstance(csv.get("delimiter"), str) else None
    return read_table(name, data, encoding=encoding or "auto", delimiter=delimiter)


def _mapping_for(state: AppState, name: str, raw: str, paths: list[Path]) -> dict[str, Any]:
    """The upload's mapping, checked against every table file's header and the collection's
    config: ``{"mapping", "formats"}`` for the worker, or a 422."""
    try:
        mapping = parse_mapping(raw)
        families: set[str] = set()
        for path in paths:
            if table_format(path.name) is None:
                continue
            table = _read(state, name, path.name, path.read_bytes())
            check_against(mapping, table)
            families.add(table.family)
        if not families:
            raise MappingError(
                "mapping は CSV / TSV / JSON Lines / JSON のファイルにだけ使えます"
                "(このアップロードにはありません)"
            )
        with_mapping(_config_ingest(state, name), mapping, families)
    except (FileProblem, MappingError) as exc:
        raise _unprocessable(exc) from None
    return {"mapping": mapping, "formats": sorted(families)}


def _ingested(state: AppState, folder: Path, result: dict[str, Any]) -> dict[str, Any]:
    """The worker's report as the job's result: counted in the metrics, no server paths."""
    state.metrics.ingest_chunks_total.inc(result.get("inserted", 0) + result.get("updated", 0))
    prefix = str(folder) + "/"
    result["failed"] = [
        {"path": f["path"].removeprefix(prefix), "reason": f["reason"].replace(prefix, "")}
        for f in result.get("failed", [])
    ]
    return result


def submit_ingest(
    state: AppState,
    team: str,
    collection: str,
    folder: Path,
    paths: list[Path],
    files: list[str],
    *,
    mapping: dict[str, Any] | None = None,
    params: dict[str, Any] | None = None,
) -> Response:
    """Files saved in ``folder`` ingested into the team's collection as a job (removed when
    it ends): the 202 answer with the job."""
    task = IngestTask(
        home=str(state.client.workspace.home),
        collection=collection,
        team=team,
        paths=tuple(str(p) for p in paths),
        mapping=mapping,
        embedder=portable_embedder(state.client.embedder.inner),
    )
    job = state.jobs.submit(
        kind="ingest",
        team=team,
        collection=collection,
        files=files,
        task=task,
        client=state.client,
        after=lambda result: _ingested(state, folder, result),
        cleanup=lambda: shutil.rmtree(folder, ignore_errors=True),
        params=params,
    )
    return json_response(job.to_dict(), 202)


def _check_target(state: AppState, team: str, name: str) -> bool:
    exists = state.client.has_collection(name)
    if exists and find_visible(state.client, state.owners, team, name) is None:
        raise name_unavailable(name)
    return exists


@router.post(
    "/api/ingest",
    status_code=202,
    summary="ファイルを取り込む",
    responses=documented(JobResponse, *WRITE, 409, status=202, description="ジョブを開始した"),
)
def ingest(
    state: StateDep,
    team: TeamDep,
    collection: Annotated[str, Form(max_length=200)],
    files: Annotated[
        list[UploadFile], File(description="md, txt, pdf, docx, csv, tsv, json, jsonl")
    ],
    mapping: Annotated[
        str | None,
        Form(
            max_length=MAX_MAPPING_BYTES,
            description="CSV/TSV/JSON の列の割り当て(JSON)。POST /api/ingest/preview の"
            " suggested と同じ形",
        ),
    ] = None,
) -> Response:
    """ファイルをコレクションに取り込むジョブを開始し、202 とジョブを返す。
    進み具合は `GET /api/jobs/{id}`。例: `curl -F collection=manuals -F files=@手順.md …`"""
    name = validate_name(collection)
    settings = state.settings
    exists = _check_target(state, team, name)
    if not files:
        raise ApiError(400, "invalid_request", "ファイルがありません")
    if len(files) > settings.max_upload_files:
        raise ApiError(
            413, "too_many_files", f"ファイルが多すぎます(1回に {settings.max_upload_files} 個まで)"
        )
    names = [uploads.safe_filename(f.filename) for f in files]
    if len(set(names)) != len(names):
        raise ApiError(400, "duplicate_filename", "同じ名前のファイルが複数あります")
    folder = uploads.new_folder(state.client.workspace.home)
    try:
        paths = []
        for upload, fname in zip(files, names, strict=True):
            target = folder / fname
            uploads.save_upload(upload, target, settings.max_upload_file_bytes)
            paths.append(target)
        chosen = _mapping_for(state, name, mapping, paths) if mapping is not None else None
    except BaseException:
        shutil.rmtree(folder, ignore_errors=True)
        raise
    if not exists:
        state.owners.add(name, team)  # the team sees its new collection while the job runs
    return submit_ingest(
        state,
        team,
        name,
        folder,
        paths,
        names,
        mapping=chosen,
        params={"mapping": chosen["mapping"]} if chosen else None,
    )


@router.post(
    "/api/ingest/preview",
    summary="表ファイルの下見",
    responses=documented(TablePreview, *WRITE),
)
def ingest_preview(
    state: StateDep,
    team: TeamDep,
    file: Annotated[UploadFile, File(description="csv, tsv, jsonl, json のファイル1つ")],
    collection: Annotated[str | None, Form(max_length=200)] = None,
) -> Response:
    """表ファイルの列・先頭5行・推奨の列の割り当て(suggested)を返す。`collection` が
    既存のコレクションなら、保存済みの割り当て(current)も返す。壊れたファイルは 422。"""
    fname = uploads.safe_filename(file.filename)
    limit = state.settings.max_upload_file_bytes
    data = file.file.read(limit + 1)
    if len(data) > limit:
        raise uploads.too_large(fname, limit)
    visible = None
    if collection:
        visible = find_visible(state.client, state.owners, team, validate_name(collection))
    try:
        table = _read(state, visible.name if visible else None, fname, data)
    except FileProblem as exc:
        raise _unprocessable(exc) from None
    body = preview(table)
    body["current"] = (
        saved_mapping(_config_ingest(state, visible.name), table.family) if visible else None
    )
    return json_response(body)


def _job_answer(state: AppState, job_id: str, job: dict[str, Any] | None) -> Response:
    """The team's job as a client sees it (no absolute path of the server in its messages),
    or the 404 of a job the team does not have."""
    if job is None:
        raise not_found(f"ジョブ「{job_id[:64]}」")
    home = state.client.workspace.home
    if job.get("error"):
        job["error"] = public_message(str(job["error"]), home=home)
    job["failures"] = [
        {**f, "reason": public_message(str(f["reason"]), home=home)} if "reason" in f else f
        for f in job.get("failures") or []
    ]
    return json_response(job)


@router.get(
    "/api/jobs/{job_id}",
    summary="ジョブの状態",
    responses=documented(JobResponse, 404, 422),
)
def job_status(job_id: str, state: StateDep, team: TeamDep) -> Response:
    return _job_answer(state, job_id, state.jobs.get(job_id, team=team))


@router.post(
    "/api/jobs/{job_id}/cancel",
    summary="ジョブを取り消す",
    responses=documented(JobResponse, *WRITE, 404, 409),
)
def job_cancel(job_id: str, state: StateDep, team: TeamDep) -> Response:
    """待機中のジョブはすぐに取り消す(status: cancelled)。実行中のジョブは処理を止め、
    止まると cancelled になる(書きかけの内容は反映されない)。終わったジョブは 409。"""
    return _job_answer(state, job_id, state.jobs.cancel(job_id, team=team))

"""``POST /api/ingest`` (multipart upload into a collection, run as a background job) and
``GET /api/jobs/{job_id}`` (its progress, counts and per-file failures).

Uploads are capped in total (the body limit), per file and in number of files; each file is
saved under its base name only (no directories, no hidden names) in a folder of the job, read
by the same loaders as ``tansaku ingest`` and removed when the job ends. A file that fails is
reported with its reason while the others are ingested.
"""

from __future__ import annotations

import re
import shutil
import uuid
from pathlib import Path
from typing import Annotated, Any

from fastapi import APIRouter, File, Form, UploadFile
from fastapi.responses import Response

from tansaku.server.errors import ApiError, not_found
from tansaku.server.jobs import Job
from tansaku.server.owners import find_visible
from tansaku.server.respond import JsonResponse, json_response
from tansaku.server.state import AppState, StateDep, TeamDep
from tansaku.workspace import validate_name

router = APIRouter(tags=["取り込み"])
CHUNK = 1024 * 1024
_UNSAFE_NAME = re.compile(r"[\x00-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def safe_filename(raw: str | None) -> str:
    """The base name of an uploaded file, or a 400: no folders, no control characters, not
    hidden, at most 200 characters."""
    name = (raw or "").replace("\\", "/").rsplit("/", 1)[-1].strip()
    if not name or name in (".", "..") or name.startswith(".") or _UNSAFE_NAME.search(name):
        raise ApiError(
            400, "invalid_filename", f"ファイル名「{_UNSAFE_NAME.sub('?', raw or '')}」は使えません"
        )
    if len(name) > 200:
        raise ApiError(400, "invalid_filename", "ファイル名が長すぎます(200文字まで)")
    return name


def _save(upload: UploadFile, target: Path, limit: int) -> int:
    size = 0
    with target.open("wb") as fh:
        while True:
            chunk = upload.file.read(CHUNK)
            if not chunk:
                break
            size += len(chunk)
            if size > limit:
                raise ApiError(
                    413,
                    "file_too_large",
                    f"ファイル「{target.name}」が大きすぎます(上限 {limit:,} バイト)",
                )
            fh.write(chunk)
    return size


def _ingest(
    state: AppState, folder: Path, paths: list[Path], team: str, job: Job
) -> dict[str, Any]:
    try:
        report = state.client.ingest(
            paths,
            collection=job.collection,
            team=team,
            progress=lambda stage, done, total: state.jobs.update(job, stage, done, total),
        )
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    state.metrics.ingest_chunks_total.inc(report.inserted + report.updated)
    data = report.to_dict()
    prefix = str(folder) + "/"
    data["failed"] = [
        {"path": f["path"].removeprefix(prefix), "reason": f["reason"].replace(prefix, "")}
        for f in data["failed"]
    ]
    return data


@router.post(
    "/api/ingest", response_class=JsonResponse, status_code=202, summary="ファイルを取り込む"
)
def ingest(
    state: StateDep,
    team: TeamDep,
    collection: Annotated[str, Form(max_length=200)],
    files: Annotated[
        list[UploadFile], File(description="md, txt, pdf, docx, csv, tsv, json, jsonl")
    ],
) -> Response:
    """ファイルをコレクションに取り込むジョブを開始し、202 とジョブを返す。
    進み具合は `GET /api/jobs/{id}`。例: `curl -F collection=manuals -F files=@手順.md …`"""
    name = validate_name(collection)
    settings = state.settings
    exists = state.client.has_collection(name)
    if exists and find_visible(state.client, state.owners, team, name) is None:
        raise ApiError(
            409,
            "collection_exists",
            f"コレクション名「{name}」は使用中です。別の名前にしてください",
        )
    if not files:
        raise ApiError(400, "invalid_request", "ファイルがありません")
    if len(files) > settings.max_upload_files:
        raise ApiError(
            413, "too_many_files", f"ファイルが多すぎます(1回に {settings.max_upload_files} 個まで)"
        )
    names = [safe_filename(f.filename) for f in files]
    if len(set(names)) != len(names):
        raise ApiError(400, "duplicate_filename", "同じ名前のファイルが複数あります")
    folder = state.client.workspace.home / "server" / "uploads" / uuid.uuid4().hex
    folder.mkdir(parents=True)
    try:
        paths = []
        for upload, fname in zip(files, names, strict=True):
            target = folder / fname
            _save(upload, target, settings.max_upload_file_bytes)
            paths.append(target)
    except BaseException:
        shutil.rmtree(folder, ignore_errors=True)
        raise
    if not exists:
        state.owners.add(name, team)  # the team sees its new collection while the job runs
    job = state.jobs.submit(
        kind="ingest",
        team=team,
        collection=name,
        files=names,
        work=lambda j: _ingest(state, folder, paths, team, j),
    )
    return json_response(job.to_dict(), 202)


@router.get("/api/jobs/{job_id}", response_class=JsonResponse, summary="ジョブの状態")
def job_status(job_id: str, state: StateDep, team: TeamDep) -> Response:
    job = state.jobs.get(job_id, team=team)
    if job is None:
        raise not_found(f"ジョブ「{job_id[:64]}」")
    return json_response(job)

"""Background jobs (``/api/ingest``, ``/api/qa/generate``, ``/api/jobs/{id}``) and the table
preview of ``/api/ingest/preview``."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field


class StageProgress(BaseModel):
    done: int
    total: int


class JobResponse(BaseModel):
    """ジョブの状態(tansaku.server.job_state)。status は queued, running, done, failed,
    cancelled。progress は段階ごとの done / total。"""

    id: str
    kind: str = Field(description="ingest か qa")
    collection: str
    status: str
    status_label: str
    files: list[str]
    params: dict[str, Any]
    created_at: str
    started_at: str | None
    finished_at: str | None
    stage: str | None
    progress: dict[str, StageProgress]
    counts: dict[str, Any] | None
    rate: float | None
    eta_s: float | None
    result: dict[str, Any] | None
    failures: list[dict[str, Any]] = Field(description="失敗したファイルやチャンクとその理由")
    error: str | None


class FieldMapping(BaseModel):
    """表ファイルの列の割り当て(POST /api/ingest の mapping と同じ形)。"""

    id_column: str | None
    title_column: str | None
    text_fields: dict[str, list[str]]
    metadata_columns: dict[str, str]
    source_type: str


class TablePreview(BaseModel):
    """表ファイルの列・先頭の行・推奨の割り当て。current は既存コレクションの保存済みの割り当て。"""

    format: str
    encoding: str
    delimiter: str | None
    columns: list[str]
    rows: list[list[str]]
    suggested: FieldMapping
    current: FieldMapping | None

"""``POST /api/qa/generate``: Q/A pair generation (the RAG Q&A design, ``003_…txt``) as a
background job over :func:`tansaku.agent.qa.generate_qa`.

The team comes from the credentials: the source's chunks are the team's records, the pairs go
into the team's target collection. The model is the workspace's configured one (environment,
then ``tansaku.toml`` ``[llm]``, read at each request); with none, a 409. The job reports
chunks done / total under the stage ``generate`` and ends with the library's report. Jobs into
one target run one after another, and a job is resumable as the library is: the progress file
in the workspace keeps every finished chunk, so posting the same request again (after a failure,
a restart or a kill) asks the model only for the chunks still missing.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter
from fastapi.responses import Response
from pydantic import Field

from tansaku.server.errors import ApiError, collection_missing, name_unavailable
from tansaku.server.owners import find_visible
from tansaku.server.respond import json_response
from tansaku.server.responses import WRITE, documented
from tansaku.server.responses.jobs import JobResponse
from tansaku.server.schemas import Body, Name
from tansaku.server.state import AppState, StateDep, TeamDep
from tansaku.workspace import validate_name

router = APIRouter(tags=["Q/A生成"])
STAGE = "generate"
NO_MODEL = (
    "Q/A の生成には言語モデルが必要ですが、このサーバーには設定されていません。"
    "サーバーの環境変数 TANSAKU_LLM_MODEL と TANSAKU_LLM_BASE_URL"
    "(またはワークスペースの tansaku.toml の [llm])でモデルを設定してください(docs/qa.md)"
)


class QABody(Body):
    """Where the pairs come from and where they go; the team is the caller's."""

    source: Name
    """The collection whose chunks the model writes pairs for."""
    target: Name
    """The Q&A collection the pairs go into (created with the Q/A config when new)."""
    per_chunk: Annotated[int, Field(ge=1, le=10)] = 3
    """Pairs asked per chunk (the model may return fewer)."""
    limit: Annotated[int, Field(ge=1, le=1_000_000)] | None = None
    """Only the first N chunks (a trial run)."""


def _generated(state: AppState, body: QABody, data: dict[str, Any]) -> dict[str, Any]:
    """The worker's report as the job's result: counted in the metrics, no server paths."""
    ingested = data.get("ingested", {})
    state.metrics.ingest_chunks_total.inc(ingested.get("inserted", 0) + ingested.get("updated", 0))
    home = str(state.client.workspace.home).rstrip("/") + "/"
    data["progress_file"] = str(data.get("progress_file", "")).removeprefix(home)
    return {"source": body.source, "target": body.target, "model": data.pop("model", ""), **data}


@router.post(
    "/api/qa/generate",
    status_code=202,
    summary="Q/A ペアを生成する",
    responses=documented(
        JobResponse, *WRITE, 404, 409, 501, status=202, description="ジョブを開始した"
    ),
)
def generate(body: QABody, state: StateDep, team: TeamDep) -> Response:
    """コレクションの各チャンクから質問と回答のペアを言語モデルに書かせ、Q&A コレクションに
    登録するジョブを開始し、202 とジョブを返す。進み具合(チャンク数)は `GET /api/jobs/{id}`。
    同じ内容でもう一度送ると、済んだチャンクを飛ばして続きから生成する。
    例: `{"source": "manuals", "target": "manuals_qa", "per_chunk": 3, "limit": 5}`"""
    source = validate_name(body.source)
    target = validate_name(body.target)
    if source == target:
        raise ApiError(400, "invalid_request", "生成元と生成先に同じコレクションは指定できません")
    if find_visible(state.client, state.owners, team, source) is None:
        raise collection_missing(source)
    exists = state.client.has_collection(target)
    if exists and find_visible(state.client, state.owners, team, target) is None:
        raise name_unavailable(target)
    from tansaku.agent import configured_model

    model = configured_model(state.client)  # ConfigError → 400, a missing SDK → 501
    if model is None:
        raise ApiError(409, "model_not_configured", NO_MODEL)
    if not exists:
        state.owners.add(target, team)  # the team sees its new collection while the job runs
    params = {"source": source, "target": target, "per_chunk": body.per_chunk}
    if body.limit is not None:
        params["limit"] = body.limit
    from tansaku.agent.models.config import resolve_settings
    from tansaku.server.worker import QATask, portable_embedder

    task = QATask(  # the worker builds the model from the settings resolved here
        home=str(state.client.workspace.home),
        team=team,
        source=source,
        target=target,
        per_chunk=body.per_chunk,
        limit=body.limit,
        model=resolve_settings(state.client.workspace.home),
        embedder=portable_embedder(state.client.embedder.inner),
    )
    job = state.jobs.submit(
        kind="qa",
        team=team,
        collection=target,
        files=[],
        params=params,
        task=task,
        client=state.client,
        after=lambda data: _generated(state, body, data),
    )
    return json_response(job.to_dict(), 202)

"""What the 説明 page and the record page show for one team: the collections and tables as the
JSON API lists them, and the records of a document."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any

from tansaku.records import Record
from tansaku.server.owners import find_visible
from tansaku.server.routes.collections import collection_summaries
from tansaku.server.routes.tables import table_summaries
from tansaku.server.state import AppState

log = logging.getLogger("tansaku.server.ui")
MAX_DOC_RECORDS = 200


@dataclass(frozen=True)
class Overview:
    team: str
    collections: tuple[dict[str, Any], ...]
    """As ``GET /api/collections`` lists them."""
    tables: tuple[dict[str, Any], ...]
    """As ``GET /api/tables`` lists them."""
    embedder: str | None
    embedder_error: str | None
    chat_model: str
    notes: tuple[str, ...] = field(default=())


def _tables(state: AppState) -> tuple[dict[str, Any], ...]:
    try:
        db = state.tables_if_any()
    except Exception:  # a broken tables.toml must not take the overview down
        log.exception("tables unavailable")
        return ()
    return () if db is None else tuple(table_summaries(db))


def _chat_model(state: AppState) -> str:
    try:
        from tansaku.agent import configured_model

        model = configured_model(state.client)
    except Exception as exc:
        return f"設定を読めません({type(exc).__name__})— オフラインで回答します"
    if model is None:
        return "未設定 — オフラインのルーターが検索結果から抜き出して回答します"
    return str(getattr(model, "name", None) or type(model).__name__)


def overview(state: AppState, team: str) -> Overview:
    embedder = state.model
    if embedder is None and state.model_error is None:
        embedder = getattr(state.client.embedder, "name", None)
    return Overview(
        team=team,
        collections=tuple(collection_summaries(state, team)),
        tables=_tables(state),
        embedder=embedder,
        embedder_error=state.model_error,
        chat_model=_chat_model(state),
    )


def document_records(state: AppState, team: str, collection: str, doc_id: str) -> list[Record]:
    """The team's records of one document (at most ``MAX_DOC_RECORDS``), in id order; empty
    when the collection is not the team's or the document is not there."""
    if find_visible(state.client, state.owners, team, collection) is None:
        return []
    with state.client.reading(collection) as col:
        return col.document(team, doc_id, MAX_DOC_RECORDS)


def record_view(record: Record) -> dict[str, Any]:
    return {
        "id": record.id,
        "field": record.field,
        "text": record.text,
        "metadata": {k: v for k, v in record.metadata.items() if k != "source"},
    }

"""The unit everything else moves around: one searchable chunk of a document."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from dataclasses import field as dc_field
from typing import Any


def record_id(doc_id: str, field_name: str, n: int | None = None) -> str:
    """Stable record id: ``{doc_id}:{field}`` or ``{doc_id}:{field}:{n}`` for chunk ``n``."""
    if not doc_id:
        raise ValueError("doc_id must not be empty")
    if not field_name:
        raise ValueError("field must not be empty")
    return f"{doc_id}:{field_name}" if n is None else f"{doc_id}:{field_name}:{n}"


@dataclass(frozen=True, slots=True)
class Record:
    """One searchable chunk.

    ``id`` is stable across re-ingests (see :func:`record_id`); ``doc_id`` names the parent
    (a note, a card, a report, a manual); ``field`` is its namespace (``materials_methods``,
    ``combined``, ``effect_1``, ``qa_question``, ``body``...). ``metadata`` holds title,
    source_type, date (``YYYY-MM-DD``), store, author, chapter, section, path...
    """

    id: str
    doc_id: str
    field: str
    text: str
    metadata: Mapping[str, Any] = dc_field(default_factory=dict)

    def __reduce__(self) -> tuple[Any, ...]:
        # by its fields: a slotted dataclass's generic state is two Python calls an object each
        # way, and a search process pickles every hit's record to the server
        return (Record, (self.id, self.doc_id, self.field, self.text, self.metadata))

    def content_hash(self) -> str:
        """sha256 over text and sorted metadata: equal hash means re-ingest is a no-op."""
        blob = json.dumps(
            {
                "text": self.text,
                "field": self.field,
                "doc_id": self.doc_id,
                "metadata": dict(self.metadata),
            },
            ensure_ascii=False,
            sort_keys=True,
            default=str,
        )
        return hashlib.sha256(blob.encode("utf-8")).hexdigest()

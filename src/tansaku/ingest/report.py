"""What an ingest reports: counts, failures and the per-record audit trail."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

KEPT = ("insert", "update", "unchanged")
"""Audit actions of a record the collection holds after the ingest."""


@dataclass(frozen=True)
class Failure:
    path: str
    reason: str


@dataclass(frozen=True)
class AuditRow:
    id: str
    field: str
    text_len: int
    action: str  # insert | update | unchanged | delete | skip
    reason: str = ""
    doc_id: str = ""

    def to_dict(self) -> dict[str, Any]:
        d = {
            "id": self.id,
            "doc_id": self.doc_id,
            "field": self.field,
            "text_len": self.text_len,
            "action": self.action,
        }
        if self.reason:
            d["skip_reason" if self.action == "skip" else "reason"] = self.reason
        return d


@dataclass(frozen=True)
class IngestReport:
    inserted: int = 0
    updated: int = 0
    unchanged: int = 0
    deleted: int = 0
    embedded: int = 0
    skipped: int = 0
    failed: tuple[Failure, ...] = ()
    dry_run: bool = False
    audit: tuple[AuditRow, ...] = field(default=(), repr=False)
    fields: dict[str, int] = field(default_factory=dict, repr=False)
    """Records per field the files hold after the ingest (inserted, updated or unchanged),
    when counted without keeping the audit."""

    @property
    def ok(self) -> bool:
        return not self.failed

    def by_field(self) -> dict[str, int]:
        """Records per field (the design's namespaces: effect_1, qa_question …) that the
        collection holds after this ingest from its files: inserted, updated or unchanged."""
        out: dict[str, int] = dict(self.fields)
        if not out:
            for row in self.audit:
                if row.action in KEPT:
                    out[row.field] = out.get(row.field, 0) + 1
        return dict(sorted(out.items(), key=lambda kv: (-kv[1], kv[0])))

    def to_dict(self) -> dict[str, Any]:
        return {
            "by_field": self.by_field(),
            "inserted": self.inserted,
            "updated": self.updated,
            "unchanged": self.unchanged,
            "deleted": self.deleted,
            "embedded": self.embedded,
            "skipped": self.skipped,
            "dry_run": self.dry_run,
            "failed": [{"path": f.path, "reason": f.reason} for f in self.failed],
        }


def write_audit(report: IngestReport, path: str | Path) -> Path:
    """The audit trail as JSON lines (one per record: id, field, text_len, action, reason)."""
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    with p.open("w", encoding="utf-8") as fh:
        for row in report.audit:
            fh.write(json.dumps(row.to_dict(), ensure_ascii=False) + "\n")
        for f in report.failed:
            fh.write(
                json.dumps(
                    {"path": f.path, "action": "failed", "reason": f.reason}, ensure_ascii=False
                )
                + "\n"
            )
    return p

"""An ingest as a plan: what to add, update and delete — computed, never applied, here.

:func:`plan_ingest` is pure: given the incoming records and what the store holds of the same
team (:class:`~tansaku.store.base.StoredInfo` by record id), it decides every record's fate.
:func:`tansaku.ingest.apply.apply_plan` applies the plan and keeps the collection's
statistics and indexes in line with what it writes.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from tansaku.ingest.report import AuditRow, Failure, IngestReport
from tansaku.records import Record
from tansaku.store.base import StoredInfo


@dataclass(frozen=True, kw_only=True)
class IngestPlan:
    """What an ingest of one team changes."""

    tenant: str
    inserts: tuple[Record, ...] = ()
    """Records no stored record has the id of."""
    updates: tuple[Record, ...] = ()
    """Records whose content differs from the stored record of the same id."""
    deletes: tuple[StoredInfo, ...] = ()
    """Stored records to remove (chunks a document no longer has, documents gone)."""
    replaced: Mapping[str, StoredInfo] = field(default_factory=dict)
    """What is stored of each updated record (its field and BM25 length leave the
    statistics when it is rewritten)."""
    hashes: Mapping[str, str] = field(default_factory=dict)
    """Content hash of every incoming record, by id."""
    unchanged: int = 0
    skipped: int = 0
    audit: tuple[AuditRow, ...] = ()

    @property
    def changed(self) -> tuple[Record, ...]:
        """Records to write: inserts, then updates."""
        return self.inserts + self.updates

    @property
    def empty(self) -> bool:
        """Nothing to write or delete."""
        return not (self.inserts or self.updates or self.deletes)

    def report(
        self, *, failed: Sequence[Failure] = (), dry_run: bool = False, embedded: int = 0
    ) -> IngestReport:
        return IngestReport(
            inserted=len(self.inserts),
            updated=len(self.updates),
            unchanged=self.unchanged,
            deleted=len(self.deletes),
            embedded=embedded,
            skipped=self.skipped,
            failed=tuple(failed),
            dry_run=dry_run,
            audit=self.audit,
        )


def dedupe(records: Iterable[Record]) -> tuple[list[Record], list[AuditRow]]:
    """The records to ingest (empty texts and repeated ids skipped) and the skipped rows."""
    seen: dict[str, Record] = {}
    skipped: list[AuditRow] = []
    for r in records:
        if not r.text.strip():
            skipped.append(AuditRow(r.id, r.field, 0, "skip", "本文が空です", r.doc_id))
        elif r.id in seen:
            skipped.append(
                AuditRow(
                    r.id, r.field, len(r.text), "skip", "同じIDのレコードが先にあります", r.doc_id
                )
            )
        else:
            seen[r.id] = r
    return list(seen.values()), skipped


def _under(source: str, roots: Sequence[Path]) -> bool:
    try:
        p = Path(source).resolve()
    except (OSError, ValueError):
        return False
    return any(p == r or r in p.parents for r in roots)


def plan_ingest(
    records: Sequence[Record],
    stored: Mapping[str, StoredInfo],
    *,
    tenant: str,
    skipped: Sequence[AuditRow] = (),
    sync_roots: Sequence[Path] | None = None,
    sync_all: bool = False,
) -> IngestPlan:
    """The plan that brings the team's stored records in line with ``records`` (deduplicated,
    see :func:`dedupe`; ``skipped`` are the rows it skipped).

    ``stored`` must hold every stored record of the documents in ``records`` (and of any
    document a record id moved from); with ``sync_roots`` or ``sync_all`` every stored record
    of the team (with metadata for ``sync_roots``). Chunks a document no longer has are
    deleted; ``sync_roots``: so are stored documents whose ``metadata.source`` lies under one of
    these folders/files but produced no record; ``sync_all``: every stored document that
    produced no record.
    """
    audit = list(skipped)
    inserts: list[Record] = []
    updates: list[Record] = []
    replaced: dict[str, StoredInfo] = {}
    hashes: dict[str, str] = {}
    for r in records:
        h = r.content_hash()
        hashes[r.id] = h
        old = stored.get(r.id)
        if old is None:
            inserts.append(r)
            audit.append(AuditRow(r.id, r.field, len(r.text), "insert", doc_id=r.doc_id))
        elif old.content_hash != h:
            updates.append(r)
            replaced[r.id] = old
            audit.append(AuditRow(r.id, r.field, len(r.text), "update", doc_id=r.doc_id))
        else:
            audit.append(AuditRow(r.id, r.field, len(r.text), "unchanged", doc_id=r.doc_id))

    produced_ids = set(hashes)
    produced_docs = {r.doc_id for r in records}
    roots = [Path(p).resolve() for p in (sync_roots or [])]
    deletes: list[StoredInfo] = []
    for rid, info in stored.items():
        if rid in produced_ids:
            continue
        doc = info.record.doc_id
        stale_chunk = doc in produced_docs
        source = str(info.record.metadata.get("source", ""))
        gone = sync_all or (roots and _under(source, roots))
        if stale_chunk or gone:
            deletes.append(info)
            reason = "文書から消えた部分です" if stale_chunk else "ソースから消えた文書です"
            audit.append(AuditRow(rid, info.record.field, 0, "delete", reason, doc))
    return IngestPlan(
        tenant=tenant,
        inserts=tuple(inserts),
        updates=tuple(updates),
        deletes=tuple(deletes),
        replaced=replaced,
        hashes=hashes,
        unchanged=len(records) - len(inserts) - len(updates),
        skipped=len(skipped),
        audit=tuple(audit),
    )

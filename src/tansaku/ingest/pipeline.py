"""Ingest: sources -> records -> diff against the store -> embed what changed -> upsert.

Re-ingesting unchanged content is a no-op (no embedding, no write). Changed content replaces by
id; chunks a document no longer has are removed; ``sync`` also removes documents that vanished
from the given source folders. Writes go in batches, each atomic in the engine, so an
interrupted ingest leaves a readable collection that the next run completes.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from tansaku.collection import Collection
from tansaku.embed.cache import CachedEmbedder
from tansaku.errors import LoadError
from tansaku.faults import crashpoint
from tansaku.ingest import maintain
from tansaku.ingest.maintain import (
    ProgressFn,
    build_units,
    count_lengths,
    encode_with_projected_averages,
    reweight_drifted,
)
from tansaku.ingest.report import AuditRow, Failure, IngestReport, write_audit
from tansaku.records import Record
from tansaku.store.base import Filter, StoredPoint
from tansaku.store.sparse import doc_vector, term_ids
from tansaku.text import get_analyzer

DOC_CHUNK = 1_000  # documents per read of what is stored


def load_sources(
    paths: Sequence[str | Path],
    collection: Collection,
    *,
    follow_symlinks: bool = False,
    progress: ProgressFn | None = None,
) -> tuple[list[Record], list[Failure]]:
    """Run every loader over ``paths``; failures are collected, never raised."""
    from tansaku.ingest.loaders import load_file
    from tansaku.ingest.sources import iter_source_files

    records: list[Record] = []
    failures: list[Failure] = []
    sources = list(iter_source_files([Path(p) for p in paths], follow_symlinks=follow_symlinks))
    for i, src in enumerate(sources, 1):
        result = load_file(src, collection.config)
        records.extend(result.records)
        failures.extend(Failure(e.path, e.reason) for e in result.errors)
        if progress is not None:
            progress("load", i, len(sources))
    return records, failures


def _dedupe(records: Iterable[Record]) -> tuple[list[Record], list[AuditRow]]:
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


def _stored(
    collection: Collection,
    tenant: str,
    recs: Sequence[Record],
    docs: set[str] | None,
    *,
    meta: bool,
) -> dict[str, dict[str, Any]]:
    """What is stored of the tenant's records, by record id: every record (``docs`` is None),
    or those of the given documents plus any incoming record id stored under another document.
    Read ``DOC_CHUNK`` documents a call, so an ingest into a large collection costs what it
    brings, not what is already there."""
    keys = ["rid", "doc_id", "field", "hash", "bm25_len"] + (["meta"] if meta else [])
    store = collection.store
    if docs is None:
        return {p["rid"]: p for p in store.scan(tenant, keys=keys)}

    def read(doc_ids: Iterable[str]) -> None:
        ordered = sorted(doc_ids)
        for i in range(0, len(ordered), DOC_CHUNK):
            flt = Filter(doc_ids=tuple(ordered[i : i + DOC_CHUNK]))
            out.update((p["rid"], p) for p in store.scan(tenant, flt, keys=keys))

    out: dict[str, dict[str, Any]] = {}
    read(docs)
    missing = [r.id for r in recs if r.id not in out]
    moved: set[str] = set()
    for i in range(0, len(missing), DOC_CHUNK):  # a record id that changed documents
        moved.update(r.doc_id for r in store.get(tenant, missing[i : i + DOC_CHUNK]))
    read(moved - docs)
    return out


def _under(source: str, roots: Sequence[Path]) -> bool:
    try:
        p = Path(source).resolve()
    except (OSError, ValueError):
        return False
    return any(p == r or r in p.parents for r in roots)


def ingest_records(
    collection: Collection,
    records: Iterable[Record],
    embedder: CachedEmbedder | None,
    *,
    tenant: str,
    sync_roots: Sequence[Path] | None = None,
    sync_all: bool = False,
    dry_run: bool = False,
    failures: Sequence[Failure] = (),
    progress: ProgressFn | None = None,
    checkpoint: Callable[[], None] | None = None,
    checkpoint_every: float | None = None,
) -> IngestReport:
    """Bring the tenant's part of ``collection`` (a writer's, see ``tansaku.writer``) in line
    with ``records``. Records are embedded and written a batch at a time; ``checkpoint``
    (publishing what is written so far) is called between batches every ``checkpoint_every``
    seconds (default ``$TANSAKU_CHECKPOINT_S`` or 60).

    ``sync_roots``: delete stored documents whose ``metadata.source`` lies under one of these
    folders/files but produced no record this run. ``sync_all``: delete every stored document of
    the tenant that produced no record (the collection mirrors ``records`` exactly).
    """
    cfg = collection.config
    recs, audit = _dedupe(records)
    skipped = len(audit)
    fresh = dry_run and collection.handles is None
    produced_docs = {r.doc_id for r in recs}
    existing = (
        {}
        if fresh
        else _stored(
            collection,
            tenant,
            recs,
            # without a sync, only the documents of this run can change: read just those
            None if (sync_all or sync_roots) else produced_docs,
            # metadata (the source path) is only needed to find documents gone from sync roots
            meta=bool(sync_roots),
        )
    )
    produced_ids = {r.id for r in recs}
    inserts: list[Record] = []
    updates: list[Record] = []
    hashes: dict[str, str] = {}
    for r in recs:
        h = r.content_hash()
        hashes[r.id] = h
        old = existing.get(r.id)
        if old is None:
            inserts.append(r)
            audit.append(AuditRow(r.id, r.field, len(r.text), "insert", doc_id=r.doc_id))
        elif old.get("hash") != h:
            updates.append(r)
            audit.append(AuditRow(r.id, r.field, len(r.text), "update", doc_id=r.doc_id))
        else:
            audit.append(AuditRow(r.id, r.field, len(r.text), "unchanged", doc_id=r.doc_id))

    roots = [Path(p).resolve() for p in (sync_roots or [])]
    deletes: list[str] = []
    for rid, p in existing.items():
        if rid in produced_ids:
            continue
        doc = p.get("doc_id", "")
        stale_chunk = doc in produced_docs
        gone = sync_all or (roots and _under(str((p.get("meta") or {}).get("source", "")), roots))
        if stale_chunk or gone:
            deletes.append(rid)
            audit.append(
                AuditRow(
                    rid,
                    p.get("field", ""),
                    0,
                    "delete",
                    "文書から消えた部分です" if stale_chunk else "ソースから消えた文書です",
                    doc,
                )
            )

    report = IngestReport(
        inserted=len(inserts),
        updated=len(updates),
        unchanged=len(recs) - len(inserts) - len(updates),
        deleted=len(deletes),
        skipped=skipped,
        failed=tuple(failures),
        dry_run=dry_run,
        audit=tuple(audit),
    )
    if dry_run:
        return report
    changed = inserts + updates
    units_missing = collection.needs_units and not collection.has_units(tenant)
    if not (changed or deletes or units_missing):
        return report  # nothing to write: a lazy writer commits nothing
    collection.begin_write()

    analyzer = get_analyzer(cfg.split_mode)
    terms = {}
    for i, r in enumerate(changed, 1):  # Sudachi at ~1.5 MB/s: minutes for a large file
        terms[r.id] = term_ids(analyzer.terms(r.text))
        if progress is not None and (i % maintain.BATCH == 0 or i == len(changed)):
            progress("analyze", i, len(changed))
    encode_with_projected_averages(collection, tenant, existing, deletes, updates, changed, terms)

    dense_fields = collection.dense_fields() if collection.needs_dense else set()
    to_embed = {r.id for r in changed if dense_fields is None or r.field in dense_fields}
    if to_embed and embedder is None:
        raise ValueError("dense axes need an embedder")
    embedded_before = embedder.embedded if embedder is not None else 0
    total_embed = len(to_embed)
    embedded_so_far = 0

    def point(r: Record, vectors: dict[str, Any]) -> StoredPoint:
        st = collection.state.stats(tenant, r.field)
        ids = terms.pop(r.id)  # built a batch at a time and let go: memory stays bounded
        sparse = doc_vector(
            ids, k1=cfg.bm25_k1, b=cfg.bm25_b, avgdl=st.avgdl_written or st.avgdl or 1.0
        )
        return StoredPoint(r, sparse, vectors.pop(r.id, None), hashes[r.id], len(ids))

    units = collection.needs_units and collection.has_units(tenant)
    clock = maintain.Checkpoints(checkpoint, checkpoint_every)
    for i in range(0, len(changed), maintain.BATCH):
        batch = changed[i : i + maintain.BATCH]
        vectors: dict[str, Any] = {}
        want = [r for r in batch if r.id in to_embed]
        if want and embedder is not None:
            base = embedded_so_far

            def advance(n: int, base: int = base) -> None:
                if progress is not None:
                    progress("embed", min(base + n, total_embed), total_embed)

            arr = embedder.embed_passages([r.text for r in want], progress=advance)
            vectors = {r.id: arr[j] for j, r in enumerate(want)}
            embedded_so_far += len(want)
        crashpoint("embed")
        if units:  # units first: a crash in between leaves records that re-ingest rewrites
            collection.units.replace(tenant, batch)
            crashpoint("units")
        points = [point(r, vectors) for r in batch]
        collection.store.upsert(tenant, points)
        crashpoint("records")
        added = [(p.record.field, p.bm25_len) for p in points]
        count_lengths(
            collection, tenant, [existing[r.id] for r in batch if r.id in existing], added
        )
        crashpoint("stats")
        if progress is not None:
            progress("write", min(i + maintain.BATCH, len(changed)), len(changed))
        clock.tick()
    for i in range(0, len(deletes), maintain.BATCH):
        doomed = deletes[i : i + maintain.BATCH]
        collection.store.delete(tenant, doomed)
        if units:  # after the records: an orphan unit finds no record and is dropped
            collection.units.delete(tenant, doomed)
        count_lengths(collection, tenant, [existing[rid] for rid in doomed], [])
        crashpoint("delete")
        clock.tick()
    if collection.needs_units and not units:
        build_units(collection, tenant, progress=progress)
    elif not collection.needs_units and (changed or deletes):
        collection.state.units.discard(tenant)  # no longer maintained: rebuilt when needed
    reweight_drifted(collection, tenant)
    if collection.store.needs_index(len(changed)):
        if progress is not None:
            progress("index", 0, 1)
        collection.store.optimize()
        if collection.needs_units:
            collection.units.optimize()
        if progress is not None:
            progress("index", 1, 1)
    embedded = (embedder.embedded - embedded_before) if embedder is not None else 0
    return IngestReport(
        inserted=report.inserted,
        updated=report.updated,
        unchanged=report.unchanged,
        deleted=report.deleted,
        embedded=embedded,
        skipped=skipped,
        failed=report.failed,
        dry_run=False,
        audit=report.audit,
    )


__all__ = [
    "AuditRow",
    "Failure",
    "IngestReport",
    "LoadError",
    "ProgressFn",
    "ingest_records",
    "load_sources",
    "write_audit",
]

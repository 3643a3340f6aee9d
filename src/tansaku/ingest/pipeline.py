"""Ingest: sources -> records -> a plan against what is stored -> the collection applies it.

Re-ingesting unchanged content is a no-op (no embedding, no write). Changed content replaces by
id; chunks a document no longer has are removed; ``sync`` also removes documents that vanished
from the given source folders. The plan is computed here (``tansaku.ingest.plan``, pure); the
collection gets it applied (``tansaku.ingest.apply``: embedding, records, units, statistics, index).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from tansaku.collection import Collection
from tansaku.config import CollectionConfig, load_config
from tansaku.embed.cache import CachedEmbedder
from tansaku.errors import LoadError
from tansaku.ingest.apply import ApplyOptions, ProgressFn, apply_plan
from tansaku.ingest.plan import IngestPlan, dedupe, plan_ingest
from tansaku.ingest.report import AuditRow, Failure, IngestReport, write_audit
from tansaku.records import Record
from tansaku.store.base import Filter, StoredInfo
from tansaku.workspace import validate_name

if TYPE_CHECKING:  # the loaders are imported when files are loaded
    from tansaku.ingest.loaders.settings import IngestLimits

DOC_CHUNK = 1_000  # documents per read of what is stored


def load_sources(
    paths: Sequence[str | Path],
    collection: Collection,
    *,
    follow_symlinks: bool = False,
    progress: ProgressFn | None = None,
    limits: IngestLimits | None = None,
) -> tuple[list[Record], list[Failure]]:
    """Run every loader over ``paths`` under the workspace's ``limits``; failures are
    collected, never raised."""
    from tansaku.ingest.loaders import load_file
    from tansaku.ingest.sources import iter_source_files

    records: list[Record] = []
    failures: list[Failure] = []
    sources = list(iter_source_files([Path(p) for p in paths], follow_symlinks=follow_symlinks))
    for i, src in enumerate(sources, 1):
        result = load_file(src, collection.config, limits=limits)
        records.extend(result.records)
        failures.extend(Failure(e.path, e.reason) for e in result.errors)
        if progress is not None:
            progress("load", i, len(sources))
    return records, failures


def stored_for(
    collection: Collection,
    tenant: str,
    recs: Sequence[Record],
    *,
    everything: bool,
    meta: bool,
) -> dict[str, StoredInfo]:
    """What is stored of the tenant's records, by record id: every record (``everything``),
    or those of the documents of ``recs`` plus any incoming record id stored under another
    document. Reads ``DOC_CHUNK`` documents a call, so an ingest into a large collection costs
    what it brings, not what is already there."""
    if collection.handles is None:  # nothing stored yet (a dry run of a new collection)
        return {}
    store = collection.store
    if everything:
        return {i.record.id: i for i in store.scan(tenant, with_meta=meta)}
    out: dict[str, StoredInfo] = {}

    def read(doc_ids: Iterable[str]) -> None:
        ordered = sorted(doc_ids)
        for i in range(0, len(ordered), DOC_CHUNK):
            flt = Filter(doc_ids=tuple(ordered[i : i + DOC_CHUNK]))
            out.update((s.record.id, s) for s in store.scan(tenant, flt, with_meta=meta))

    docs = {r.doc_id for r in recs}
    read(docs)
    missing = [r.id for r in recs if r.id not in out]
    moved: set[str] = set()
    for i in range(0, len(missing), DOC_CHUNK):  # a record id that changed documents
        moved.update(r.doc_id for r in store.get(tenant, missing[i : i + DOC_CHUNK]))
    read(moved - docs)
    return out


def plan_records(
    collection: Collection,
    records: Iterable[Record],
    *,
    tenant: str,
    sync_roots: Sequence[Path] | None = None,
    sync_all: bool = False,
) -> IngestPlan:
    """The plan of an ingest of ``records`` into the tenant's part of ``collection``."""
    recs, skipped = dedupe(records)
    stored = stored_for(
        collection,
        tenant,
        recs,
        # without a sync, only the documents of this run can change: read just those
        everything=bool(sync_all or sync_roots),
        # metadata (the source path) is only needed to find documents gone from sync roots
        meta=bool(sync_roots),
    )
    return plan_ingest(
        recs, stored, tenant=tenant, skipped=skipped, sync_roots=sync_roots, sync_all=sync_all
    )


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
    """Bring the tenant's part of ``collection`` (a writer's, see
    ``tansaku.backends.embedded.writer``) in line
    with ``records``: plan (:func:`plan_records`), then let the collection apply the plan.
    ``checkpoint`` (publishing what is written so far) is called between batches every
    ``checkpoint_every`` seconds (default ``$TANSAKU_CHECKPOINT_S`` or 60).

    ``sync_roots``: delete stored documents whose ``metadata.source`` lies under one of these
    folders/files but produced no record this run. ``sync_all``: delete every stored document of
    the tenant that produced no record (the collection mirrors ``records`` exactly).
    """
    plan = plan_records(
        collection, records, tenant=tenant, sync_roots=sync_roots, sync_all=sync_all
    )
    if dry_run:
        return plan.report(failed=failures, dry_run=True)
    options = ApplyOptions(
        embedder=embedder,
        progress=progress,
        checkpoint=checkpoint,
        checkpoint_every=checkpoint_every,
    )
    return plan.report(failed=failures, embedded=apply_plan(collection, plan, options))


__all__ = [
    "AuditRow",
    "Failure",
    "IngestPlan",
    "IngestReport",
    "LoadError",
    "ProgressFn",
    "ingest_records",
    "load_sources",
    "plan_records",
    "write_audit",
]


def collection_config(
    collection: str, config: CollectionConfig | str | Path | None, team: str
) -> CollectionConfig | None:
    """The config an ingest of ``team``'s records into ``collection`` writes with (both names
    checked): a TOML path loaded, a config renamed to the collection; ``None``: the
    collection's own (or the default)."""
    validate_name(team, "チーム名")
    validate_name(collection)
    if isinstance(config, str | Path):
        config = load_config(config, name=collection)
    return config.with_name(collection) if config is not None else None


def sync_roots_of(paths: Sequence[str | Path]) -> list[Path]:
    """The given files and folders that exist: what a ``sync`` ingest mirrors."""
    return [Path(p) for p in paths if Path(p).exists()]

"""Merging collections of one workspace into another collection, records keeping their ids.

>>> merge_collections(ts, ["manuals-2024", "manuals-2025"], "manuals", team="shinjuku")

Records are read from each source as stored and written into the destination through the same
ingest plan as ``tansaku ingest`` (``tansaku.ingest.pipeline``): each keeps its id, document,
field, text and metadata; the destination's BM25 statistics move with what is written. Dense
vectors are not computed again: a source whose vectors come from the workspace's model hands
them to the embedding cache first, so the write finds them there (a source embedded by another
model is embedded anew).

A conflict is a **document** (``doc_id``) that is in the destination already, or in two
sources: a document is always taken whole, never mixed from two places.

- ``skip`` (default): the document already there is kept; the first source that has a
  document gives it.
- ``overwrite``: the document is replaced by the source's; a later source replaces an earlier
  one (its chunks the source lacks are removed, as a re-ingest of a changed document does).

The sources are left as they were. A new destination takes the first source's config.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING

import numpy as np

from tansaku.errors import CollectionNotFound, InvalidRequest
from tansaku.records import Record
from tansaku.transfer.format import BATCH, ProgressFn
from tansaku.workspace import validate_name

if TYPE_CHECKING:
    from tansaku.client import Tansaku
    from tansaku.collection import Collection
    from tansaku.config import CollectionConfig


class Conflict(StrEnum):
    """What happens to a document the destination (or an earlier source) already has."""

    SKIP = "skip"
    OVERWRITE = "overwrite"

    @classmethod
    def from_str(cls, value: str | Conflict) -> Conflict:
        try:
            return cls(value)
        except ValueError:
            valid = " / ".join(c.value for c in cls)
            raise InvalidRequest(
                f"重複の扱い「{value}」は使えません。{valid} のどれかにしてください"
                "(skip: 統合先にある文書を残す、overwrite: 統合元の文書で置き換える)"
            ) from None


@dataclass(frozen=True)
class MergeReport:
    """What a merge wrote, per the whole run (``teams``: records merged per team)."""

    into: str
    sources: tuple[str, ...]
    conflict: Conflict
    created: bool
    documents: int  # documents taken from the sources (new and replaced)
    replaced: int  # of those, documents the destination had and the source's replaced
    skipped: int  # documents left out by the conflict policy
    inserted: int
    updated: int
    unchanged: int
    deleted: int
    embedded: int  # texts that went through the model (0 when every vector was reused)
    teams: dict[str, int] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, object]:
        return {
            "into": self.into,
            "sources": list(self.sources),
            "conflict": self.conflict.value,
            "created": self.created,
            "documents": self.documents,
            "replaced": self.replaced,
            "skipped": self.skipped,
            "records": {
                "inserted": self.inserted,
                "updated": self.updated,
                "unchanged": self.unchanged,
                "deleted": self.deleted,
            },
            "embedded": self.embedded,
            "teams": self.teams,
            "warnings": self.warnings,
        }


def _names(sources: Iterable[str], into: str) -> tuple[list[str], str]:
    into = validate_name(into, "統合先のコレクション名")
    names = list(dict.fromkeys(validate_name(s, "統合元のコレクション名") for s in sources))
    if not names:
        raise InvalidRequest("統合元のコレクションを1つ以上指定してください")
    if into in names:
        raise InvalidRequest(
            f"コレクション「{into}」を自分自身に統合することはできません。統合元から外してください"
        )
    return names, into


def _documents(col: Collection, team: str, cache: VectorCache | None) -> dict[str, list[Record]]:
    """The team's records of ``col`` by document; their stored dense vectors to ``cache``."""
    docs: dict[str, list[Record]] = {}
    if col.handles is None:
        return docs
    if cache is None:
        rows = col.store.scan(team, with_text=True, with_meta=True)
        for row in rows:
            docs.setdefault(row.record.doc_id, []).append(row.record)
        return docs
    for tenant, points in col.store.dump(batch=BATCH):
        if tenant != team:
            continue
        cache.add([p.record.text for p in points], [p.dense for p in points])
        for p in points:
            docs.setdefault(p.record.doc_id, []).append(p.record)
    return docs


class VectorCache:
    """Stored passage vectors handed to the workspace's embedding cache, batch by batch."""

    def __init__(self, ts: Tansaku) -> None:
        self.embedder = ts.embedder

    def add(self, texts: Sequence[str], vectors: Sequence[np.ndarray | None]) -> None:
        pairs = [(t, v) for t, v in zip(texts, vectors, strict=True) if v is not None]
        if pairs:
            self.embedder.remember_passages([t for t, _ in pairs], [v for _, v in pairs])


def _reusable(ts: Tansaku, col: Collection) -> bool:
    """Whether ``col``'s stored vectors are the workspace model's (so they can be reused)."""
    if not col.needs_dense or not col.state.embedder:
        return False
    return col.state.embedder == ts.embedder.name


def _config_warnings(sources: dict[str, CollectionConfig], dest: CollectionConfig) -> list[str]:
    return [
        f"コレクション「{name}」の検索軸は統合先「{dest.name}」と違います。"
        "統合した記録は統合先の検索軸で検索されます"
        for name, cfg in sources.items()
        if cfg.axes != dest.axes
    ]


def _teams(cols: Iterable[Collection]) -> list[str]:
    teams: set[str] = set()
    for col in cols:
        if col.handles is not None:
            teams.update(t for t, fields in col.store.lengths().items() if fields)
    return sorted(teams)


def _present(ts: Tansaku, into: str, team: str) -> set[str]:
    """Documents the destination holds for ``team``."""
    if not ts.has_collection(into):
        return set()
    with ts.reading(into) as col:
        if col.handles is None:
            return set()
        return {row.record.doc_id for row in col.store.scan(team)}


def merge_collections(
    ts: Tansaku,
    sources: Sequence[str],
    into: str,
    *,
    team: str | None = None,
    conflict: Conflict | str = Conflict.SKIP,
    progress: ProgressFn | None = None,
) -> MergeReport:
    """Merge the records of ``sources`` into collection ``into`` (created when missing, with
    the first source's config); ``team``: that team's records only (default: every team's,
    each into its own team). ``conflict``: see :class:`Conflict`. The sources stay as they
    were; records keep their ids."""
    policy = Conflict.from_str(conflict)
    names, into = _names(sources, into)
    if team is not None:
        validate_name(team, "チーム名")
    for name in names:
        if not ts.has_collection(name):
            raise CollectionNotFound(name, ts.backend.names())
    views = {name: ts.collection(name) for name in names}
    created = not ts.has_collection(into)
    dest_config = views[names[0]].config.with_name(into) if created else ts.collection(into).config
    warnings = _config_warnings({n: v.config for n, v in views.items()}, dest_config)
    teams = [team] if team is not None else _teams(views.values())
    if created:
        ts.create_collection(dest_config)
    totals = dict.fromkeys(("documents", "replaced", "skipped"), 0)
    counts = dict.fromkeys(("inserted", "updated", "unchanged", "deleted", "embedded"), 0)
    merged: dict[str, int] = {}
    for t in teams:
        present = _present(ts, into, t)
        chosen: dict[str, list[Record]] = {}
        for name in names:
            col = views[name]
            cache = VectorCache(ts) if _reusable(ts, col) else None
            for doc, recs in _documents(col, t, cache).items():
                if doc in chosen or doc in present:
                    if policy is Conflict.SKIP:
                        totals["skipped"] += 1
                        continue
                    if doc in chosen:
                        totals["skipped"] += 1  # the earlier source's copy gives way
                chosen[doc] = recs
        if not chosen:
            continue
        totals["documents"] += len(chosen)
        totals["replaced"] += len(present & chosen.keys())
        records = [r for recs in chosen.values() for r in recs]
        report = ts.ingest_records(records, collection=into, team=t, progress=progress)
        for key in counts:
            counts[key] += int(getattr(report, key))
        merged[t] = len(records)
    return MergeReport(
        into=into,
        sources=tuple(names),
        conflict=policy,
        created=created,
        teams=merged,
        warnings=warnings,
        **totals,
        **counts,
    )


__all__ = ["Conflict", "MergeReport", "merge_collections"]

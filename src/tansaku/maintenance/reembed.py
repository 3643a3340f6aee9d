"""Move a collection to another embedding model (``tansaku reembed``).

A collection refuses vectors of a model other than the one its state records
(``tansaku.collection.guard``). To change models, every record is embedded again with the
workspace's configured embedder and written in one writer: the new dense vectors, with the
sparse vectors, payloads and sentence units unchanged, go into a working generation, and the
state's model and dimension change with the commit. Until then readers keep the old model's
view — searches with the old configuration keep working during the run — and a run killed at
any point leaves the old collection as it was (its working generation is removed by the next
writer). The embedding cache keeps every batch embedded before the kill: running it again
embeds nothing twice.

It works through the storage protocols (``RecordStore.dump`` and ``upsert``), on any backend.
A new dimension needs a new dense vector space: the embedded backend starts the working
generation's record shard afresh (configured for the new dimension) and writes every record
into it; a backend that cannot rebuild its vector space refuses a change of dimension.
"""

from __future__ import annotations

import logging
import shutil
from collections.abc import Callable
from dataclasses import asdict, dataclass, replace
from typing import TYPE_CHECKING, Any

from tansaku.backends.embedded.handles import GenHandles
from tansaku.backends.locks import WaitFn
from tansaku.collection import Collection
from tansaku.errors import CollectionNotFound, ConfigError
from tansaku.faults import crashpoint

if TYPE_CHECKING:
    from tansaku.client import Tansaku

log = logging.getLogger(__name__)

BATCH = 256
ProgressFn = Callable[[int, int], None]  # (records done, records in all)


@dataclass(frozen=True)
class ReembedPlan:
    """What :func:`reembed` would do: the collection's model and the configured one."""

    collection: str
    old_model: str
    old_dim: int
    new_model: str
    new_dim: int
    records: int
    has_dense: bool  # the collection has a dense axis (else there is nothing to embed)

    @property
    def needed(self) -> bool:
        """Whether the collection's vectors are of another model (or of none recorded)."""
        return self.has_dense and (self.old_model, self.old_dim) != (self.new_model, self.new_dim)

    @property
    def rebuild(self) -> bool:
        """Whether the dense vector space changes dimension (rebuilt from scratch)."""
        return bool(self.old_dim) and self.old_dim != self.new_dim

    def to_dict(self) -> dict[str, Any]:
        return asdict(self) | {"needed": self.needed, "rebuild": self.rebuild}


@dataclass(frozen=True)
class ReembedReport:
    """What :func:`reembed` did. ``written``: records written; ``embedded``: texts the model
    embedded (the others came from the cache); ``changed``: ``False`` when nothing was
    needed (and nothing written)."""

    plan: ReembedPlan
    written: int
    embedded: int
    teams: tuple[str, ...]
    changed: bool

    def to_dict(self) -> dict[str, Any]:
        return self.plan.to_dict() | {
            "written": self.written,
            "embedded": self.embedded,
            "teams": list(self.teams),
            "changed": self.changed,
        }


def _plan(col: Collection, new_model: str, new_dim: int) -> ReembedPlan:
    records = col.store.total() if col.handles is not None else 0
    return ReembedPlan(
        collection=col.name,
        old_model=col.state.embedder,
        old_dim=col.state.dim,
        new_model=new_model,
        new_dim=new_dim,
        records=records,
        has_dense=col.needs_dense,
    )


def plan_reembed(ts: Tansaku, name: str) -> ReembedPlan:
    """The collection's model against the workspace's configured one (``ts.embedder``: learning
    a remote model's dimension costs one request). Raises ``CollectionNotFound``."""
    embedder = ts.embedder
    return _plan(ts.collection(name), embedder.name, embedder.dim)


def _can_rebuild(col: Collection, dim: int) -> None:
    """Refuse a new dimension where the storage cannot start its dense vector space afresh
    (only the embedded backend's generations can), before anything is written."""
    if not isinstance(col.handles, GenHandles):
        raise ConfigError(
            f"このバックエンドではコレクション「{col.name}」の埋め込みの次元を変えられません"
            f"({col.state.dim}次元 → {dim}次元)。同じ次元のモデルを設定するか、"
            "新しいコレクションに取り込み直してください"
        )


def _fresh_dense_space(col: Collection, dim: int) -> None:
    """Replace the writer's record store by an empty one whose dense vectors have ``dim``
    dimensions (the embedded backend: a new record shard in the working generation)."""
    h = col.handles
    assert isinstance(h, GenHandles) and h.writable
    h.close()
    shutil.rmtree(h.gen / "shard", ignore_errors=True)
    col.handles = GenHandles(h.gen, dim=dim, writable=True)


def reembed(
    ts: Tansaku,
    name: str,
    *,
    force: bool = False,
    progress: ProgressFn | None = None,
    on_wait: WaitFn | None = None,
    batch: int = BATCH,
) -> ReembedReport:
    """Embed every record of collection ``name`` again with ``ts.embedder`` (the workspace's
    configured model) and commit the new vectors with the state's new model and dimension in
    one generation. Nothing is done when the collection already uses the model (``force``:
    embed again all the same) or has no dense axis. ``progress(done, total)`` is told after
    each batch of records."""
    if not ts.has_collection(name):
        raise CollectionNotFound(name, ts.backend.names())
    embedder = ts.embedder
    new_model, new_dim = embedder.name, embedder.dim
    before = embedder.embedded
    with ts.writing(name, on_wait=on_wait, lazy=True) as col:
        # the commit the writer works from (the old model's view), let go before the commit
        # so that the writer's clean-up can remove its generation
        source = ts.backend.open_view(name)
        plan = _plan(source, new_model, new_dim)
        if not plan.has_dense or not (plan.needed or force):
            return ReembedReport(plan, 0, 0, (), changed=False)
        log.info(
            "re-embedding collection %s: %s (%d) -> %s (%d), %d records",
            name,
            plan.old_model or "-",
            plan.old_dim,
            new_model,
            new_dim,
            plan.records,
        )
        if plan.rebuild:
            _can_rebuild(col, new_dim)
        col.begin_write()
        if plan.rebuild:
            _fresh_dense_space(col, new_dim)
        dense_fields = col.dense_fields()
        done, written = 0, 0
        teams: set[str] = set()
        if progress is not None:
            progress(0, plan.records)
        points_of = source.store.dump(batch=batch) if source.handles is not None else iter(())
        for tenant, points in points_of:
            teams.add(tenant)
            want = [
                i
                for i, p in enumerate(points)
                if dense_fields is None or p.record.field in dense_fields
            ]
            vectors = embedder.embed_passages([points[i].record.text for i in want])
            fresh = {i: vectors[j] for j, i in enumerate(want)}
            out = [
                replace(p, dense=fresh[i]) if i in fresh else p
                for i, p in enumerate(points)
                if i in fresh or plan.rebuild  # a copied store keeps the others as they are
            ]
            col.store.upsert(tenant, out)
            written += len(out)
            done += len(points)
            crashpoint("reembed")
            if progress is not None:
                progress(done, plan.records)
        del source, points_of
        with col.lock:
            col.state.embedder, col.state.dim = new_model, new_dim
        if col.store.needs_index(written):
            col.store.optimize()
        return ReembedReport(
            plan, written, embedder.embedded - before, tuple(sorted(teams)), changed=True
        )

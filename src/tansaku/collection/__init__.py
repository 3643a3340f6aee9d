"""A collection: its config, the storage its backend hands it and the statistics it owns.

``Collection`` never builds a store: a backend (``tansaku.backends``) opens the collection's
:class:`~tansaku.store.protocols.CollectionStorage` — the embedded one, a generation's shards —
and hands it over. The collection owns what is derived from its records: the BM25 length
statistics per team and field (:class:`CollectionState`, saved with every commit,
:mod:`tansaku.collection.stats`) and the embedding model its vectors came from
(:mod:`tansaku.collection.guard`). An ingest plan is carried out by
:func:`tansaku.ingest.apply.apply_plan`.
"""

from __future__ import annotations

import threading
import tomllib
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from tansaku.collection.stats import STATE, STATE_VERSION, CollectionState, FieldStats
from tansaku.config import AxisMode, CollectionConfig, config_from_dict
from tansaku.errors import CollectionNotFound, ConfigError, StorageError
from tansaku.files import atomic_write, dump_toml
from tansaku.records import Record
from tansaku.store.base import Filter
from tansaku.store.protocols import CollectionStorage, RecordStore, UnitIndex

REWEIGHT_DRIFT = 0.2  # re-encode a field's BM25 vectors when its average length moved by > 20%


class Collection:
    """Config, state and storage of one collection (embedded: bound to one generation).

    Readers get a read-only view of the committed generation (``tansaku.backends.embedded.views``);
    a writer gets a writable working generation from
    :func:`tansaku.backends.embedded.writer.writing` and commits it."""

    def __init__(
        self,
        path: Path,
        config: CollectionConfig,
        state: CollectionState,
        handles: CollectionStorage | None = None,
    ) -> None:
        self.path = path
        self.config = config
        self.state = state
        self.handles = handles
        self.lock = threading.RLock()
        # a lazy writer reads the committed generation until its first write (see begin_write)
        self.start_writing: Callable[[], CollectionStorage] | None = None
        self._parent: Collection | None = None  # the view a derived view keeps alive

    @property
    def name(self) -> str:
        return self.config.name

    @property
    def gen(self) -> Path | None:
        """The generation folder this view reads (or writes); ``None`` before the first (and
        for a backend without generations)."""
        gen = getattr(self.handles, "gen", None)
        return gen if isinstance(gen, Path) else None

    @property
    def versions(self) -> dict[str, str]:
        """``index_version`` (the generation read, ``g000012``) and ``embedding_version`` (the
        embedder its vectors came from), the ones known: what a search event records."""
        gen = self.gen
        pairs = (
            ("index_version", gen.name if gen is not None else ""),
            ("embedding_version", str(self.state.embedder or "")),
        )
        return {k: v for k, v in pairs if v}

    @property
    def writable(self) -> bool:
        return self.handles is not None and self.handles.writable

    def begin_write(self) -> None:
        """Before a lazy writer's first change: switch from the committed generation to a
        working copy of it (a writer that finds nothing to change never copies anything)."""
        with self.lock:
            if self.writable:
                return
            if self.start_writing is None:
                raise StorageError("読み取り専用のコレクションには書き込めません")
            self.handles = self.start_writing()

    def _handles(self) -> CollectionStorage:
        if self.handles is None:
            raise StorageError(
                f"コレクション「{self.name}」にはまだデータがありません"
                "(`tansaku ingest` で取り込んでください)"
            )
        return self.handles

    @contextmanager
    def in_use(self) -> Iterator[Collection]:
        """The collection, its storage held open for the block (a search)."""
        if self.handles is None:
            yield self
            return
        with self.handles.in_use():
            yield self

    @property
    def store(self) -> RecordStore:
        return self._handles().store()

    @property
    def units(self) -> UnitIndex:
        """The sentence units of ``bigram`` axes (a second shard, created on first write)."""
        h = self._handles()
        units = h.units()
        if h.units_created:  # nothing built (or the folder was removed): rebuild
            h.units_created = False
            self.state.units.clear()
        return units

    def has_units(self, tenant: str) -> bool:
        """Whether the tenant's sentence units are complete (a writer opens the unit shard
        first: a shard created anew has nothing, whatever the state said)."""
        h = self._handles()
        if not h.writable:
            return tenant in self.state.units and h.has_unit_index()
        _ = self.units
        return tenant in self.state.units

    # -- reading records (what a front end shows; a collection never written has none) ----
    def count(self, tenant: str) -> int:
        """The tenant's records."""
        return self.store.count(tenant) if self.handles is not None else 0

    def is_empty(self) -> bool:
        """Whether no team has any record here."""
        return self.handles is None or self.store.total() == 0

    def record_ids(self, tenant: str) -> list[str]:
        """The ids of the tenant's records, sorted."""
        return sorted(self.store.hashes(tenant)) if self.handles is not None else []

    def records(self, tenant: str, ids: Sequence[str]) -> list[Record]:
        """The tenant's records of ``ids`` (those that exist)."""
        return self.store.get(tenant, ids) if self.handles is not None and ids else []

    def document(self, tenant: str, doc_id: str, limit: int) -> list[Record]:
        """The tenant's records of one document, in id order, at most ``limit``."""
        if self.handles is None:
            return []
        ids = sorted(self.store.hashes(tenant, Filter(doc_ids=(doc_id,))))[:limit]
        return [r for r in self.store.get(tenant, ids) if r.doc_id == doc_id]

    def has_records(self, tenant: str) -> bool:
        """Whether the tenant has any record here (from the statistics, no scan)."""
        fields = self.state.bm25.get(tenant) or {}
        return any(st.count > 0 for st in fields.values())

    @property
    def needs_units(self) -> bool:
        return any(a.mode is AxisMode.BIGRAM for a in self.config.axes)

    @property
    def needs_dense(self) -> bool:
        return any(a.mode is AxisMode.DENSE for a in self.config.axes)

    def dense_fields(self) -> set[str] | None:
        """Fields that need a dense vector; ``None`` means every field."""
        fields: set[str] = set()
        for axis in self.config.axes:
            if axis.mode is AxisMode.DENSE:
                if not axis.fields:
                    return None
                fields.update(axis.fields)
        return fields

    def drop_tenant(self, tenant: str) -> None:
        """Remove every record, unit and statistic of the team (a writer's collection)."""
        self.begin_write()
        h = self._handles()
        h.store().delete_tenant(tenant)
        if h.has_unit_index():
            h.units().delete_tenant(tenant)
        with self.lock:
            self.state.drop(tenant)

    def save_state(self) -> None:
        """Write the state into the working generation (a writer's; committed with it)."""
        h = self._handles()
        gen = self.gen
        if not h.writable or gen is None:
            raise StorageError("読み取り専用のコレクションには書き込めません")
        atomic_write(gen / STATE, self.state.to_json())

    def save_config(self) -> None:
        atomic_write(self.path / "config.toml", dump_toml(self.config.to_dict()))

    def close(self) -> None:
        """Close a writer's handles (a reader's belong to the process registry)."""
        if self.handles is not None and self.handles.writable:
            self.handles.close()

    def with_config(self, config: CollectionConfig) -> Collection:
        """A read-only view of the same data under another config (what a dry run with a new
        config sees); it keeps this view, and the generation it reads, alive."""
        view = Collection(self.path, config, self.state, self.handles)
        view._parent = self
        return view

    def update_config(self, config: CollectionConfig) -> None:
        """Replace the search/ingest config (saved when the writer commits)."""
        self.config = config


def read_config(path: Path, name: str) -> CollectionConfig:
    cfg_path = path / "config.toml"
    try:
        text = cfg_path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise CollectionNotFound(name) from None
    try:
        return config_from_dict(tomllib.loads(text), name=name)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{cfg_path} の TOML が不正です: {exc}") from None


def read_state(gen: Path | None) -> CollectionState:
    if gen is None:
        return CollectionState()
    try:
        return CollectionState.from_json((gen / STATE).read_text(encoding="utf-8"))
    except FileNotFoundError:
        return CollectionState()
    except ValueError as exc:
        raise StorageError(f"{gen / STATE} を読めません: {exc}") from None


__all__ = [
    "STATE_VERSION",
    "Collection",
    "CollectionState",
    "FieldStats",
    "atomic_write",
    "read_config",
    "read_state",
]

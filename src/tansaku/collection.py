"""A collection on disk: its config, its engine handles and its BM25 length statistics."""

from __future__ import annotations

import json
import os
import tempfile
import threading
import tomllib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tansaku.config import AxisMode, CollectionConfig, config_from_dict
from tansaku.errors import CollectionNotFound, ConfigError, StorageError
from tansaku.generations import STATE
from tansaku.handles import GenHandles
from tansaku.store.edge import EdgeStore
from tansaku.store.units import UnitStore

STATE_VERSION = 1
REWEIGHT_DRIFT = 0.2  # re-encode a field's BM25 vectors when its average length moved by > 20%


def atomic_write(path: Path, text: str) -> None:
    """Write via a temp file and rename: a crash never leaves a half-written file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _toml_value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int | float):
        return repr(v)
    if isinstance(v, str):
        return json.dumps(v, ensure_ascii=False)
    if isinstance(v, list | tuple):
        return "[" + ", ".join(_toml_value(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{ " + ", ".join(f"{_toml_key(k)} = {_toml_value(x)}" for k, x in v.items()) + " }"
    raise ConfigError(f"設定値を TOML に書けません: {v!r}")


def _toml_key(k: str) -> str:
    return k if k.replace("_", "").replace("-", "").isalnum() and k.isascii() else json.dumps(k)


def dump_toml(data: dict[str, Any]) -> str:
    """A small TOML writer for config dicts (scalars, lists, inline tables, nested tables)."""
    lines: list[str] = []
    tables: list[tuple[str, dict[str, Any]]] = []
    arrays: list[tuple[str, list[dict[str, Any]]]] = []
    for k, v in data.items():
        if isinstance(v, dict):
            tables.append((k, v))
        elif isinstance(v, list) and v and all(isinstance(x, dict) for x in v):
            arrays.append((k, v))
        else:
            lines.append(f"{_toml_key(k)} = {_toml_value(v)}")

    def emit_table(prefix: str, table: dict[str, Any]) -> None:
        scalars = {k: v for k, v in table.items() if not isinstance(v, dict)}
        subs = {k: v for k, v in table.items() if isinstance(v, dict)}
        lines.append("")
        lines.append(f"[{prefix}]")
        for k, v in scalars.items():
            lines.append(f"{_toml_key(k)} = {_toml_value(v)}")
        for k, v in subs.items():
            emit_table(f"{prefix}.{_toml_key(k)}", v)

    for k, items in arrays:
        for item in items:
            lines.append("")
            lines.append(f"[[{_toml_key(k)}]]")
            for ik, iv in item.items():
                lines.append(f"{_toml_key(ik)} = {_toml_value(iv)}")
    for k, v in tables:
        emit_table(_toml_key(k), v)
    return "\n".join(lines).lstrip("\n") + "\n"


@dataclass
class FieldStats:
    total_len: int = 0
    count: int = 0
    avgdl_written: float = 0.0

    @property
    def avgdl(self) -> float:
        return self.total_len / self.count if self.count else 0.0


@dataclass
class CollectionState:
    """Persisted per collection: BM25 length statistics per (tenant, field), and the tenants
    whose sentence units (``bigram`` axes) are complete."""

    embedder: str = ""
    dim: int = 0
    bm25: dict[str, dict[str, FieldStats]] = field(default_factory=dict)
    units: set[str] = field(default_factory=set)

    def stats(self, tenant: str, field_name: str) -> FieldStats:
        return self.bm25.setdefault(tenant, {}).setdefault(field_name, FieldStats())

    def to_json(self) -> str:
        return json.dumps(
            {
                "version": STATE_VERSION,
                "embedder": self.embedder,
                "dim": self.dim,
                "bm25": {
                    t: {f: vars(s) for f, s in fields.items()} for t, fields in self.bm25.items()
                },
                "units": sorted(self.units),
            },
            ensure_ascii=False,
            indent=1,
        )

    @classmethod
    def from_json(cls, text: str) -> CollectionState:
        data = json.loads(text)
        return cls(
            embedder=data.get("embedder", ""),
            dim=int(data.get("dim", 0)),
            bm25={
                t: {f: FieldStats(**s) for f, s in fields.items()}
                for t, fields in data.get("bm25", {}).items()
            },
            units=set(data.get("units", ())),
        )


class Collection:
    """Config, state and engine handles of one collection, bound to one generation folder.

    Readers get a read-only view of the committed generation (:func:`open_view`); a writer
    gets a writable working generation from :func:`tansaku.writer.writing` and commits it."""

    def __init__(
        self,
        path: Path,
        config: CollectionConfig,
        state: CollectionState,
        handles: GenHandles | None = None,
    ) -> None:
        self.path = path
        self.config = config
        self.state = state
        self.handles = handles
        self.lock = threading.RLock()
        # a lazy writer reads the committed generation until its first write (see begin_write)
        self.start_writing: Callable[[], GenHandles] | None = None

    @property
    def name(self) -> str:
        return self.config.name

    @property
    def gen(self) -> Path | None:
        """The generation folder this view reads (or writes); ``None`` before the first."""
        return self.handles.gen if self.handles is not None else None

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

    def _handles(self) -> GenHandles:
        if self.handles is None:
            raise StorageError(
                f"コレクション「{self.name}」にはまだデータがありません"
                "(`tansaku ingest` で取り込んでください)"
            )
        return self.handles

    @property
    def store(self) -> EdgeStore:
        return self._handles().store()

    @property
    def units(self) -> UnitStore:
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
            return tenant in self.state.units and h.has_unit_shard()
        _ = self.units
        return tenant in self.state.units

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

    def save_state(self) -> None:
        """Write the state into the working generation (a writer's; committed with it)."""
        h = self._handles()
        if not h.writable:
            raise StorageError("読み取り専用のコレクションには書き込めません")
        atomic_write(h.gen / STATE, self.state.to_json())

    def save_config(self) -> None:
        atomic_write(self.path / "config.toml", dump_toml(self.config.to_dict()))

    def close(self) -> None:
        """Close a writer's handles (a reader's belong to the process registry)."""
        if self.handles is not None and self.handles.writable:
            self.handles.close()

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


AnalyzeFn = Callable[[str], list[str]]

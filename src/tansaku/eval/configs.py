"""Configurations to compare: search overrides read from TOML, plus the default three.

A config file is a collection-config fragment with a ``name`` (see docs/eval.md)::

    name = "rrf-k60"
    [fusion]
    method = "rrf"
    k = 60

``[[axes]]``, ``[fusion]``, ``[search]`` (``candidates``, ``min_score``, ``group_by_doc``) and
``[query] functional_weight`` are applied per request. ``[bm25]``, ``[analyzer]`` and
``[chunking]`` change the index: the runner builds a separate scratch collection for them (BEIR
datasets and judgement files with ``source``).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tansaku.config import (
    Axis,
    AxisMode,
    CollectionConfig,
    FusionConfig,
    config_from_dict,
    read_toml,
)
from tansaku.errors import ConfigError

SEARCH_KEYS = frozenset({"candidates", "min_score", "group_by_doc"})
QUERY_KEYS = frozenset({"functional_weight"})  # the [query] settings a request can override
INDEX_KEYS = frozenset({"bm25", "analyzer", "chunking"})
ALLOWED_KEYS = frozenset({"name", "description", "axes", "fusion", "search", "query"}) | INDEX_KEYS


@dataclass(frozen=True, kw_only=True)
class EvalConfig:
    """One configuration under test; ``None`` means "as the collection is configured"."""

    name: str
    axes: tuple[Axis, ...] | None = None
    fusion: FusionConfig | None = None
    candidates: int | None = None
    min_score: float | None = None
    group_by_doc: bool | None = None
    functional_weight: float | None = None
    index: Mapping[str, Any] = field(default_factory=dict)  # raw [bm25]/[analyzer]/[chunking]
    path: Path | None = None

    def __post_init__(self) -> None:
        if not self.name.strip():
            raise ConfigError("評価設定には name が必要です")

    def request_options(self) -> dict[str, Any]:
        """Keyword arguments for :meth:`tansaku.Tansaku.search` (only what is overridden)."""
        opts: dict[str, Any] = {}
        for key in (
            "axes",
            "fusion",
            "candidates",
            "min_score",
            "group_by_doc",
            "functional_weight",
        ):
            value = getattr(self, key)
            if value is not None:
                opts[key] = value
        return opts

    def index_key(self) -> str:
        """A short stable hash of the index settings ('' when there are none)."""
        if not self.index:
            return ""
        raw = json.dumps(self.index, sort_keys=True, ensure_ascii=False)
        return hashlib.sha256(raw.encode("utf-8")).hexdigest()[:8]

    def apply_index(self, base: CollectionConfig) -> CollectionConfig:
        """``base`` with this config's [bm25]/[analyzer]/[chunking] settings."""
        if not self.index:
            return base
        data = base.to_dict()
        for key, table in self.index.items():
            data[key] = {**data.get(key, {}), **table}
        return config_from_dict(data, name=base.name)


def _table(
    data: Mapping[str, Any], key: str, allowed: frozenset[str], where: str, note: str = ""
) -> Mapping[str, Any]:
    """Table ``key`` of ``data`` (empty when absent), holding only keys an evaluation varies."""
    table = data.get(key, {})
    if not isinstance(table, Mapping):
        raise ConfigError(f"{where}[{key}] はテーブルにしてください")
    bad = set(table) - allowed
    if bad:
        raise ConfigError(
            f"{where}[{key}] のうち評価で変えられるのは {sorted(allowed)} です{note}: {sorted(bad)}"
        )
    return table


def eval_config_from_dict(data: Mapping[str, Any], *, path: Path | None = None) -> EvalConfig:
    """Validate a config fragment with :func:`tansaku.config.config_from_dict` and keep the
    keys it sets. Keys that cannot be compared per query (``[ingest]``, ``[query]`` other than
    ``functional_weight``…) are an error."""
    where = f"{path}: " if path else ""
    unknown = set(data) - ALLOWED_KEYS
    if unknown:
        raise ConfigError(
            f"{where}評価設定に使えないキーがあります: {sorted(unknown)}。"
            f"使えるキー: {sorted(ALLOWED_KEYS)}"
        )
    name = data.get("name") or (path.stem if path else "")
    if not isinstance(name, str) or not name.strip():
        raise ConfigError(f"{where}評価設定には name が必要です")
    search = _table(data, "search", SEARCH_KEYS, where, "(top_k は評価が 100 に固定します)")
    query = _table(data, "query", QUERY_KEYS, where)
    cfg = config_from_dict(data, name=name)  # validates axes, fusion, numbers
    return EvalConfig(
        name=name,
        axes=cfg.axes if "axes" in data else None,
        fusion=cfg.fusion if "fusion" in data else None,
        candidates=cfg.candidates if "candidates" in search else None,
        min_score=cfg.min_score if "min_score" in search else None,
        group_by_doc=cfg.group_by_doc if "group_by_doc" in search else None,
        functional_weight=(cfg.query.functional_weight if "functional_weight" in query else None),
        index={k: dict(data[k]) for k in sorted(INDEX_KEYS) if k in data},
        path=path,
    )


def load_eval_config(path: str | Path) -> EvalConfig:
    """Read one config file (TOML)."""
    p = Path(path)
    return eval_config_from_dict(read_toml(p, "評価設定ファイル"), path=p)


def default_configs(config: CollectionConfig) -> list[EvalConfig]:
    """``default`` (the collection as configured) and its legs ``bm25``, ``dense`` and
    ``bigram`` (the collection's axes of that mode alone); a leg the collection does not have
    is left out."""
    out = [EvalConfig(name="default")]
    for mode in (AxisMode.BM25, AxisMode.DENSE, AxisMode.BIGRAM):
        axes = tuple(a for a in config.axes if a.mode is mode)
        if axes and len(axes) < len(config.axes):
            out.append(EvalConfig(name=mode.value, axes=axes))
    return out


__all__ = [
    "EvalConfig",
    "default_configs",
    "eval_config_from_dict",
    "load_eval_config",
]

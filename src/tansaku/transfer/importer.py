"""Reading an export file into a collection, without embedding anything.

The file is checked whole first (every member's size and sha256, the manifest's format
version, the statistics against the records per team, the embedding dimension against the
workspace's model): a damaged, truncated or too new file writes nothing. Then one writer
(``Tansaku.writing`` / ``Backend.writing``) upserts the points as they were stored, rebuilds
the sentence units from the records' text (no embedding: units are bigrams), restores the
statistics and checks them against what the store counts (``RecordStore.lengths``) before it
commits. Through the public storage protocols only: any backend on either side.

A failure while writing: the embedded backend commits nothing (the working generation is
discarded; a replaced collection stays as it was); a new collection on a server backend is
removed again. A server has no rollback, so a ``replace`` that fails half-way on a server
leaves the collection repaired but partial (its writer recounts the statistics): import again.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from tansaku.collection import Collection
from tansaku.collection.stats import STATE_VERSION, CollectionState, FieldStats
from tansaku.config import AxisMode, CollectionConfig
from tansaku.errors import TansakuError
from tansaku.transfer.archive import Archive
from tansaku.transfer.format import (
    BATCH,
    FileReport,
    Manifest,
    ProgressFn,
    TransferError,
    counted_lengths,
)
from tansaku.workspace import validate_name

if TYPE_CHECKING:
    from tansaku.client import Tansaku

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class ImportReport(FileReport):
    collection: str
    source: Path
    records: int
    teams: dict[str, int]
    units: int  # sentence units rebuilt
    replaced: bool
    model: str
    dim: int
    warnings: list[str] = field(default_factory=list)


def import_collection(
    ts: Tansaku,
    src: Path,
    *,
    name: str | None = None,
    replace: bool = False,
    progress: ProgressFn | None = None,
) -> ImportReport:
    """Import the export file ``src`` into ``ts`` as collection ``name`` (default: the
    exported collection's name). An existing collection is refused unless ``replace``."""
    src = Path(src)
    with Archive(src) as archive:
        m = archive.manifest
        target = validate_name(name or m.collection)
        config = archive.config(target)
        state = archive.state()
        _check_state(m, state)
        existed = ts.has_collection(target)
        if existed and not replace:
            raise TransferError(
                f"コレクション「{target}」は既にあります。置き換えるには --replace を、"
                "別の名前で取り込むには --as 名前 を指定してください"
            )
        warnings = _check_embedder(ts, m, config)
        if existed:
            _check_replaceable(ts, target, m, config)
        archive.verify(
            None if progress is None else lambda done, total: progress("verify", done, total)
        )
        try:
            units = _write(ts, archive, target, config, state, existed=existed, progress=progress)
        except BaseException:
            if not existed:
                _remove_partial(ts, target)
            raise
    return ImportReport(
        collection=target,
        source=src,
        records=m.records,
        teams=dict(sorted(m.teams.items())),
        units=units,
        replaced=existed,
        model=m.model,
        dim=m.dim,
        warnings=warnings,
    )


def _has_dense(config: CollectionConfig) -> bool:
    return any(a.mode is AxisMode.DENSE for a in config.axes)


def _check_state(m: Manifest, state: CollectionState) -> None:
    per_team = {t: sum(n for _, n in f.values()) for t, f in counted_lengths(state).items()}
    if per_team != {t: n for t, n in m.teams.items() if n}:
        raise TransferError(
            "state.json の統計と manifest.json の件数が一致しません"
            "(ファイルが壊れています)。何も取り込んでいません"
        )


def _check_embedder(ts: Tansaku, m: Manifest, config: CollectionConfig) -> list[str]:
    """Refuse vectors of another dimension than the workspace's model makes (its query
    vectors could not be compared with them); warn about another model of the same
    dimension (searches are refused until ``tansaku reembed``). The same model's name is
    enough: a remote model is not asked anything."""
    if not m.model or not _has_dense(config):
        return []
    emb = ts.embedder
    if emb.name == m.model:
        return []
    dim = emb.dim
    if m.dim and dim != m.dim:
        raise TransferError(
            f"ファイルのベクトルは埋め込みモデル「{m.model}」({m.dim}次元)のものですが、"
            f"このワークスペースの埋め込みモデル「{emb.name}」は{dim}次元です。"
            f"埋め込みの設定([embedder] / TANSAKU_EMBED*)をモデル「{m.model}」に合わせてから"
            "取り込んでください。何も取り込んでいません"
        )
    return [
        f"ファイルのベクトルはモデル「{m.model}」のもので、このワークスペースのモデル"
        f"「{emb.name}」とは違います。検索の前に設定をそのモデルに合わせるか、"
        f"`tansaku reembed {m.collection}` で埋め込み直してください"
    ]


def _check_replaceable(ts: Tansaku, target: str, m: Manifest, config: CollectionConfig) -> None:
    try:
        old = ts.collection(target).state
    except TansakuError:
        return
    if _has_dense(config) and m.dim and old.dim and old.dim != m.dim:
        raise TransferError(
            f"既存のコレクション「{target}」は{old.dim}次元のベクトルで作られているため、"
            f"{m.dim}次元のファイルでは置き換えられません。"
            f"`tansaku collections delete {target}` で削除してから取り込んでください"
        )


def _writer(
    ts: Tansaku, target: str, config: CollectionConfig, m: Manifest, *, existed: bool
) -> AbstractContextManager[Collection]:
    """A new collection records the file's model (the workspace's embedder is not asked);
    an existing one is replaced through the client's writer."""
    if existed:
        return ts.writing(target, config=config)
    ts.workspace.ensure()
    embedder = (m.model, m.dim) if m.model else None
    return ts.backend.writing(target, config=config, embedder=embedder)


def _write(
    ts: Tansaku,
    archive: Archive,
    target: str,
    config: CollectionConfig,
    state: CollectionState,
    *,
    existed: bool,
    progress: ProgressFn | None,
) -> int:
    m = archive.manifest
    with _writer(ts, target, config, m, existed=existed) as col:
        col.begin_write()
        if existed:
            old = col.state
            for team in sorted(set(col.store.lengths()) | set(old.bm25) | set(old.units)):
                col.drop_tenant(team)
        unit_teams = set(m.teams) if col.needs_units else state.units & set(m.teams)
        units = _upsert(col, archive.batches(BATCH), unit_teams, m, progress)
        store = col.store
        expected = counted_lengths(state)
        if store.lengths() != expected:
            raise TransferError(
                "取り込んだ記録の BM25 統計がファイルの統計と一致しません"
                "(ファイルが壊れています)。何も取り込んでいません"
            )
        col.state = CollectionState(
            embedder=state.embedder or m.model,
            dim=state.dim or m.dim,
            bm25={
                t: {f: FieldStats(st.total_len, st.count, st.avgdl_written) for f, st in fs.items()}
                for t, fs in state.bm25.items()
                if t in expected
            },
            units=unit_teams,
            version=STATE_VERSION,
        )
        if store.needs_index(m.records):
            if progress is not None:
                progress("index", 0, 1)
            store.optimize()
            if unit_teams:
                col.units.optimize()
    return units


def _upsert(
    col: Collection,
    batches: Iterator[tuple[str, list]],
    unit_teams: set[str],
    m: Manifest,
    progress: ProgressFn | None,
) -> int:
    """Every batch upserted as stored, the units of ``unit_teams`` rebuilt from the text."""
    store = col.store
    written: dict[str, int] = {}
    units = 0
    done = 0
    for team, points in batches:
        if team in unit_teams:  # units first, as an ingest writes them
            units += col.units.replace(team, [p.record for p in points])
        store.upsert(team, points)
        written[team] = written.get(team, 0) + len(points)
        done += len(points)
        if progress is not None:
            progress("import", done, m.records)
    if written != {t: n for t, n in m.teams.items() if n}:
        raise TransferError(
            "ファイルの記録の件数が manifest.json と一致しません(ファイルが壊れています)。"
            "何も取り込んでいません"
        )
    return units


def _remove_partial(ts: Tansaku, target: str) -> None:
    """A new collection whose import failed: removed (a server backend has no rollback)."""
    try:
        if ts.has_collection(target):
            ts.backend.remove(target)
    except Exception:
        log.exception("could not remove the partly imported collection %s", target)

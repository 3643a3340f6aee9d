"""Writing a collection to one file (the format: :mod:`tansaku.transfer.format`).

Reads the committed collection through the public storage protocols only
(``RecordStore.dump``), so a collection of any backend exports the same way, and writes the
points part by part: memory stays bounded by one batch and one part's buffer whatever the
collection's size. The file appears under its name only once complete (written beside it,
then renamed).
"""

from __future__ import annotations

import gzip
import hashlib
import os
import secrets
import tarfile
import tempfile
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from tansaku import __version__
from tansaku.collection.stats import CollectionState, recount_bm25
from tansaku.files import dump_toml
from tansaku.transfer.format import (
    BATCH,
    CONFIG,
    MANIFEST,
    PART_BYTES,
    PART_RECORDS,
    PARTS,
    STATE,
    SUFFIX,
    FileReport,
    Manifest,
    Member,
    ProgressFn,
    TransferError,
    counted_lengths,
    point_line,
)

if TYPE_CHECKING:
    from tansaku.client import Tansaku


@dataclass(frozen=True)
class ExportReport(FileReport):
    collection: str
    path: Path
    records: int
    teams: dict[str, int]
    parts: int
    bytes: int
    model: str
    dim: int
    warnings: list[str] = field(default_factory=list)


def default_path(name: str, dest: Path | None = None) -> Path:
    """``dest``, or ``<dest>/<name>.tansaku.tar`` when it is a folder, or the latter in the
    current folder when not given."""
    if dest is None:
        return Path.cwd() / f"{name}{SUFFIX}"
    return dest / f"{name}{SUFFIX}" if dest.is_dir() else dest


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        while chunk := fh.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


class _Parts:
    """The points written into gzip parts of bounded size in a scratch folder, each added
    to the tar as soon as it is closed (and then deleted)."""

    def __init__(self, tar: tarfile.TarFile, scratch: Path) -> None:
        self.tar = tar
        self.scratch = scratch
        self.members: list[Member] = []
        self._fh: gzip.GzipFile | None = None
        self._path: Path | None = None
        self._records = 0
        self._bytes = 0

    def add(self, line: str) -> None:
        if self._fh is None:
            self._path = self.scratch / f"{len(self.members):05d}.jsonl.gz"
            self._fh = gzip.GzipFile(self._path, "wb", compresslevel=6, mtime=0)
        data = (line + "\n").encode("utf-8")
        fh = self._fh
        fh.write(data)
        self._records += 1
        self._bytes += len(data)
        if self._records >= PART_RECORDS or self._bytes >= PART_BYTES:
            self.close()

    def close(self) -> None:
        if self._fh is None or self._path is None:
            return
        self._fh.close()
        path, self._fh = self._path, None
        name = f"{PARTS}/{path.name}"
        self.members.append(Member(name, path.stat().st_size, _sha256(path), self._records))
        self.tar.add(path, arcname=name, recursive=False)
        path.unlink()
        self._records = self._bytes = 0


def _add_text(tar: tarfile.TarFile, scratch: Path, name: str, text: str) -> Member:
    path = scratch / name
    path.write_text(text, encoding="utf-8")
    member = Member(name, path.stat().st_size, _sha256(path))
    tar.add(path, arcname=name, recursive=False)
    path.unlink()
    return member


def export_collection(
    ts: Tansaku,
    name: str,
    dest: Path | None = None,
    *,
    overwrite: bool = False,
    progress: ProgressFn | None = None,
) -> ExportReport:
    """Write collection ``name`` of ``ts`` — config, statistics and every team's records
    with their stored vectors — to ``dest`` (a file, or a folder for
    ``<name>.tansaku.tar``; default: the current folder). An existing file is kept unless
    ``overwrite``. The embedding cache is not exported."""
    path = default_path(name, dest)
    if path.exists() and not overwrite:
        raise TransferError(f"{path} は既にあります(上書きするには --force を指定してください)")
    if not path.parent.is_dir():
        raise TransferError(f"出力先のフォルダ {path.parent} がありません")
    with ts.reading(name) as col:  # the committed view, held while it is read
        state = col.state
        config = col.config
        total = col.store.total() if col.handles is not None else 0
        # beside the destination (same file system: renamed into place when complete), with
        # the permissions a new file gets (mkstemp's would be 0600)
        tmp = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
        try:
            with (
                tempfile.TemporaryDirectory(dir=path.parent, prefix=".tansaku-export-") as sd,
                tarfile.open(tmp, "w", format=tarfile.PAX_FORMAT) as tar,
            ):
                scratch = Path(sd)
                members = [_add_text(tar, scratch, CONFIG, dump_toml(config.to_dict()))]
                parts = _Parts(tar, scratch)
                teams: dict[str, int] = {}
                lengths: dict[str, dict[str, tuple[int, int]]] = {}
                dim = state.dim
                done = 0
                if col.handles is not None:
                    for team, points in col.store.dump(batch=BATCH):
                        for p in points:
                            parts.add(point_line(team, p))
                            acc = lengths.setdefault(team, {})
                            tl, n = acc.get(p.record.field, (0, 0))
                            acc[p.record.field] = (tl + p.bm25_len, n + 1)
                            if not dim and p.dense is not None:
                                dim = int(p.dense.shape[0])
                        teams[team] = teams.get(team, 0) + len(points)
                        done += len(points)
                        if progress is not None:
                            progress("export", done, max(total, done))
                parts.close()
                out_state, warnings = _state_of(state, lengths, dim)
                members.append(_add_text(tar, scratch, STATE, out_state.to_json()))
                members.extend(parts.members)
                manifest = Manifest(
                    collection=name,
                    model=state.embedder,
                    dim=dim,
                    teams=teams,
                    created_at=datetime.now(UTC).isoformat(timespec="seconds"),
                    tansaku_version=__version__,
                    members=tuple(members),
                )
                _add_text(tar, scratch, MANIFEST, manifest.to_json())
            with tmp.open("rb") as fh:
                os.fsync(fh.fileno())
            os.replace(tmp, path)
        except BaseException:
            tmp.unlink(missing_ok=True)
            raise
    return ExportReport(
        collection=name,
        path=path,
        records=manifest.records,
        teams=dict(sorted(teams.items())),
        parts=len(parts.members),
        bytes=path.stat().st_size,
        model=state.embedder,
        dim=dim,
        warnings=warnings,
    )


def _state_of(
    state: CollectionState, lengths: dict[str, dict[str, tuple[int, int]]], dim: int
) -> tuple[CollectionState, list[str]]:
    """The statistics to export: the lengths counted from the records exported (so the
    file is consistent even if the collection's statistics were not), with the averages the
    stored vectors were encoded with; warns when the committed statistics differed."""
    warnings = []
    if counted_lengths(state) != lengths:
        warnings.append(
            "コレクションの統計が記録と食い違っていたため、記録から数え直した統計を書き出しました"
            "(`tansaku doctor` で元のコレクションを確認してください)"
        )
    out = CollectionState(
        embedder=state.embedder,
        dim=dim,
        bm25=recount_bm25(lengths, state),
        units={t for t in state.units if t in lengths},
        version=state.version,
    )
    return out, warnings

"""Reading an export file: opened, every member checked against the manifest (size and
sha256) before anything is imported, then the points read back part by part.

A truncated, corrupted or foreign file is refused here with :class:`TransferError`; an
import calls :meth:`Archive.verify` first, so such a file never writes a single record.
"""

from __future__ import annotations

import gzip
import hashlib
import tarfile
import tomllib
import zlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO

from tansaku.collection.stats import CollectionState
from tansaku.config import CollectionConfig, config_from_dict
from tansaku.errors import ConfigError
from tansaku.store.base import StoredPoint
from tansaku.transfer.format import (
    CONFIG,
    MANIFEST,
    STATE,
    Manifest,
    Member,
    TransferError,
    parse_point,
)
from tansaku.workspace import validate_name

_READ_ERRORS = (tarfile.TarError, OSError, EOFError, zlib.error, gzip.BadGzipFile)
VerifyFn = Callable[[int, int], None]  # (bytes checked, bytes in all)


def _damaged(path: Path, detail: object) -> TransferError:
    return TransferError(
        f"{path} は壊れているか途中で切れています({detail})。"
        "書き出し直したファイルを使ってください。何も取り込んでいません"
    )


class Archive:
    """An export file opened for reading (a context manager)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        if not path.is_file():
            raise TransferError(f"ファイル {path} がありません")
        try:
            self._tar = tarfile.open(path, "r:")  # noqa: SIM115 (closed by close())
        except _READ_ERRORS as exc:
            raise _damaged(path, exc) from None
        try:
            self.manifest = Manifest.from_json(self._read(MANIFEST).decode("utf-8"))
            for team in self.manifest.teams:
                validate_name(team, "チーム名")
        except (ConfigError, UnicodeDecodeError) as exc:
            self.close()
            raise TransferError(f"{path} の manifest.json が不正です: {exc}") from None
        except BaseException:
            self.close()
            raise

    def __enter__(self) -> Archive:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._tar.close()

    def _open(self, name: str) -> IO[bytes]:
        try:
            fh = self._tar.extractfile(name)
        except KeyError:
            fh = None
        except _READ_ERRORS as exc:
            raise _damaged(self.path, exc) from None
        if fh is None:
            if name == MANIFEST:
                raise TransferError(
                    f"{self.path} に manifest.json がありません(tansaku のエクスポートファイル"
                    "ではないか、途中で切れています)。何も取り込んでいません"
                )
            raise _damaged(self.path, f"{name} がありません")
        return fh

    def _read(self, name: str) -> bytes:
        try:
            with self._open(name) as fh:
                return fh.read()
        except _READ_ERRORS as exc:
            raise _damaged(self.path, exc) from None

    def verify(self, progress: VerifyFn | None = None) -> None:
        """Check every member the manifest lists: present, of its size and sha256."""
        members = self.manifest.members
        names = {m.name for m in members}
        for required in (CONFIG, STATE):
            if required not in names:
                raise _damaged(self.path, f"manifest.json に {required} がありません")
        total = sum(m.bytes for m in members)
        done = 0
        for m in members:
            self._check(m)
            done += m.bytes
            if progress is not None:
                progress(done, total)

    def _check(self, member: Member) -> None:
        digest = hashlib.sha256()
        size = 0
        try:
            with self._open(member.name) as fh:
                while chunk := fh.read(1 << 20):
                    digest.update(chunk)
                    size += len(chunk)
        except _READ_ERRORS as exc:
            raise _damaged(self.path, exc) from None
        if size != member.bytes or digest.hexdigest() != member.sha256:
            raise _damaged(self.path, f"{member.name} のチェックサムが一致しません")

    def config(self, name: str) -> CollectionConfig:
        """The exported config, under the collection name ``name``."""
        try:
            return config_from_dict(tomllib.loads(self._read(CONFIG).decode("utf-8")), name=name)
        except (tomllib.TOMLDecodeError, UnicodeDecodeError, ConfigError) as exc:
            raise TransferError(f"{self.path} の config.toml を読めません: {exc}") from None

    def state(self) -> CollectionState:
        try:
            return CollectionState.from_json(self._read(STATE).decode("utf-8"))
        except (ValueError, TypeError, KeyError) as exc:
            raise TransferError(f"{self.path} の state.json を読めません: {exc!r}") from None

    def points(self) -> Iterator[tuple[str, StoredPoint]]:
        """(team, point) of every point, part by part, in the order they were written."""
        dim = self.manifest.dim
        for part in self.manifest.parts:
            try:
                with self._open(part.name) as raw, gzip.GzipFile(fileobj=raw) as fh:
                    for n, line in enumerate(fh, 1):
                        try:
                            team, point = parse_point(line, dim)
                        except ValueError as exc:
                            raise TransferError(
                                f"{self.path} の {part.name} {n} 行目が不正です: {exc}"
                            ) from None
                        if team not in self.manifest.teams:
                            raise TransferError(
                                f"{self.path} の {part.name} {n} 行目のチーム「{team}」が"
                                "manifest.json にありません"
                            )
                        yield team, point
            except _READ_ERRORS as exc:
                raise _damaged(self.path, exc) from None

    def batches(self, batch: int = 256) -> Iterator[tuple[str, list[StoredPoint]]]:
        """:meth:`points` grouped into runs of at most ``batch`` points of one team."""
        team: str | None = None
        buf: list[StoredPoint] = []
        for t, point in self.points():
            if buf and (t != team or len(buf) >= batch):
                assert team is not None
                yield team, buf
                buf = []
            team = t
            buf.append(point)
        if buf and team is not None:
            yield team, buf

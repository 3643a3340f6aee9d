"""The export file: one uncompressed tar (``<collection>.tansaku.tar``) holding

- ``config.toml`` — the collection's config (``CollectionConfig.to_dict()``),
- ``state.json`` — its statistics (``CollectionState.to_json()``): the BM25 length statistics
  per team and field, and the average length each field's stored sparse vectors were encoded
  with, which must travel with those vectors,
- ``points/NNNNN.jsonl.gz`` — the records with their stored vectors, one JSON object a line
  (:func:`point_line`), gzip-compressed, at most :data:`PART_RECORDS` records or
  :data:`PART_BYTES` bytes of JSON each (an export and an import hold one part at a time),
- ``manifest.json`` — last: the format and its version, the tansaku version, the collection,
  its embedding model and dimension, the records per team, when it was made, and the size and
  sha256 of every other member (an import checks them all before it writes anything).

A tar rather than a folder: one file to copy, upload or attach, whose truncation or corruption
the manifest's checksums reveal; the parts are compressed each (so the tar is not), which lets
a reader check and read one part at a time. The embedding cache is not exported: an import
needs no embedding, and the cache of the receiving workspace fills as it embeds queries.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Callable
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from tansaku.errors import TansakuError
from tansaku.records import Record
from tansaku.store.base import StoredPoint
from tansaku.store.sparse import SparseVec

if TYPE_CHECKING:
    from tansaku.collection.stats import CollectionState
    from tansaku.store.protocols import Lengths

FORMAT = "tansaku-collection"
FORMAT_VERSION = 1
SUFFIX = ".tansaku.tar"
MANIFEST = "manifest.json"
CONFIG = "config.toml"
STATE = "state.json"
PARTS = "points"
PART_RECORDS = 10_000  # records per part at most
PART_BYTES = 32 * 1024 * 1024  # JSON bytes per part at most (before compression)
CACHE_NOTE = "埋め込みキャッシュは含まれません(取り込みに埋め込みは不要です)"
BATCH = 256  # points per read and write batch
ProgressFn = Callable[[str, int, int], None]  # (stage, done, total)


def counted_lengths(state: CollectionState) -> Lengths:
    """(sum of BM25 lengths, records) per team and field of ``state``, only the fields that
    have records and the teams that have such a field: what the records of an export hold
    (:meth:`~tansaku.store.protocols.RecordReader.lengths` counts the same from the store)."""
    out = {
        t: {f: (st.total_len, st.count) for f, st in fields.items() if st.count}
        for t, fields in state.bm25.items()
    }
    return {t: fields for t, fields in out.items() if fields}


class TransferError(TansakuError):
    """An export or import that cannot be carried out (an unreadable, damaged or too new
    file, an existing collection, another embedding dimension); nothing was written."""


class FileReport:
    """``to_dict`` for what an export or an import did: each field in its order under its name
    (paths as text), ``model`` and ``dim`` together as ``embedder``."""

    model: str
    dim: int

    def to_dict(self) -> dict[str, object]:
        out: dict[str, object] = {}
        for f in fields(self):  # type: ignore[arg-type]  # subclasses are dataclasses
            value = getattr(self, f.name)
            if f.name == "model":
                out["embedder"] = {"model": self.model, "dim": self.dim}
            elif f.name != "dim":
                out[f.name] = str(value) if isinstance(value, Path) else value
        return out


@dataclass(frozen=True)
class Member:
    """One file of the archive as the manifest lists it."""

    name: str
    bytes: int
    sha256: str
    records: int = 0  # points in a part (0 for the config and the state)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.name, "bytes": self.bytes, "sha256": self.sha256}
        if self.name.startswith(f"{PARTS}/"):
            out["records"] = self.records
        return out


@dataclass(frozen=True)
class Manifest:
    collection: str
    model: str
    dim: int
    teams: dict[str, int]  # records per team
    created_at: str
    tansaku_version: str
    members: tuple[Member, ...] = ()
    format_version: int = FORMAT_VERSION
    notes: tuple[str, ...] = field(default=(CACHE_NOTE,))

    @property
    def records(self) -> int:
        return sum(self.teams.values())

    @property
    def parts(self) -> list[Member]:
        return [m for m in self.members if m.name.startswith(f"{PARTS}/")]

    def to_json(self) -> str:
        return json.dumps(
            {
                "format": FORMAT,
                "format_version": self.format_version,
                "tansaku_version": self.tansaku_version,
                "collection": self.collection,
                "embedder": {"model": self.model, "dim": self.dim},
                "records": self.records,
                "teams": dict(sorted(self.teams.items())),
                "created_at": self.created_at,
                "files": [m.to_dict() for m in self.members],
                "notes": list(self.notes),
            },
            ensure_ascii=False,
            indent=1,
        )

    @classmethod
    def from_json(cls, text: str) -> Manifest:
        """The manifest of an export; a file of another format, or of a newer version than
        this tansaku reads, is refused (:class:`TransferError`)."""
        try:
            data = json.loads(text)
        except ValueError as exc:
            raise TransferError(f"manifest.json を読めません: {exc}") from None
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            raise TransferError(
                "tansaku のエクスポートファイルではありません(manifest.json の形式が違います)"
            )
        version = data.get("format_version")
        if not isinstance(version, int) or version < 1:
            raise TransferError(f"manifest.json の形式バージョンが不正です: {version!r}")
        if version > FORMAT_VERSION:
            raise TransferError(
                f"このファイルは新しい形式(バージョン {version})で書き出されています。"
                f"この tansaku が読めるのはバージョン {FORMAT_VERSION} までです。"
                "tansaku を更新してから取り込んでください"
            )
        try:
            emb = data["embedder"]
            return cls(
                collection=str(data["collection"]),
                model=str(emb.get("model") or ""),
                dim=int(emb.get("dim") or 0),
                teams={str(t): int(n) for t, n in data["teams"].items()},
                created_at=str(data.get("created_at", "")),
                tansaku_version=str(data.get("tansaku_version", "")),
                members=tuple(
                    Member(
                        str(m["name"]), int(m["bytes"]), str(m["sha256"]), int(m.get("records", 0))
                    )
                    for m in data["files"]
                ),
                format_version=version,
                notes=tuple(str(n) for n in data.get("notes", ())),
            )
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise TransferError(f"manifest.json の内容が不正です: {exc!r}") from None


def encode_dense(vector: np.ndarray) -> str:
    """A dense vector as base64 of its float32 little-endian bytes."""
    return base64.b64encode(np.asarray(vector, dtype="<f4").tobytes()).decode("ascii")


def decode_dense(text: str, dim: int) -> np.ndarray:
    raw = base64.b64decode(text.encode("ascii"), validate=True)
    vec = np.frombuffer(raw, dtype="<f4").astype(np.float32)
    if dim and vec.shape[0] != dim:
        raise ValueError(f"dense vector of {vec.shape[0]} dimensions, expected {dim}")
    return vec


def point_line(team: str, point: StoredPoint) -> str:
    """One line of a part: the record (id, document, field, text, metadata as stored), its
    content hash and BM25 length, the sparse vector (indices, values) and the dense vector
    (base64 float32 little-endian, or null for a field without one)."""
    rec = point.record
    obj = {
        "team": team,
        "id": rec.id,
        "doc_id": rec.doc_id,
        "field": rec.field,
        "text": rec.text,
        "meta": rec.metadata,
        "hash": point.content_hash,
        "bm25_len": point.bm25_len,
        "sparse": {"indices": list(point.sparse.indices), "values": list(point.sparse.values)},
        "dense": encode_dense(point.dense) if point.dense is not None else None,
    }
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"))


def parse_point(line: str | bytes, dim: int) -> tuple[str, StoredPoint]:
    """(team, point) of one line (:func:`point_line`); ``ValueError`` when malformed."""
    try:
        obj = json.loads(line)
        sparse = obj["sparse"]
        indices = tuple(int(i) for i in sparse["indices"])
        values = tuple(float(v) for v in sparse["values"])
        if len(indices) != len(values):
            raise ValueError("sparse indices and values differ in length")
        dense = obj.get("dense")
        rec = Record(
            id=str(obj["id"]),
            doc_id=str(obj["doc_id"]),
            field=str(obj["field"]),
            text=str(obj["text"]),
            metadata=dict(obj.get("meta") or {}),
        )
        point = StoredPoint(
            rec,
            SparseVec(indices, values),
            decode_dense(dense, dim) if dense is not None else None,
            str(obj["hash"]),
            int(obj["bm25_len"]),
        )
        return str(obj["team"]), point
    except (KeyError, TypeError, AttributeError) as exc:
        raise ValueError(f"malformed point: {exc!r}") from None

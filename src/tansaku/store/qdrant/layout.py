"""The Qdrant collections tansaku keeps: opening one (created by a writer, with the payload
indexes every search filters on), waiting for a server's optimizers, and what a store holding
one does alike (:class:`CollectionHandle`).

Payload indexes as the embedded shards have them (``tansaku.store.shard.open_shard``):
``tenant`` a keyword index with ``is_tenant`` (the server co-locates each team's points),
keyword indexes on ``rid``, ``doc_id``, ``field``, ``meta.source_type``, ``meta.store``, an
integer index on ``date_int``. Creation takes the settings' sharding, replication, write
consistency, ``on_disk`` and ``quantization``.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Mapping, Sequence
from typing import Any

from tansaku.errors import StorageError
from tansaku.store.qdrant.settings import QdrantSettings, import_qdrant_client
from tansaku.store.shard import INDEXED_KEYWORDS

import_qdrant_client()

from qdrant_client import QdrantClient, models  # noqa: E402

log = logging.getLogger(__name__)
OPTIMIZE_WAIT_S = 3600.0  # how long optimize() waits for a server's optimizers at most
_POLL_S = 0.5


class CollectionHandle:
    """What a store holding one of these collections does alike, whatever it keeps in it:
    tell whether the collection exists yet, refuse a write when read-only, wait for the
    server's optimizers, and leave persistence to the server."""

    client: QdrantClient
    name: str
    collection: str
    settings: QdrantSettings
    read_only: bool
    created: bool
    _exists: bool
    _lock: threading.RLock

    def _open(
        self,
        client: QdrantClient,
        name: str,
        collection: str,
        settings: QdrantSettings,
        *,
        read_only: bool,
        vectors: Mapping[str, models.VectorParams],
        sparse: Mapping[str, models.SparseVectorParams],
    ) -> models.CollectionInfo | None:
        """Hold Qdrant collection ``collection`` of tansaku collection ``name``, opened (and,
        unless ``read_only``, created) by :func:`open_collection`; its info, None while it
        does not exist."""
        self.client, self.name, self.collection = client, name, collection
        self.settings, self.read_only = settings, read_only
        self._lock = threading.RLock()
        info, self.created = open_collection(
            client, collection, settings, vectors=vectors, sparse=sparse, read_only=read_only
        )
        self._exists = info is not None
        return info

    def _present(self) -> bool:
        """Whether the collection exists (a view opened before any writer created it asks
        again until it does, and reads as empty meanwhile)."""
        if not self._exists:
            self._exists = bool(self.client.collection_exists(self.collection))
        return self._exists

    def _writable(self) -> None:
        if self.read_only:
            raise StorageError(f"{self.collection} は読み取り専用で開かれています")

    def optimize(self) -> None:
        """Nothing to merge by hand on a server: wait until its optimizers are done (green)."""
        if self._present() and not self.settings.is_local:
            wait_until_green(self.client, self.collection)

    def flush(self) -> None:
        """Writes are acknowledged once applied (``wait=True``); the server persists them."""

    def close(self) -> None:
        """The client is the caller's (shared by a collection's stores): left open."""


def idf_sparse(settings: QdrantSettings) -> models.SparseVectorParams:
    """A sparse vector whose terms the engine weighs by their IDF (a record's BM25 terms, a
    unit's bigrams), kept on disk as the settings say."""
    return models.SparseVectorParams(
        modifier=models.Modifier.IDF, index=models.SparseIndexParams(on_disk=settings.on_disk)
    )


def open_collection(
    client: QdrantClient,
    name: str,
    settings: QdrantSettings,
    *,
    vectors: Mapping[str, models.VectorParams],
    sparse: Mapping[str, models.SparseVectorParams],
    read_only: bool,
) -> tuple[models.CollectionInfo | None, bool]:
    """The collection's info, creating it (with its payload indexes) when it does not exist
    and ``read_only`` is false. Returns (info, created); info is None for a missing collection
    opened read-only (it reads as empty)."""
    if client.collection_exists(name):
        info = client.get_collection(name)
        if not read_only and not settings.is_local and _missing_indexes(info):
            create_indexes(client, name, _missing_indexes(info))  # a creator died before them
            info = client.get_collection(name)
        return info, False
    if read_only:
        return None, False
    try:
        client.create_collection(
            collection_name=name,
            vectors_config=dict(vectors),
            sparse_vectors_config=dict(sparse),
            shard_number=settings.shard_number,
            replication_factor=settings.replication_factor,
            write_consistency_factor=settings.write_consistency_factor,
            on_disk_payload=settings.on_disk,
            quantization_config=_quantization(settings) if vectors else None,
        )
    except Exception as exc:  # another writer created it meanwhile: use theirs
        if not client.collection_exists(name):
            raise StorageError(
                f"Qdrant のコレクション {name} を作成できませんでした: {exc}"
            ) from exc
        return client.get_collection(name), False
    if not settings.is_local:  # local mode scans every payload (and warns about indexes)
        create_indexes(client, name)
    return client.get_collection(name), True


def _quantization(settings: QdrantSettings) -> models.ScalarQuantization | None:
    """Scalar int8 quantisation of the dense vectors, kept in RAM (``quantization = "int8"``)."""
    if settings.quantization != "int8":
        return None
    return models.ScalarQuantization(
        scalar=models.ScalarQuantizationConfig(
            type=models.ScalarType.INT8, quantile=0.99, always_ram=True
        )
    )


def _schemas() -> dict[str, Any]:
    tenant = models.KeywordIndexParams(type=models.KeywordIndexType.KEYWORD, is_tenant=True)
    out: dict[str, Any] = {"tenant": tenant}
    out.update(dict.fromkeys(INDEXED_KEYWORDS, models.PayloadSchemaType.KEYWORD))
    out["date_int"] = models.PayloadSchemaType.INTEGER
    return out


def _missing_indexes(info: models.CollectionInfo) -> list[str]:
    return [key for key in _schemas() if key not in (info.payload_schema or {})]


def create_indexes(client: QdrantClient, name: str, keys: Sequence[str] | None = None) -> None:
    """The payload indexes of a records or units collection (``keys``: only those)."""
    for key, schema in _schemas().items():
        if keys is None or key in keys:
            client.create_payload_index(name, key, field_schema=schema, wait=True)


def wait_until_green(client: QdrantClient, name: str, *, wait_s: float = OPTIMIZE_WAIT_S) -> bool:
    """Wait until the server's optimizers are done with the collection (status green); a grey
    collection (optimizations pending, not started: after a restart) is nudged to start.
    Returns whether it got green within ``wait_s``; a red one is a :class:`StorageError`."""
    deadline = time.monotonic() + wait_s
    nudged = False
    while True:
        status = client.get_collection(name).status
        if status == models.CollectionStatus.GREEN:
            return True
        if status == models.CollectionStatus.RED:
            raise StorageError(
                f"Qdrant のコレクション {name} が異常状態(red)です。"
                "サーバーのログを確認してください"
            )
        if status == models.CollectionStatus.GREY and not nudged:
            client.update_collection(name, optimizers_config=models.OptimizersConfigDiff())
            nudged = True
        if time.monotonic() >= deadline:
            log.warning("collection %s still %s after %.0f s", name, status, wait_s)
            return False
        time.sleep(_POLL_S)

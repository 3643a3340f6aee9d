"""The Qdrant collections tansaku keeps: opening one (created by a writer, with the payload
indexes every search filters on), and waiting for a server's optimizers.

Payload indexes as the embedded shards have them (``tansaku.store.shard.open_shard``):
``tenant`` a keyword index with ``is_tenant`` (the server co-locates each team's points),
keyword indexes on ``rid``, ``doc_id``, ``field``, ``meta.source_type``, ``meta.store``, an
integer index on ``date_int``. Creation takes the settings' sharding, replication, write
consistency and ``on_disk``.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping

from tansaku.errors import StorageError
from tansaku.store.qdrant.settings import QdrantSettings, import_qdrant_client
from tansaku.store.shard import INDEXED_KEYWORDS

import_qdrant_client()

from qdrant_client import QdrantClient, models  # noqa: E402

log = logging.getLogger(__name__)
OPTIMIZE_WAIT_S = 3600.0  # how long optimize() waits for a server's optimizers at most
_POLL_S = 0.5


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
        return client.get_collection(name), False
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
        )
    except Exception as exc:  # another writer created it meanwhile: use theirs
        if not client.collection_exists(name):
            raise StorageError(
                f"Qdrant のコレクション {name} を作成できませんでした: {exc}"
            ) from exc
        return client.get_collection(name), False
    client.create_payload_index(
        name,
        "tenant",
        field_schema=models.KeywordIndexParams(
            type=models.KeywordIndexType.KEYWORD, is_tenant=True
        ),
    )
    for key in INDEXED_KEYWORDS:
        client.create_payload_index(name, key, field_schema=models.PayloadSchemaType.KEYWORD)
    client.create_payload_index(name, "date_int", field_schema=models.PayloadSchemaType.INTEGER)
    return client.get_collection(name), True


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

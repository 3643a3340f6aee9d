"""The Qdrant record store against qdrant-client's local mode, and against a real server when
``TANSAKU_TEST_QDRANT_URL`` is set: the whole :class:`StoreContract`, plus what only this
store has (settings, collection layout, dump)."""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator

import pytest
from qdrant_client import QdrantClient

from tansaku.store.qdrant.records import QdrantRecordStore
from tansaku.store.qdrant.settings import QdrantSettings
from tansaku.testing.store_contract import DIM, StoreContract

SERVER_URL = os.environ.get("TANSAKU_TEST_QDRANT_URL")
BACKENDS = ["local", "server"]


def _client_and_settings(kind: str) -> tuple[QdrantClient, QdrantSettings]:
    prefix = f"t{uuid.uuid4().hex[:10]}_"
    if kind == "server":
        if not SERVER_URL:
            pytest.skip("TANSAKU_TEST_QDRANT_URL is not set: no Qdrant server to test against")
        settings = QdrantSettings(
            url=SERVER_URL, api_key=os.environ.get("TANSAKU_QDRANT_API_KEY"), prefix=prefix
        )
        return settings.client(), settings
    return QdrantClient(location=":memory:"), QdrantSettings(url="qdrant+memory://", prefix=prefix)


@pytest.fixture(params=BACKENDS)
def qdrant(request: pytest.FixtureRequest) -> Iterator[tuple[QdrantClient, QdrantSettings]]:
    client, settings = _client_and_settings(request.param)
    yield client, settings
    for c in client.get_collections().collections:
        if c.name.startswith(settings.prefix):
            client.delete_collection(c.name)
    client.close()


class TestQdrantRecordStore(StoreContract):
    @pytest.fixture
    def store(self, qdrant):
        client, settings = qdrant
        s = QdrantRecordStore(client, "records", dim=DIM, settings=settings)
        yield s
        s.close()

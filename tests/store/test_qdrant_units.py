"""The Qdrant unit index against qdrant-client's local mode, and against a real server when
``TANSAKU_TEST_QDRANT_URL`` is set: the whole :class:`UnitIndexContract`, plus what only this
index has (the engine's IDF read back, counts from the tenant index)."""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator

import pytest
from qdrant_client import QdrantClient

from tansaku.store.qdrant.settings import QdrantSettings
from tansaku.store.qdrant.units import QdrantUnitIndex
from tansaku.testing.unit_contract import UnitIndexContract

SERVER_URL = os.environ.get("TANSAKU_TEST_QDRANT_URL")


@pytest.fixture(params=["local", "server"])
def qdrant(request: pytest.FixtureRequest) -> Iterator[tuple[QdrantClient, QdrantSettings]]:
    prefix = f"t{uuid.uuid4().hex[:10]}_"
    if request.param == "server":
        if not SERVER_URL:
            pytest.skip("TANSAKU_TEST_QDRANT_URL is not set: no Qdrant server to test against")
        settings = QdrantSettings(
            url=SERVER_URL, api_key=os.environ.get("TANSAKU_QDRANT_API_KEY"), prefix=prefix
        )
        client = settings.client()
    else:
        settings = QdrantSettings(url="qdrant+memory://", prefix=prefix)
        client = QdrantClient(location=":memory:")
    yield client, settings
    for c in client.get_collections().collections:
        if c.name.startswith(prefix):
            client.delete_collection(c.name)
    client.close()


class TestQdrantUnitIndex(UnitIndexContract):
    @pytest.fixture
    def units(self, qdrant):
        client, settings = qdrant
        u = QdrantUnitIndex(client, "units", settings=settings)
        yield u
        u.close()

from __future__ import annotations

import pytest

from tansaku.testing.fake_embedding_server import FakeEmbeddingServer

from .support import API_KEY


@pytest.fixture
def server():
    with FakeEmbeddingServer(dim=32, api_key=API_KEY) as srv:
        yield srv

"""``tansaku.maintenance.reembed`` through the protocols on the Qdrant backend (``qdrant-client``'s
local mode): a model of the same dimension is written in place (dump + upsert) and recorded with the
commit; a new dimension, which needs a new vector space, is refused before anything changes."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

import tansaku
from tansaku.errors import ConfigError, EmbedderMismatch
from tansaku.maintenance.reembed import reembed
from tansaku.store.qdrant.settings import forget_shared_clients
from tansaku.testing import HashEmbedder

from .conftest import records
from .test_reembed import ReversedHashEmbedder

pytestmark = pytest.mark.integration


@pytest.fixture
def url(tmp_path: Path) -> Iterator[str]:
    yield f"qdrant+local://{tmp_path / 'qdrant'}"
    forget_shared_clients()  # the local folder is locked by its client


def test_reembed_on_a_qdrant_store(url: str) -> None:
    with tansaku.connect(url, embedder=HashEmbedder(32)) as ts:
        ts.ingest_records(records(), collection="reports", team="shinjuku")
        before = ts.search("冷蔵庫の温度", collection="reports", team="shinjuku").hits
        assert before
    with tansaku.connect(url, embedder=HashEmbedder(48)) as ts:
        with pytest.raises(ConfigError, match="32次元 → 48次元"):
            reembed(ts, "reports")
        assert ts.collection("reports").state.embedder == "hash-ngram-32"
        with pytest.raises(EmbedderMismatch):
            ts.search("冷蔵庫の温度", collection="reports", team="shinjuku")
    new = ReversedHashEmbedder(32)
    with tansaku.connect(url, embedder=new) as ts:
        report = reembed(ts, "reports")
        assert report.changed and not report.plan.rebuild and report.written == len(records())
        col = ts.collection("reports")
        assert (col.state.embedder, col.state.dim) == ("reversed-hash-32", 32)
        for _, points in col.store.dump():
            for p in points:
                want = new.embed_passages([p.record.text])[0]
                assert p.dense is not None and np.allclose(p.dense, want, atol=1e-5)
        assert ts.search("冷蔵庫の温度", collection="reports", team="shinjuku").hits
    with tansaku.connect(url, embedder=HashEmbedder(32)) as ts, pytest.raises(EmbedderMismatch):
        ts.search("冷蔵庫の温度", collection="reports", team="shinjuku")

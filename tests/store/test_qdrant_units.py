"""The Qdrant unit index against qdrant-client's local mode, and against a real server when
``TANSAKU_TEST_QDRANT_URL`` is set: the whole :class:`UnitIndexContract`, plus what only this
index has (the engine's IDF read back, counts from the tenant index)."""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator

import pytest
from qdrant_client import QdrantClient

from tansaku.errors import StorageError
from tansaku.records import Record
from tansaku.store.qdrant.settings import QdrantSettings
from tansaku.store.qdrant.units import QdrantUnitIndex
from tansaku.store.sparse import doc_vector, term_id
from tansaku.store.unit_base import AVG_UNIT_BIGRAMS, BATCH, K1, B
from tansaku.store.units import idf
from tansaku.testing.unit_contract import MAHLER, RAIN, TITLE, UnitIndexContract
from tansaku.text.ngram import bigrams, unit_texts

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


def test_read_only_never_creates_nor_writes(qdrant) -> None:
    client, settings = qdrant
    view = QdrantUnitIndex(client, "absent", settings=settings, read_only=True)
    assert not view.created and view.count("t") == 0
    assert view.search("t", "梅雨前線", limit=3) == []
    assert view.idf_weights("t", [term_id("梅雨")]) == {}
    assert view.unit_counts(from_shard=True) == view.unit_counts(from_shard=False) == {}
    with pytest.raises(StorageError, match="読み取り専用"):
        view.replace("t", [RAIN])
    assert not client.collection_exists(settings.collection_name("absent", "__units"))


def test_created_once_then_reopened_with_its_units(qdrant) -> None:
    client, settings = qdrant
    first = QdrantUnitIndex(client, "日報", settings=settings)
    assert first.created
    n = first.replace("t", [RAIN, MAHLER])
    again = QdrantUnitIndex(client, "日報", settings=settings, read_only=True)
    assert not again.created and again.count("t") == n
    assert again.search("t", "交響曲を書いた作曲家", limit=1)[0].record.id == "mahler#0"


def test_replacing_more_records_than_a_batch_keeps_one_set_of_units(qdrant) -> None:
    client, settings = qdrant
    units = QdrantUnitIndex(client, "daily", settings=settings)
    records = [
        Record(f"r{i}", f"d{i}", "body", f"{i}号店で冷蔵庫を点検した。温度は正常だった。", {})
        for i in range(BATCH + 40)
    ]
    written = units.replace("t", records)
    assert written == units.count("t") == 2 * len(records)
    changed = [Record(r.id, r.doc_id, r.field, "点検のみ実施。", {}) for r in records]
    assert units.replace("t", changed) == units.count("t") == len(records)
    assert units.search("t", "冷蔵庫", limit=5) == []
    units.delete("t", [r.id for r in records])
    assert units.count("t") == 0 and units.unit_counts(from_shard=False) == {}


def test_the_idf_read_back_is_the_one_a_search_multiplies_by(qdrant) -> None:
    client, settings = qdrant
    units = QdrantUnitIndex(client, "daily", settings=settings)
    units.replace("t", [RAIN, MAHLER, TITLE])
    term = term_id("停滞")
    (weight,) = units.idf_weights("t", [term]).values()
    n = units.count("t")
    assert weight == pytest.approx(idf(n, 1))  # one unit has 停滞
    hit = units.search("t", "停滞", limit=1)[0]
    text = next(u for u in unit_texts(RAIN.text, RAIN.metadata) if "停滞" in u)
    vec = doc_vector(bigrams(text), k1=K1, b=B, avgdl=AVG_UNIT_BIGRAMS)
    assert hit.score == pytest.approx(weight * vec.values[vec.indices.index(term)], rel=1e-5)

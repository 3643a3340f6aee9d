"""The Qdrant record store against qdrant-client's local mode, and against a real server when
``TANSAKU_TEST_QDRANT_URL`` is set: the whole :class:`StoreContract`, plus what only this
store has (settings, collection layout, dump)."""

from __future__ import annotations

import os
import sys
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
from qdrant_client import QdrantClient

from tansaku.errors import ConfigError, MissingExtra, StorageError
from tansaku.store.qdrant.records import QdrantRecordStore
from tansaku.store.qdrant.settings import (
    QdrantSettings,
    forget_shared_clients,
    import_qdrant_client,
)
from tansaku.store.qdrant.units import QdrantUnitIndex
from tansaku.testing.store_contract import DIM, StoreContract, make_points, q

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


# -- settings ---------------------------------------------------------------------------------
def test_settings_from_the_table_with_the_key_from_the_environment(monkeypatch) -> None:
    monkeypatch.delenv("TANSAKU_QDRANT_URL", raising=False)
    monkeypatch.setenv("TANSAKU_QDRANT_API_KEY", "secret-from-env")
    table = {"url": "https://qdrant.example.jp:6333", "prefix": "kb_", "shard_number": 6,
             "replication_factor": 2, "write_consistency_factor": 1, "on_disk": True,
             "timeout_s": 60}  # fmt: skip
    s = QdrantSettings.from_config({"qdrant": table})
    assert (s.url, s.prefix, s.shard_number, s.replication_factor) == (table["url"], "kb_", 6, 2)
    assert s.on_disk is True and s.timeout_s == 60.0 and s.api_key == "secret-from-env"
    assert "secret" not in repr(s)
    monkeypatch.setenv("TANSAKU_QDRANT_URL", "http://10.0.0.5:6333")
    assert QdrantSettings.from_config({"qdrant": table}).url == "http://10.0.0.5:6333"
    given = QdrantSettings.from_config({}, url="qdrant+memory://", api_key="k")
    assert (given.url, given.api_key, given.prefix) == ("qdrant+memory://", "k", "tansaku_")


@pytest.mark.parametrize(
    ("table", "message"),
    [
        ({"url": "http://q:6333", "api_key": "x"}, "API キーを書かないで"),
        ({"url": "http://q:6333", "shards": 3}, "不明な項目"),
        ({"url": "ftp://q"}, "使えません"),
        ({"url": "http://"}, "ホスト名"),
        ({"url": "qdrant+local://relative/dir"}, "絶対パス"),
        ({"url": "http://q:6333", "prefix": "チーム"}, "prefix"),
        ({"url": "http://q:6333", "shard_number": 0}, "shard_number"),
        ({"url": "http://q:6333", "replication_factor": "2"}, "replication_factor"),
        ({"url": "http://q:6333", "on_disk": "yes"}, "on_disk"),
        ({"url": "http://q:6333", "quantization": "binary"}, "quantization"),
        ({"url": "http://q:6333", "timeout_s": -1}, "timeout_s"),
        ({}, "URL がありません"),
    ],
)
def test_bad_settings_are_refused_in_japanese(monkeypatch, table, message) -> None:
    monkeypatch.delenv("TANSAKU_QDRANT_URL", raising=False)
    with pytest.raises(ConfigError, match=message):
        QdrantSettings.from_config({"qdrant": table})


def test_without_the_extra_the_error_names_it(monkeypatch) -> None:
    monkeypatch.setitem(sys.modules, "qdrant_client", None)
    with pytest.raises(MissingExtra, match=r"tansaku\[qdrant\]"):
        import_qdrant_client()


def test_a_local_folder_keeps_the_records_and_one_client_serves_it(tmp_path) -> None:
    settings = QdrantSettings(url=f"qdrant+local://{tmp_path / 'q'}")
    client = settings.client()
    try:
        assert settings.client() is client  # the folder is locked by its one client
        QdrantRecordStore(client, "日報", dim=DIM, settings=settings).upsert(
            "team-a", make_points()
        )
    finally:
        forget_shared_clients()
    again = QdrantRecordStore(settings.client(), "日報", dim=DIM, settings=settings)
    try:
        assert again.count("team-a") == 4
        assert again.get("team-a", ["r2:body"])[0].metadata["store"] == "渋谷店"
    finally:
        forget_shared_clients()


# -- opening ----------------------------------------------------------------------------------
def test_read_only_never_creates_nor_writes(qdrant) -> None:
    client, settings = qdrant
    view = QdrantRecordStore(client, "absent", dim=DIM, settings=settings, read_only=True)
    assert view.count("team-a") == 0 and view.total() == 0 and view.scan("team-a") == []
    assert view.search_sparse("team-a", q("冷蔵庫"), limit=3) == []
    assert list(view.dump()) == [] and view.lengths() == {}
    assert not client.collection_exists(settings.collection_name("absent"))
    with pytest.raises(StorageError, match="読み取り専用"):
        view.upsert("team-a", make_points())
    assert not client.collection_exists(settings.collection_name("absent"))
    QdrantRecordStore(client, "absent", dim=DIM, settings=settings).upsert("team-a", make_points())
    assert view.count("team-a") == 4  # created after the view opened: the view sees it


def test_a_writer_creates_the_collection_once_and_a_view_reads_it(qdrant) -> None:
    client, settings = qdrant
    writer = QdrantRecordStore(client, "daily", dim=DIM, settings=settings)
    assert writer.created
    writer.upsert("team-a", make_points())
    assert not QdrantRecordStore(client, "daily", dim=DIM, settings=settings).created
    view = QdrantRecordStore(client, "daily", dim=DIM, settings=settings, read_only=True)
    assert view.count("team-a") == 4


def test_another_embedding_size_is_a_clear_error(qdrant) -> None:
    client, settings = qdrant
    QdrantRecordStore(client, "daily", dim=DIM, settings=settings)
    with pytest.raises(StorageError, match="埋め込み次元"):
        QdrantRecordStore(client, "daily", dim=DIM * 2, settings=settings)


def test_counts_see_another_writer_once_the_cache_expires(qdrant) -> None:
    client, settings = qdrant
    reader = QdrantRecordStore(client, "daily", dim=DIM, settings=settings, cache_s=0)
    writer = QdrantRecordStore(client, "daily", dim=DIM, settings=settings)
    assert reader.count("team-a") == 0 and reader.total() == 0
    writer.upsert("team-a", make_points())
    assert reader.count("team-a") == 4 and reader.total() == 4
    cached = QdrantRecordStore(client, "daily", dim=DIM, settings=settings, cache_s=3600)
    assert cached.count("team-b") == 0
    writer.upsert("team-b", make_points()[:1])
    assert cached.count("team-b") == 0  # within its lifetime a cached count stays
    cached.delete("team-b", ["missing:body"])  # any write of its own drops its cache
    assert cached.count("team-b") == 1


def test_a_shared_local_client_serves_several_threads(tmp_path) -> None:
    settings = QdrantSettings(url=f"qdrant+local://{tmp_path / 'q'}")
    store = QdrantRecordStore(settings.client(), "日報", dim=DIM, settings=settings)
    points = make_points()
    try:
        with ThreadPoolExecutor(4) as pool:
            list(pool.map(lambda i: store.upsert(f"team-{i}", points), range(8)))
            counts = list(pool.map(lambda i: store.count(f"team-{i}"), range(8)))
            hits = list(
                pool.map(lambda i: store.search_sparse(f"team-{i}", q("冷蔵庫"), limit=1), range(8))
            )
        assert counts == [4] * 8
        assert {h[0].record.id for h in hits} == {"r2:body"}
    finally:
        forget_shared_clients()


class _Recording(QdrantClient):
    """Local mode that also notes how collections and payload indexes were asked for (local
    mode accepts sharding and indexes but keeps neither)."""

    def __init__(self) -> None:
        super().__init__(location=":memory:")
        self.created: dict[str, dict[str, Any]] = {}
        self.indexes: dict[str, list[tuple[str, Any]]] = {}

    def create_collection(self, collection_name: str, **kwargs: Any) -> bool:
        self.created[collection_name] = kwargs
        return super().create_collection(collection_name, **kwargs)

    def create_payload_index(self, collection_name: str, field_name: str, **kwargs: Any) -> Any:
        self.indexes.setdefault(collection_name, []).append((field_name, kwargs["field_schema"]))
        return super().create_payload_index(collection_name, field_name, **kwargs)


@pytest.mark.filterwarnings("ignore:Payload indexes have no effect")
def test_a_server_collection_gets_the_settings_and_the_payload_indexes() -> None:
    client = _Recording()
    settings = QdrantSettings(
        url="http://qdrant.internal:6333", prefix="kb_", shard_number=6, replication_factor=2,
        write_consistency_factor=2, on_disk=True, quantization="int8",
    )  # fmt: skip
    QdrantRecordStore(client, "日報", dim=DIM, settings=settings)
    QdrantUnitIndex(client, "日報", settings=settings)
    assert set(client.created) == {"kb_日報", "kb_日報__units"}
    for name, kwargs in client.created.items():
        assert kwargs["shard_number"] == 6 and kwargs["replication_factor"] == 2
        assert kwargs["write_consistency_factor"] == 2 and kwargs["on_disk_payload"] is True
        fields = dict(client.indexes[name])
        assert fields["tenant"].is_tenant is True
        assert {k for k, v in fields.items() if v == "keyword"} == {
            "rid", "doc_id", "field", "meta.source_type", "meta.store"}  # fmt: skip
        assert fields["date_int"] == "integer"
    quantized = client.created["kb_日報"]["quantization_config"].scalar
    assert quantized.type == "int8" and quantized.always_ram is True
    assert client.created["kb_日報__units"]["quantization_config"] is None  # no dense vectors
    params = client.get_collection("kb_日報").config.params
    assert params.vectors["dense"].on_disk is True
    assert params.sparse_vectors["bm25"].modifier == "idf"
    assert params.sparse_vectors["bm25"].index.on_disk is True
    units = client.get_collection("kb_日報__units").config.params.sparse_vectors
    assert units["bigram"].modifier == "idf"


@pytest.mark.parametrize("name", ["meta", "daily__units", "a__b"])
def test_names_that_would_share_a_qdrant_collection_are_refused(name) -> None:
    with pytest.raises(ConfigError, match="予約"):
        QdrantSettings(url="qdrant+memory://").collection_name(name)

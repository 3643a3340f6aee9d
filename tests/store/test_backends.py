"""``tansaku.connect(path | url)`` picks the backend; the collection gets its storage from it;
search services are replaced whole, never changed in place."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

import tansaku
from tansaku.backends import EmbeddedBackend, backend_for, is_url, register_scheme
from tansaku.errors import ConfigError
from tansaku.records import Record
from tansaku.search.expand import RuleExpander
from tansaku.search.services import SearchServices
from tansaku.store.protocols import CollectionStorage, RecordStore, UnitIndex
from tansaku.testing import HashEmbedder
from tansaku.workspace import Workspace

RECORDS = [
    Record(
        id="r1:body", doc_id="r1", field="body", text="冷蔵庫の温度が上がらず、食材を廃棄した。"
    ),
    Record(
        id="r2:body", doc_id="r2", field="body", text="お客様から提供が遅いとのクレームがあった。"
    ),
]


def test_a_folder_is_the_embedded_backend_and_hands_out_typed_storage(tmp_path: Path) -> None:
    with tansaku.connect(tmp_path / "home", embedder=HashEmbedder(32)) as ts:
        assert isinstance(ts.backend, EmbeddedBackend)
        ts.ingest_records(RECORDS, collection="faq")
        col = ts.collection("faq")
        assert isinstance(col.handles, CollectionStorage)
        assert isinstance(col.store, RecordStore) and isinstance(col.units, UnitIndex)
        assert ts.backend.names() == ["faq"] and ts.backend.exists("faq")


def test_an_unknown_url_scheme_is_refused_with_the_known_ones(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("TANSAKU_HOME", str(tmp_path / "home"))
    assert is_url("http://localhost:6333") and not is_url("./.tansaku") and not is_url("C:/x")
    with pytest.raises(ConfigError, match="gopher://db:70"):
        tansaku.connect("gopher://db:70")


def test_a_registered_scheme_gets_the_url_and_the_local_workspace(
    tmp_path: Path, monkeypatch
) -> None:
    monkeypatch.setenv("TANSAKU_HOME", str(tmp_path / "local"))
    seen: list[tuple[str, Path]] = []

    def factory(url: str, ws: Workspace) -> EmbeddedBackend:
        seen.append((url, ws.home))
        return EmbeddedBackend(Workspace(tmp_path / "remote"))

    register_scheme("tansaku-test", factory)
    with tansaku.connect("tansaku-test://store:1", embedder=HashEmbedder(32)) as ts:
        ts.ingest_records(RECORDS, collection="faq")
        assert ts.search("冷蔵庫", collection="faq").hits[0].doc_id == "r1"
    assert seen == [("tansaku-test://store:1", (tmp_path / "local").resolve())]
    assert (tmp_path / "remote" / "collections" / "faq" / "CURRENT").is_file()
    assert isinstance(backend_for(tmp_path, Workspace(tmp_path)), EmbeddedBackend)


def test_services_are_frozen_and_swapped_whole(tmp_path: Path) -> None:
    class Upper(RuleExpander):
        pass

    with tansaku.connect(tmp_path / "home", embedder=HashEmbedder(32)) as ts:
        ts.ingest_records(RECORDS, collection="faq")
        before = ts.services
        with pytest.raises(dataclasses.FrozenInstanceError):
            before.expander = Upper()  # type: ignore[misc]
        after = ts.with_services(expander=Upper())
        assert ts.services is after and isinstance(after.expander, Upper)
        assert not isinstance(before.expander, Upper)  # a running search keeps its own
        ts.search("冷蔵庫", collection="faq")  # adds the embedder by a new swap, not in place
        assert ts.services.embedder is not None and after.embedder is None
        ts.services = SearchServices()
        assert ts.services.events is None

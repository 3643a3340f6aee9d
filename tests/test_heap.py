"""A loaded server's objects are frozen out of the cyclic collector's walks; what is made
afterwards is collected as before, and only a process that serves and nothing else freezes."""

from __future__ import annotations

import gc
import time
import weakref
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

import tansaku
from tansaku.heap import freeze_loaded, trim
from tansaku.records import Record
from tansaku.server import ServerSettings, create_app
from tansaku.testing import HashEmbedder


class Node:
    """An object in a reference cycle (only the cyclic collector frees it)."""

    def __init__(self, label: str) -> None:
        self.label = label
        self.other: Node | None = None


@pytest.fixture
def unfrozen() -> Iterator[None]:
    """Leave the test process as it was: nothing frozen."""
    gc.unfreeze()
    try:
        yield
    finally:
        gc.unfreeze()


def test_freezing_keeps_loaded_objects_and_still_collects_what_comes_after(unfrozen) -> None:
    loaded = {"辞書": ["形態素"] * 3}
    frozen = freeze_loaded()
    assert frozen > 1000  # the interpreter's and pytest's objects, with ``loaded``
    assert gc.get_freeze_count() == frozen
    assert gc.is_tracked(loaded) and loaded["辞書"] == ["形態素"] * 3

    a, b = Node("日報"), Node("掲示板")  # a cycle made after the freeze
    a.other, b.other = b, a
    gone = weakref.ref(a)
    del a, b
    gc.collect()
    assert gone() is None  # the collector still walks the objects made afterwards

    kept = weakref.ref(Node("手順書"))  # no cycle: reference counting frees it at once
    assert kept() is None
    trim()  # gives back free C heap; nothing to assert beyond not failing


def _loaded(client: TestClient, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if client.get("/healthz").json()["checks"]["model"]["loaded"]:
            return
        time.sleep(0.05)
    raise AssertionError("the server's model did not load")


@pytest.mark.parametrize("freeze", [True, False])
def test_a_server_freezes_once_warmed_up_only_when_asked(
    tmp_path: Path, unfrozen, freeze: bool
) -> None:
    home = tmp_path / "ws"
    with tansaku.connect(home, embedder=HashEmbedder(32)) as client:
        text = "冷蔵庫の温度は毎朝確認し、5度を超えたら店長に報告します。"
        record = Record(id="fridge:body", doc_id="fridge", field="body", text=text)
        client.ingest_records([record], collection="manuals")
        app = create_app(client, settings=ServerSettings(), ui=False, freeze_heap=freeze)
        with TestClient(app, base_url="http://127.0.0.1") as http:
            _loaded(http)
            deadline = time.monotonic() + 30
            while freeze and not gc.get_freeze_count() and time.monotonic() < deadline:
                time.sleep(0.05)  # the warm-up thread freezes right after loading
            assert (gc.get_freeze_count() > 0) is freeze
            body = {"query": "冷蔵庫の温度", "collection": "manuals"}
            answer = http.post("/api/search", json=body)
            assert answer.status_code == 200
            assert answer.json()["hits"][0]["doc_id"] == "fridge"

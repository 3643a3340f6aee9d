"""Functions taking a bundle of keyword options (``**options: Unpack[SomeOptions]``) refuse a
keyword the bundle does not declare, as Python does for a plain signature: a misspelt option
fails at once instead of being ignored."""

from __future__ import annotations

import pytest

import tansaku
from tansaku.agent import ask
from tansaku.agent.model_guard import ModelGuard
from tansaku.ingest.bulk import bulk_ingest, bulk_ingest_records
from tansaku.search.rerank_http import HttpReranker
from tansaku.testing import HashEmbedder, ScriptedChatModel
from tansaku.tools import toolset


@pytest.fixture
def client(tmp_path):
    ts = tansaku.connect(tmp_path / "ws", embedder=HashEmbedder(32))
    yield ts
    ts.close()


def test_toolset_and_ask_refuse_an_unknown_scope_keyword(client) -> None:
    with pytest.raises(
        TypeError, match="toolset\\(\\) got an unexpected keyword argument 'colections'"
    ):
        toolset(client, colections=["reports"])
    with pytest.raises(TypeError, match="ask\\(\\) got an unexpected keyword argument 'taem'"):
        ask(client, "新宿店の冷蔵庫の修理はいつでしたか", taem="shinjuku")
    assert toolset(client, team="shinjuku").specs  # the declared keywords still work


def test_bulk_ingest_refuses_an_unknown_keyword_before_reading_anything(client, tmp_path) -> None:
    with pytest.raises(
        TypeError, match="bulk_ingest\\(\\) got an unexpected keyword argument 'sink'"
    ):
        bulk_ingest(client, [tmp_path / "無い.csv"], collection="reports", sink=True)
    with pytest.raises(TypeError, match=r"bulk_ingest_records\(\) got .* 'tema'"):
        bulk_ingest_records(client, iter([]), collection="reports", tema="honbu")
    assert not client.has_collection("reports")


def test_a_model_guard_and_a_reranker_refuse_unknown_options() -> None:
    with pytest.raises(TypeError, match=r"ModelGuard\(\) got .* 'pause'"):
        ModelGuard(ScriptedChatModel([]), timeout=1.0, cache_size=4, pause=30)
    reranker = HttpReranker("http://127.0.0.1:9", protocol="tei")
    with pytest.raises(TypeError, match=r"rerank\(\) got .* 'top_k'"):
        reranker.rerank("冷蔵庫の修理", ["冷蔵庫を修理した", "レジを交換した"], top_k=1)

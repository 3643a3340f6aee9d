"""The embedding-model guard: a collection embedded with one model refuses searches and ingests
that would use another, with a message naming both models and the way out; collections
without a dense axis are not affected; a collection whose state records no model is adopted
by its first writer."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest

import tansaku
from tansaku.backends.embedded import generations
from tansaku.config import Axis, AxisMode, CollectionConfig
from tansaku.embed import OpenAIEmbedder, RemoteOptions
from tansaku.errors import EmbedderMismatch
from tansaku.testing import HashEmbedder
from tansaku.testing.fake_embedding_server import FakeEmbeddingServer

from .conftest import API_KEY, records

BM25_ONLY = CollectionConfig(name="plain", axes=(Axis(name="bm25", mode=AxisMode.BM25),))


def remote(server: FakeEmbeddingServer, model: str) -> OpenAIEmbedder:
    return OpenAIEmbedder(
        base_url=f"{server.url}/v1",
        model=model,
        api_key=API_KEY,
        options=RemoteOptions(batch_size=8, concurrency=1, timeout=5.0, backoff_s=0.01),
    )


def test_a_search_with_another_model_of_the_same_dimension_is_refused(
    server: FakeEmbeddingServer, tmp_path: Path
) -> None:
    home = tmp_path / "ws"
    with tansaku.connect(home, embedder=remote(server, "model-a")) as ts:
        ts.ingest_records(records(), collection="reports")
        before = [h.doc_id for h in ts.search("冷蔵庫の温度", collection="reports").hits]
        assert before[0] in ("r0", "r1")
    with tansaku.connect(home, embedder=remote(server, "model-b")) as ts:
        sent = len(server.embedding_requests)
        with pytest.raises(EmbedderMismatch) as caught:
            ts.search("冷蔵庫の温度", collection="reports")
        assert len(server.embedding_requests) == sent  # refused before the query is embedded
        message = str(caught.value)
        assert "「openai/model-a」(32次元)" in message
        assert "「openai/model-b」" in message  # its dimension unknown before a request
        assert "`tansaku reembed reports`" in message and "検索" in message
        assert caught.value.recorded == "openai/model-a"
        # the sparse axis alone compares no vectors: still allowed
        bm25 = (Axis(name="bm25", mode=AxisMode.BM25),)
        hits = ts.search("冷蔵庫の温度", collection="reports", axes=bm25).hits
        assert hits and hits[0].doc_id in ("r0", "r1")
    with tansaku.connect(home, embedder=remote(server, "model-a")) as ts:  # configured back
        assert [h.doc_id for h in ts.search("冷蔵庫の温度", collection="reports").hits] == before


def test_an_ingest_with_another_model_is_refused_before_anything_is_written(
    tmp_path: Path,
) -> None:
    home = tmp_path / "ws"
    with tansaku.connect(home, embedder=HashEmbedder(32)) as ts:
        ts.ingest_records(records(), collection="reports", team="shinjuku")
        col_dir = ts.workspace.collection_dir("reports")
        committed = generations.current(col_dir)
    other = HashEmbedder(48)
    with tansaku.connect(home, embedder=other) as ts:
        new = records(["ランチの売上が前年を上回った。"], prefix="n")
        with pytest.raises(EmbedderMismatch, match="この取り込みはモデル「hash-ngram-48」"):
            ts.ingest_records(new, collection="reports", team="shinjuku")
        assert other.texts_embedded == 0  # refused before embedding, too
        assert generations.current(col_dir) == committed
        assert sorted(p.name for p in (col_dir / "gens").iterdir()) == [committed.name]
        col = ts.collection("reports")
        assert col.store.count("shinjuku") == len(records())
        assert col.state.embedder == "hash-ngram-32" and col.state.dim == 32


def test_collections_without_a_dense_axis_are_not_affected(tmp_path: Path) -> None:
    home = tmp_path / "ws"
    with tansaku.connect(home, embedder=HashEmbedder(32)) as ts:
        ts.ingest_records(records(), collection="plain", config=BM25_ONLY)
    with tansaku.connect(home, embedder=HashEmbedder(48)) as ts:
        more = records(["唐揚げの仕込みが間に合わなかった。"], prefix="n")
        report = ts.ingest_records(more, collection="plain")
        assert report.inserted == 1 and report.embedded == 0
        hits = ts.search("唐揚げ", collection="plain").hits
        assert hits[0].doc_id in ("n0", "r6")


def test_a_collection_that_recorded_no_model_is_adopted_by_its_first_writer(
    tmp_path: Path,
) -> None:
    home = tmp_path / "ws"
    with tansaku.connect(home, embedder=HashEmbedder(32)) as ts:
        ts.ingest_records(records()[:5], collection="reports")
        gen = generations.current(ts.workspace.collection_dir("reports"))
    assert gen is not None
    state = json.loads((gen / "state.json").read_text(encoding="utf-8"))
    state["embedder"], state["dim"] = "", 0  # as written before the state recorded a model
    (gen / "state.json").write_text(json.dumps(state, ensure_ascii=False), encoding="utf-8")
    with tansaku.connect(home, embedder=HashEmbedder(32)) as ts:
        assert ts.collection("reports").state.embedder == ""
        ts.search("冷蔵庫", collection="reports")  # nothing recorded: nothing to refuse
        ts.ingest_records(records()[5:], collection="reports")
        col = ts.collection("reports")
        assert (col.state.embedder, col.state.dim) == ("hash-ngram-32", 32)
        assert col.store.count("default") == len(records())
    with tansaku.connect(home, embedder=HashEmbedder(48)) as ts, pytest.raises(EmbedderMismatch):
        ts.search("冷蔵庫", collection="reports")


def test_the_server_answers_409_with_the_message(tmp_path: Path) -> None:
    from tansaku.server import ServerSettings, create_app

    from .live import live_server

    home = tmp_path / "ws"
    with tansaku.connect(home, embedder=HashEmbedder(32)) as ts:
        ts.ingest_records(records(), collection="reports")
    client = tansaku.connect(home, embedder=HashEmbedder(48))
    app = create_app(client, settings=ServerSettings(), keys=None, warm_up=False, ui=False)
    try:
        with live_server(app) as base_url, httpx.Client(base_url=base_url, timeout=60) as http:
            r = http.post("/api/search", json={"query": "冷蔵庫の温度", "collection": "reports"})
            assert r.status_code == 409
            error = r.json()["error"]
            assert error["code"] == "embedder_mismatch"
            assert "hash-ngram-32" in error["message"] and "tansaku reembed" in error["message"]
            axes = [{"name": "bm25", "mode": "bm25"}]
            bm25 = {"query": "冷蔵庫の温度", "collection": "reports", "axes": axes}
            assert http.post("/api/search", json=bm25).status_code == 200
    finally:
        client.close()

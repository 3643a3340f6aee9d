"""A workspace whose embedder is a remote server: ingest and search through tansaku.connect,
with the fake OpenAI-compatible server answering over HTTP."""

from __future__ import annotations

import pytest

import tansaku
from tansaku.config import Axis, AxisMode, CollectionConfig
from tansaku.embed import OpenAIEmbedder
from tansaku.records import Record

from .support import API_KEY, TEXTS, fast

pytestmark = pytest.mark.integration

CONFIG = CollectionConfig(
    name="reports",
    axes=(
        Axis(name="bm25", mode=AxisMode.BM25, weight=0.5),
        Axis(name="dense", mode=AxisMode.DENSE, weight=0.5),
    ),
)


def records() -> list[Record]:
    return [Record(id=f"r{i}#0", doc_id=f"r{i}", field="body", text=t) for i, t in enumerate(TEXTS)]


def test_ingest_and_search_through_a_remote_embedder(server, tmp_path) -> None:
    emb = OpenAIEmbedder(
        base_url=f"{server.url}/v1", model="fake-e5", api_key=API_KEY, options=fast()
    )
    home = tmp_path / "home"
    with tansaku.connect(home, embedder=emb) as ts:
        report = ts.ingest_records(records(), collection="reports", config=CONFIG)
        assert report.embedded == len(TEXTS)
        assert server.texts_embedded >= len(TEXTS)
        hits = ts.search("冷蔵庫の温度が上がらない", collection="reports", top_k=3).hits
        assert hits[0].doc_id in ("r0", "r1")
        dense_only = (Axis(name="dense", mode=AxisMode.DENSE),)
        dense = ts.search("冷蔵庫の温度", collection="reports", axes=dense_only, top_k=2).hits
        assert {h.doc_id for h in dense} == {"r0", "r1"}
        col = ts.collection("reports")
        assert col.state.embedder == "openai/fake-e5" and col.state.dim == 32
    embedded_once = server.texts_embedded
    reopened = OpenAIEmbedder(
        base_url=f"{server.url}/v1", model="fake-e5", api_key=API_KEY, options=fast(), dim=32
    )
    with tansaku.connect(home, embedder=reopened) as ts:
        again = ts.ingest_records(records(), collection="reports")
        assert again.embedded == 0  # unchanged text: nothing re-embedded, nothing sent
    assert server.texts_embedded == embedded_once


def test_an_ingest_stopped_by_a_dead_server_resumes_without_re_embedding(server, tmp_path) -> None:
    from tansaku.embed import EmbeddingError
    from tansaku.testing.fake_embedding_server import Fault

    emb = OpenAIEmbedder(
        base_url=f"{server.url}/v1",
        model="fake-e5",
        api_key=API_KEY,
        dim=32,
        options=fast(batch_size=3, concurrency=1),
    )
    home = tmp_path / "home"
    server.fail_next(Fault(), Fault(), *[Fault(status=503)] * 4)  # two batches, then down
    with tansaku.connect(home, embedder=emb) as ts:
        with pytest.raises(EmbeddingError, match="HTTP 503"):
            ts.ingest_records(records(), collection="reports", config=CONFIG)
        sent_before = server.texts_embedded
        assert sent_before == 6
        report = ts.ingest_records(records(), collection="reports", config=CONFIG)
        assert report.embedded == len(TEXTS) - 6  # the two answered batches came from the cache
        assert server.texts_embedded == len(TEXTS)
        assert ts.collection("reports").store.count("default") == len(TEXTS)


def test_a_workspace_configured_in_tansaku_toml(server, tmp_path, monkeypatch) -> None:
    from tansaku.embed import load_embedder

    home = tmp_path / "home"
    home.mkdir()
    (home / "tansaku.toml").write_text(
        f'[embedder]\nprovider = "tei"\nbase_url = "{server.url}/v1"\nmodel = "fake-e5"\n'
        'api_key_env = "FAKE_TEI_KEY"\nbatch_size = 4\nconcurrency = 2\n',
        encoding="utf-8",
    )
    monkeypatch.setenv("FAKE_TEI_KEY", API_KEY)
    assert load_embedder(home) is not None
    with tansaku.connect(home) as ts:  # connect() loads the configured embedder itself
        ts.ingest_records(records(), collection="reports", config=CONFIG)
        hits = ts.search("食洗機の水漏れ", collection="reports", top_k=1).hits
        assert hits[0].doc_id == "r4"
        assert ts.collection("reports").state.embedder == "openai/fake-e5"
    assert [len(r.texts) for r in server.embedding_requests[1:4]] == [4, 4, 2]
    sent = server.texts_embedded
    with tansaku.connect(home, create=False) as ts:  # a read command's fresh connection
        assert ts.search("食洗機の水漏れ", collection="reports", top_k=1).hits[0].doc_id == "r4"
    assert server.texts_embedded == sent  # the query vector came from the cache

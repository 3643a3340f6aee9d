"""GeminiEmbedder against the fake server's batchEmbedContents over HTTP."""

from __future__ import annotations

import numpy as np
import pytest

from tansaku.embed import EmbeddingError, GeminiEmbedder
from tansaku.testing.fake_embedding_server import FakeEmbeddingServer, Fault, fake_vector

from .support import API_KEY, TEXTS, fast


def embedder(srv: FakeEmbeddingServer, **kwargs) -> GeminiEmbedder:
    kwargs.setdefault("options", fast())
    kwargs.setdefault("api_key", API_KEY)
    return GeminiEmbedder(base_url=srv.url, **kwargs)


def test_queries_and_passages_use_their_task_types(server) -> None:
    emb = embedder(server, dimensions=24)
    docs = emb.embed_passages(TEXTS)
    query = emb.embed_queries(["冷蔵庫の温度"])
    assert docs.shape == (10, 24) and query.shape == (1, 24)
    assert np.allclose(docs, np.stack([fake_vector(t, 24) for t in TEXTS]), atol=1e-6)
    reqs = server.embedding_requests
    assert reqs[0].path == "/v1beta/models/gemini-embedding-001:batchEmbedContents"
    tasks = {item["taskType"] for r in reqs[:-1] for item in r.body["requests"]}
    assert tasks == {"RETRIEVAL_DOCUMENT"}
    assert reqs[-1].body["requests"][0]["taskType"] == "RETRIEVAL_QUERY"
    assert reqs[-1].body["requests"][0]["outputDimensionality"] == 24
    assert reqs[-1].headers["x-goog-api-key"] == API_KEY
    # the batches go out concurrently: their order on the wire is the scheduler's
    assert sorted(len(r.texts) for r in reqs[:-1]) == [2, 4, 4]
    assert emb.name == "gemini/gemini-embedding-001@24" and emb.dim == 24


def test_a_429_with_retry_info_is_retried(server) -> None:
    emb = embedder(server)
    server.fail_next(Fault(status=429, retry_after=0.05))
    assert emb.embed_passages(["売り切れ"]).shape == (1, 32)
    assert emb.stats == {"requests": 2, "retries": 1}


def test_a_server_that_stays_down_is_named(server) -> None:
    server.fail_next(*[Fault(status=503)] * 4)
    with pytest.raises(EmbeddingError) as err:
        embedder(server).embed_queries(["売り切れ"])
    assert f"{server.url}/v1beta/models/gemini-embedding-001:batchEmbedContents" in str(err.value)
    assert "HTTP 503" in str(err.value) and len(server.embedding_requests) == 4


def test_timeouts_are_retried_then_reported(server) -> None:
    emb = embedder(server, options=fast(timeout=0.3, max_retries=1))
    server.fail_next(Fault(delay_s=1.0), Fault(delay_s=1.0))
    with pytest.raises(EmbeddingError, match="時間内に応答しませんでした") as err:
        emb.embed_queries(["研修"])
    assert err.value.timed_out and err.value.attempts == 2


def test_a_bad_key_and_too_big_a_batch_are_refused_at_once(server) -> None:
    with pytest.raises(EmbeddingError, match="APIキーを確認") as err:
        embedder(server, api_key="AIza-wrong").embed_queries(["x"])
    assert "AIza-wrong" not in str(err.value)
    server.max_batch = 100  # Gemini's limit
    with pytest.raises(EmbeddingError, match="at most 100 requests"):
        embedder(server, options=fast(batch_size=101)).embed_passages(["あ"] * 101)


def test_no_key_anywhere_is_a_clear_error(server, monkeypatch) -> None:
    monkeypatch.delenv("GEMINI_API_KEY", raising=False)
    monkeypatch.delenv("GOOGLE_API_KEY", raising=False)
    with pytest.raises(EmbeddingError, match="GEMINI_API_KEY"):
        GeminiEmbedder(base_url=server.url, options=fast()).embed_queries(["x"])
    assert server.embedding_requests == []

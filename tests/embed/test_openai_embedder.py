"""OpenAIEmbedder against the fake server over HTTP: batching, parallel requests, retries,
checks and the errors a user reads."""

from __future__ import annotations

import re
import threading

import numpy as np
import pytest

from tansaku.embed import CachedEmbedder, EmbeddingError, OpenAIEmbedder, RemoteOptions
from tansaku.embed.openai_compat import default_prefixes, retry_after
from tansaku.errors import ConfigError
from tansaku.testing.fake_embedding_server import FakeEmbeddingServer, Fault, fake_vector

from .support import API_KEY, TEXTS, fast


def embedder(srv: FakeEmbeddingServer, **kwargs) -> OpenAIEmbedder:
    kwargs.setdefault("options", fast())
    kwargs.setdefault("api_key", API_KEY)
    kwargs.setdefault("model", "fake-embed")
    return OpenAIEmbedder(base_url=f"{srv.url}/v1", **kwargs)


def test_vectors_are_the_servers_in_input_order_and_unit_length(server) -> None:
    emb = embedder(server)
    vecs = emb.embed_passages(TEXTS)
    assert vecs.shape == (10, 32) and vecs.dtype == np.float32
    assert np.allclose(np.linalg.norm(vecs, axis=1), 1.0, atol=1e-6)
    expected = np.stack([fake_vector(t, 32) for t in TEXTS])
    assert np.allclose(vecs, expected, atol=1e-6)
    assert emb.dim == 32 and emb.name == "openai/fake-embed"
    q = emb.embed_queries(["冷蔵庫の温度"])[0]
    assert int(np.argmax(vecs @ q)) in (0, 1)  # the two fridge reports come first


def test_batches_split_by_batch_size(server) -> None:
    emb = embedder(server, options=fast(batch_size=4, concurrency=1))
    emb.embed_passages(TEXTS)
    sent = [r.texts for r in server.embedding_requests]
    assert [len(t) for t in sent] == [4, 4, 2]
    assert [t for batch in sent for t in batch] == TEXTS
    assert all(r.body["model"] == "fake-embed" for r in server.embedding_requests)


def test_parallel_batches_never_exceed_the_concurrency_limit(server) -> None:
    server.gather = 3  # the first requests wait for each other: overlap whatever the timing
    emb = embedder(server, options=fast(batch_size=1, concurrency=3))
    vecs = emb.embed_passages(TEXTS)
    assert np.allclose(vecs, np.stack([fake_vector(t, 32) for t in TEXTS]), atol=1e-6)
    assert server.max_in_flight == 3
    server.reset()
    server.latency_s = 0.05
    threads = [threading.Thread(target=emb.embed_queries, args=([t],)) for t in TEXTS]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert 1 <= server.max_in_flight <= 3  # the bound holds across calling threads too
    emb.close()


def test_e5_models_get_their_prefixes_and_a_name_that_says_so(server) -> None:
    emb = embedder(server, model="intfloat/multilingual-e5-large")
    emb.embed_queries(["冷蔵庫"])
    emb.embed_passages(["冷蔵庫が壊れた"])
    sent = [r.texts for r in server.embedding_requests]
    assert sent == [("query: 冷蔵庫",), ("passage: 冷蔵庫が壊れた",)]
    assert emb.name == "openai/intfloat/multilingual-e5-large+e5"
    plain = embedder(
        server, model="intfloat/multilingual-e5-large", query_prefix="", passage_prefix=""
    )
    assert plain.name == "openai/intfloat/multilingual-e5-large"
    custom = embedder(server, model="bge-m3", query_prefix="検索: ")
    assert custom.name.startswith("openai/bge-m3+p") and custom.name != plain.name


def test_dimensions_are_requested_and_part_of_the_name(server) -> None:
    emb = embedder(server, model="text-embedding-3-small", dimensions=16)
    assert emb.dim == 16 and emb.name == "openai/text-embedding-3-small@16"
    assert emb.embed_queries(["在庫"]).shape == (1, 16)
    assert server.embedding_requests[-1].body["dimensions"] == 16


@pytest.mark.parametrize("fmt", ["base64", "float"])
def test_both_encodings(server, fmt) -> None:
    vecs = embedder(server, encoding_format=fmt).embed_passages(TEXTS[:3])
    assert server.embedding_requests[-1].body["encoding_format"] == fmt
    assert np.allclose(vecs, np.stack([fake_vector(t, 32) for t in TEXTS[:3]]), atol=1e-6)


def test_empty_input_and_blank_texts(server) -> None:
    emb = embedder(server, dim=32)
    assert emb.embed_passages([]).shape == (0, 32)
    assert emb.embed_passages(["", "  ", "本文"]).shape == (3, 32)
    assert server.embedding_requests[-1].texts == (" ", " ", "本文")  # servers refuse ""


def test_a_429_is_retried_after_the_servers_wait(server) -> None:
    emb = embedder(server)
    server.fail_next(Fault(status=429, retry_after=0.05))
    vecs = emb.embed_queries(["唐揚げ"])
    assert vecs.shape == (1, 32)
    assert emb.stats == {"requests": 2, "retries": 1}


def test_three_retries_then_success(server) -> None:
    server.fail_next(Fault(status=500), Fault(status=503), Fault(status=502))
    assert embedder(server).embed_queries(["レジ"]).shape == (1, 32)
    assert len(server.embedding_requests) == 4


def test_a_server_that_stays_down_gives_a_clear_error_naming_the_endpoint(server) -> None:
    server.fail_next(*[Fault(status=500)] * 4)
    emb = embedder(server)
    with pytest.raises(EmbeddingError) as err:
        emb.embed_queries(["レジ"])
    message = str(err.value)
    assert f"{server.url}/v1/embeddings" in message and "HTTP 500" in message
    assert "4 回試行" in message and API_KEY not in message
    assert err.value.status == 500 and err.value.attempts == 4
    assert len(server.embedding_requests) == 4  # one try and three retries, no more


def test_a_request_past_the_timeout_is_retried_then_fails(server) -> None:
    emb = embedder(server, options=fast(timeout=0.3))
    server.fail_next(Fault(delay_s=1.0))
    assert emb.embed_queries(["駐車場"]).shape == (1, 32)  # the retry answers in time
    server.fail_next(*[Fault(delay_s=1.0)] * 4)
    with pytest.raises(EmbeddingError) as err:
        emb.embed_queries(["駐車場"])
    assert err.value.timed_out and "時間内に応答しませんでした(0.3 秒)" in str(err.value)


def test_wrong_dimension_and_missing_vectors_are_refused_without_retry(server) -> None:
    emb = embedder(server, dim=32)
    server.fail_next(Fault(wrong_dim=16))
    with pytest.raises(EmbeddingError, match=re.escape("次元が 16 です(32 のはず)")):
        emb.embed_queries(["研修"])
    server.fail_next(Fault(drop=1))
    with pytest.raises(EmbeddingError, match="2 件のテキストに 1 件のベクトル"):
        emb.embed_passages(["研修", "売り切れ"])
    assert len(server.embedding_requests) == 2


def test_a_learned_dimension_guards_later_answers(server) -> None:
    emb = embedder(server)
    assert emb.dim == 32  # learned from a one-text probe
    server.fail_next(Fault(wrong_dim=64))
    with pytest.raises(EmbeddingError, match="次元が 64 です"):
        emb.embed_passages(["看板"])


def test_auth_and_batch_limit_errors_tell_what_to_fix(server) -> None:
    with pytest.raises(EmbeddingError, match="APIキーを確認") as err:
        embedder(server, api_key="wrong-key").embed_queries(["x"])
    assert "wrong-key" not in str(err.value) and err.value.attempts == 1
    server.max_batch = 2
    with pytest.raises(EmbeddingError, match="batch_size を小さく"):
        embedder(server, options=fast(batch_size=3)).embed_passages(TEXTS[:3])


def test_an_unreachable_server_is_named() -> None:
    srv = FakeEmbeddingServer().start()
    url = srv.url
    srv.close()  # nothing listens on that port any more
    emb = OpenAIEmbedder(base_url=f"{url}/v1", model="m", options=fast(max_retries=1))
    with pytest.raises(EmbeddingError, match="接続できません") as err:
        emb.embed_queries(["x"])
    assert str(err.value).startswith(f"埋め込みサーバー {url}/v1/embeddings:")


def test_the_cache_avoids_a_second_call(server, tmp_path) -> None:
    emb = embedder(server)
    cached = CachedEmbedder(emb, tmp_path / "cache.sqlite")
    first = cached.embed_passages(TEXTS)
    calls = len(server.embedding_requests)
    again = cached.embed_passages(TEXTS)
    assert len(server.embedding_requests) == calls and np.array_equal(first, again)
    cached.close()
    reopened = CachedEmbedder(embedder(server), tmp_path / "cache.sqlite")
    reopened.embed_passages(TEXTS[::-1])
    assert len(server.embedding_requests) == calls and reopened.embedded == 0
    reopened.embed_passages(["新しい報告です"])
    assert server.embedding_requests[-1].texts == ("新しい報告です",)


def test_bad_settings_name_the_value() -> None:
    with pytest.raises(ConfigError, match="batch_size は 1 以上"):
        RemoteOptions(batch_size=0)
    with pytest.raises(ConfigError, match="max_retries は 0 から 3"):
        RemoteOptions(max_retries=5)
    with pytest.raises(ConfigError, match="http:// か https://"):
        OpenAIEmbedder(base_url="gpu-box:8080", model="m")
    with pytest.raises(ConfigError, match="encoding_format"):
        OpenAIEmbedder(model="m", encoding_format="int8")


def test_backoff_doubles_honours_the_hint_and_stops_at_the_cap() -> None:
    opts = RemoteOptions(backoff_s=1.0, max_backoff_s=10.0)
    assert 0.75 <= opts.delay(1, None) <= 1.25
    assert 3.0 <= opts.delay(3, None) <= 5.0
    assert opts.delay(1, 7.0) == 7.0
    assert opts.delay(1, 60.0) == 10.0


def test_the_cache_hands_over_enough_texts_for_parallel_batches(server, tmp_path) -> None:
    server.gather = 4  # in chunks of 32 (the cache's own) only 2 could ever be in flight
    emb = embedder(server, options=fast(batch_size=16, concurrency=4))
    assert emb.call_size == 64
    cached = CachedEmbedder(emb, tmp_path / "cache.sqlite")
    texts = [f"{i}番目の日報: {TEXTS[i % len(TEXTS)]}" for i in range(64)]
    cached.embed_passages(texts)
    assert server.max_in_flight == 4
    assert [len(r.texts) for r in server.embedding_requests] == [16] * 4
    cached.close()


@pytest.mark.parametrize(
    ("model", "prefixed"),
    [
        ("intfloat/multilingual-e5-large", True),
        ("multilingual-e5-small", True),
        ("intfloat/e5-base-v2", True),
        ("intfloat/multilingual-e5-large-instruct", False),
        ("intfloat/e5-mistral-7b-instruct", False),
        ("text-embedding-3-small", False),
        ("bge-m3", False),
    ],
)
def test_which_models_get_e5_prefixes(model, prefixed) -> None:
    assert default_prefixes(model) == (("query: ", "passage: ") if prefixed else ("", ""))


def test_retry_after_reads_every_form() -> None:
    assert retry_after({"retry-after-ms": "250", "retry-after": "1"}) == 0.25
    assert retry_after({"retry-after": "3"}) == 3.0
    assert retry_after({"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"}) == 0.0  # in the past
    assert retry_after({"retry-after": "そのうち"}) is None
    assert retry_after({}) is None


def test_the_endpoint_in_messages_has_no_credentials() -> None:
    emb = OpenAIEmbedder(base_url="https://user:pw@gpu-box:8443/v1/?key=abc", model="m")
    assert emb.endpoint == "https://gpu-box:8443/v1/embeddings"

"""The fake embedding server speaks the OpenAI and Gemini protocols as the real servers do."""

from __future__ import annotations

import base64
import json
import urllib.error
import urllib.request

import numpy as np
import pytest

from tansaku.testing.fake_embedding_server import FakeEmbeddingServer, Fault, fake_vector

from .support import API_KEY


def post(url: str, body: object, headers: dict[str, str] | None = None) -> tuple[int, dict]:
    data = json.dumps(body, ensure_ascii=False).encode("utf-8")
    req = urllib.request.Request(
        url, data=data, headers={"Content-Type": "application/json", **(headers or {})}
    )
    try:
        with urllib.request.urlopen(req, timeout=5) as resp:
            return resp.status, json.loads(resp.read())
    except urllib.error.HTTPError as err:
        return err.code, json.loads(err.read())


AUTH = {"Authorization": f"Bearer {API_KEY}"}


def test_similar_japanese_texts_get_near_vectors() -> None:
    a = fake_vector("冷蔵庫の温度が上がらない", 256)
    b = fake_vector("冷蔵庫の温度が下がらない", 256)
    c = fake_vector("駐車場の案内看板", 256)
    assert a.dtype == np.float32 and abs(float(np.linalg.norm(a)) - 1.0) < 1e-6
    assert float(a @ b) > 0.6 > float(a @ c)
    assert np.array_equal(a, fake_vector("冷蔵庫の温度が上がらない", 256))  # deterministic


def test_openai_float_and_base64_carry_the_same_vector(server: FakeEmbeddingServer) -> None:
    url = f"{server.url}/v1/embeddings"
    body = {"model": "e5", "input": ["料理が冷めていた", "駐車場"]}
    status, plain = post(url, {**body, "encoding_format": "float"}, AUTH)
    assert status == 200 and plain["object"] == "list" and plain["model"] == "e5"
    assert [d["index"] for d in plain["data"]] == [0, 1]
    status, packed = post(url, {**body, "encoding_format": "base64"}, AUTH)
    raw = np.frombuffer(base64.b64decode(packed["data"][0]["embedding"]), dtype="<f4")
    assert np.allclose(raw, plain["data"][0]["embedding"])
    assert np.allclose(raw, fake_vector("料理が冷めていた", 32))
    status, single = post(url, {"model": "e5", "input": "一件だけ", "dimensions": 8}, AUTH)
    assert status == 200 and len(single["data"][0]["embedding"]) == 8


def test_openai_rejects_what_the_real_api_rejects(server: FakeEmbeddingServer) -> None:
    url = f"{server.url}/v1/embeddings"
    assert post(url, {"model": "e5", "input": ["x"]})[0] == 401
    status, body = post(url, {"model": "e5", "input": [""]}, AUTH)
    assert status == 400 and "empty" in body["error"]["message"]
    assert post(url, {"input": ["x"]}, AUTH)[0] == 400
    assert post(url, {"model": "e5", "input": ["x"], "encoding_format": "int8"}, AUTH)[0] == 400
    server.max_batch = 2
    status, body = post(url, {"model": "e5", "input": ["a", "b", "c"]}, AUTH)
    assert status == 413 and "maximum allowed batch size 2" in body["error"]["message"]


def test_scripted_faults_are_used_once_each_in_order(server: FakeEmbeddingServer) -> None:
    url = f"{server.url}/v1/embeddings"
    body = {"model": "e5", "input": ["a b", "c d"], "encoding_format": "float"}
    server.fail_next(Fault(status=429, retry_after=0.25), Fault(wrong_dim=5), Fault(drop=1))
    req = urllib.request.Request(
        url, data=json.dumps(body).encode(), headers={"Content-Type": "application/json", **AUTH}
    )
    with pytest.raises(urllib.error.HTTPError) as err:
        urllib.request.urlopen(req, timeout=5)
    assert err.value.code == 429
    assert err.value.headers["Retry-After"] == "1"
    assert err.value.headers["retry-after-ms"] == "250"
    assert len(post(url, body, AUTH)[1]["data"][0]["embedding"]) == 5
    assert len(post(url, body, AUTH)[1]["data"]) == 1
    assert len(post(url, body, AUTH)[1]["data"]) == 2  # the script is used up
    assert [r.texts for r in server.embedding_requests] == [("a b", "c d")] * 4


def test_gemini_batch_and_single_endpoints(server: FakeEmbeddingServer) -> None:
    base = f"{server.url}/v1beta/models/gemini-embedding-001"
    key = {"x-goog-api-key": API_KEY}
    item = {
        "model": "models/gemini-embedding-001",
        "content": {"parts": [{"text": "冷蔵庫"}], "role": "user"},
        "taskType": "RETRIEVAL_DOCUMENT",
        "outputDimensionality": 12,
    }
    status, body = post(f"{base}:batchEmbedContents", {"requests": [item, item]}, key)
    assert status == 200 and [len(e["values"]) for e in body["embeddings"]] == [12, 12]
    one = {k: v for k, v in item.items() if k != "model"}
    status, body = post(f"{base}:embedContent", one, key)
    assert status == 200 and len(body["embedding"]["values"]) == 12
    status, body = post(f"{base}:embedContent", one, {"x-goog-api-key": "wrong"})
    assert status == 400 and body["error"]["status"] == "INVALID_ARGUMENT"
    server.max_batch = 1
    status, body = post(f"{base}:batchEmbedContents", {"requests": [item, item]}, key)
    assert status == 400 and "at most 1 requests" in body["error"]["message"]
    server.fail_next(Fault(status=429, retry_after=7))
    status, body = post(f"{base}:embedContent", one, key)
    assert status == 429 and body["error"]["status"] == "RESOURCE_EXHAUSTED"
    assert body["error"]["details"][0]["retryDelay"] == "7s"


def test_service_rate_holds_one_batch_at_a_time() -> None:
    with FakeEmbeddingServer(dim=8, rate=1000.0) as srv:
        for _ in range(3):
            post(f"{srv.url}/v1/embeddings", {"model": "m", "input": ["あ"] * 50})
        assert srv.texts_embedded == 150
        assert srv.busy_s > 0 and srv.max_in_flight == 1


def test_stats_and_reset_over_http(server: FakeEmbeddingServer) -> None:
    post(f"{server.url}/v1/embeddings", {"model": "m", "input": ["あい", "うえ"]}, AUTH)
    with urllib.request.urlopen(f"{server.url}/stats", timeout=5) as resp:
        stats = json.loads(resp.read())
    assert stats["requests"] == 1 and stats["texts_embedded"] == 2
    assert post(f"{server.url}/reset", {})[1]["texts_embedded"] == 0
    assert server.requests == []

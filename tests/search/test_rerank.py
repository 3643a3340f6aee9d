"""Rerank clients and the fallback logic, against the local fake server (real HTTP, no mocks)."""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest

import tansaku
from tansaku.config import CollectionConfig
from tansaku.errors import ConfigError
from tansaku.search.rerank import (
    CohereReranker,
    HttpReranker,
    RerankError,
    RerankOutcome,
    RerankScore,
    rerank_candidates,
    reranker_from_config,
)
from tansaku.testing import HashEmbedder
from tansaku.testing.fake_rerank_server import FakeRerankServer, bigram_overlap

QUERY = "料理の温度が低いというクレーム"
DOCS = [
    "駐車場は店舗裏に10台分あります。満車のときは近隣のコインパーキングをご案内してください。",
    "料理の温度が低い、冷めているというクレームには、まずお詫びし、すぐに作り直しを提案します。",
    "冷蔵庫の温度は毎日開店前と閉店後に確認し、衛生管理表に記録します。",
    "クレームを受けたら店長に報告し、報告書を当日中に作成します。",
]
# The query has 14 character bigrams; DOCS[1] shares 13 (all but いと), DOCS[3] クレ/レー/ーム,
# DOCS[2] の温/温度, DOCS[0] none.
EXPECTED = [RerankScore(1, 13 / 14), RerankScore(3, 3 / 14), RerankScore(2, 2 / 14)]
EXPECTED_ALL = [*EXPECTED, RerankScore(0, 0.0)]


@pytest.fixture
def server() -> Iterator[FakeRerankServer]:
    with FakeRerankServer() as srv:
        yield srv


@pytest.fixture(autouse=True)
def _no_cohere_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CO_API_KEY", raising=False)
    monkeypatch.delenv("COHERE_API_KEY", raising=False)


def _clients(url: str, api_key: str = "test-key") -> dict[str, HttpReranker | CohereReranker]:
    return {
        "cohere": CohereReranker(api_key=api_key, base_url=url),
        "tei": HttpReranker(url, protocol="tei", api_key=api_key),
        "openai": HttpReranker(url, protocol="openai", model="bge-reranker-v2-m3", api_key=api_key),
    }


def _post(url: str, raw: bytes) -> tuple[int, object]:
    req = urllib.request.Request(url, data=raw, headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=5) as resp:
            return resp.status, json.loads(resp.read())
    except urllib.error.HTTPError as err:
        return err.code, json.loads(err.read())


# -- round trips ----------------------------------------------------------------------------------


def test_bigram_scorer_hand_computed() -> None:
    assert bigram_overlap("温度が低い", "温度が高い") == 2 / 4
    assert bigram_overlap("", "何か") == 0.0
    assert [bigram_overlap(QUERY, d) for d in DOCS] == [0.0, 13 / 14, 2 / 14, 3 / 14]


@pytest.mark.parametrize(
    ("protocol", "path"), [("cohere", "/v2/rerank"), ("tei", "/rerank"), ("openai", "/v1/rerank")]
)
def test_each_protocol_round_trips_and_reorders(
    server: FakeRerankServer, protocol: str, path: str
) -> None:
    reranker = _clients(server.url)[protocol]
    assert reranker.rerank(QUERY, DOCS) == EXPECTED_ALL
    (req,) = server.requests
    assert (req.path, req.protocol) == (path, protocol)
    assert req.headers["Content-Type"] == "application/json"


def test_request_bodies_match_each_api(server: FakeRerankServer) -> None:
    clients = _clients(server.url)
    for reranker in clients.values():
        reranker.rerank(QUERY, DOCS)
    cohere, tei, openai = (r.body for r in server.requests)
    assert cohere == {"model": "rerank-v3.5", "query": QUERY, "documents": DOCS}
    assert tei == {"query": QUERY, "texts": DOCS, "raw_scores": False, "truncate": True}
    assert openai == {"query": QUERY, "documents": DOCS, "model": "bge-reranker-v2-m3"}
    assert clients["cohere"].name == "cohere:rerank-v3.5"
    assert clients["openai"].name == "openai:bge-reranker-v2-m3"


@pytest.mark.parametrize("protocol", ["cohere", "tei", "openai"])
def test_top_n(server: FakeRerankServer, protocol: str) -> None:
    assert _clients(server.url)[protocol].rerank(QUERY, DOCS, top_n=2) == EXPECTED[:2]
    body = server.requests[-1].body
    assert body.get("top_n") == (None if protocol == "tei" else 2)  # TEI: the client cuts
    assert _clients(server.url)[protocol].rerank(QUERY, DOCS, top_n=10) == EXPECTED_ALL
    with pytest.raises(RerankError, match="top_n"):
        _clients(server.url)[protocol].rerank(QUERY, DOCS, top_n=0)


@pytest.mark.parametrize("suffix", ["", "/", "/v1", "/v1/", "/v1/rerank"])
def test_openai_base_url_with_or_without_v1(server: FakeRerankServer, suffix: str) -> None:
    reranker = HttpReranker(server.url + suffix)
    assert reranker.url == server.url + "/v1/rerank"
    assert reranker.rerank(QUERY, DOCS, top_n=1) == EXPECTED[:1]


def test_endpoint_paths() -> None:
    assert CohereReranker(api_key="k", base_url="http://h:1/v2").url == "http://h:1/v2/rerank"
    assert HttpReranker("http://h:1/", protocol="tei").url == "http://h:1/rerank"
    assert HttpReranker("http://h:1/rerank", protocol="openai").url == "http://h:1/rerank"


def test_custom_scorer_and_empty_documents(server: FakeRerankServer) -> None:
    server.scorer = lambda query, doc: 1.0 if "報告" in doc else 0.5 if "駐車場" in doc else 0.0
    tei = HttpReranker(server.url, protocol="tei")
    assert tei.rerank(QUERY, DOCS) == [
        RerankScore(3, 1.0),
        RerankScore(0, 0.5),
        RerankScore(1, 0.0),
        RerankScore(2, 0.0),
    ]
    assert tei.rerank(QUERY, []) == []
    assert len(server.requests) == 1  # no request for nothing


# -- authentication -------------------------------------------------------------------------------


@pytest.mark.parametrize("protocol", ["cohere", "tei", "openai"])
def test_auth_header_sent_and_401_handled(protocol: str) -> None:
    with FakeRerankServer(api_key="secret") as srv:
        assert _clients(srv.url, api_key="secret")[protocol].rerank(QUERY, DOCS) == EXPECTED_ALL
        assert srv.requests[-1].headers["Authorization"] == "Bearer secret"
        with pytest.raises(RerankError, match="認証に失敗しました") as info:
            _clients(srv.url, api_key="wrong")[protocol].rerank(QUERY, DOCS)
        assert info.value.status == 401
        outcome = rerank_candidates(_clients(srv.url, api_key="wrong")[protocol], QUERY, DOCS)
        assert not outcome.applied
        assert "HTTP 401" in outcome.reason
        no_key = HttpReranker(srv.url, protocol="tei")
        with pytest.raises(RerankError, match="401"):
            no_key.rerank(QUERY, DOCS)
        assert "Authorization" not in srv.requests[-1].headers


def test_cohere_api_key_from_env(monkeypatch: pytest.MonkeyPatch) -> None:
    with FakeRerankServer(api_key="from-env") as srv:
        monkeypatch.setenv("COHERE_API_KEY", "from-env")
        CohereReranker(base_url=srv.url).rerank(QUERY, DOCS)
        assert srv.requests[-1].headers["Authorization"] == "Bearer from-env"
        monkeypatch.setenv("CO_API_KEY", "co-first")  # CO_API_KEY wins
        with pytest.raises(RerankError, match="401"):
            CohereReranker(base_url=srv.url).rerank(QUERY, DOCS)
        assert srv.requests[-1].headers["Authorization"] == "Bearer co-first"


def test_cohere_without_key_is_a_japanese_error() -> None:
    with pytest.raises(RerankError, match="CO_API_KEY") as info:
        CohereReranker()
    assert info.value.provider == "cohere"
    assert "APIキーがありません" in str(info.value)


def test_repr_never_shows_the_key() -> None:
    assert "s3cret" not in repr(CohereReranker(api_key="s3cret"))
    assert "s3cret" not in repr(HttpReranker("http://h:1", api_key="s3cret"))


# -- timeouts and failures ------------------------------------------------------------------------


def test_timeout_falls_back_within_budget(server: FakeRerankServer) -> None:
    server.delay_s = 5.0
    started = time.monotonic()
    outcome = rerank_candidates(_clients(server.url)["tei"], QUERY, DOCS, budget_s=0.3)
    assert time.monotonic() - started < 0.3 + 2.0
    assert outcome == RerankOutcome(
        (0, 1, 2, 3), (None,) * 4, False, outcome.reason, outcome.elapsed_ms
    )
    assert "リランカーが時間内に応答しませんでした" in outcome.reason
    assert server.requests[-1].body["texts"] == DOCS


def test_client_timeout_raises_timed_out(server: FakeRerankServer) -> None:
    server.delay_s = 5.0
    with pytest.raises(RerankError, match="時間内に応答しませんでした") as info:
        HttpReranker(server.url, timeout=0.2).rerank(QUERY, DOCS)
    assert info.value.timed_out


@pytest.mark.parametrize(
    ("misbehaviour", "expected"),
    [
        ({"status": 500}, "HTTP 500"),
        ({"status": 503}, "サーバーエラー"),
        ({"status": 429}, "レート制限"),
        ({"malformed": True}, "JSON ではありません"),
        ({"malformed": "shape"}, "形式が正しくありません"),
        ({"bad_index": True}, "範囲外の index"),
        ({"duplicate_index": True}, "重複"),
    ],
)
@pytest.mark.parametrize("protocol", ["cohere", "tei", "openai"])
def test_failures_fall_back_with_a_reason(
    server: FakeRerankServer, protocol: str, misbehaviour: dict[str, object], expected: str
) -> None:
    for key, value in misbehaviour.items():
        setattr(server, key, value)
    reranker = _clients(server.url)[protocol]
    with pytest.raises(RerankError, match=expected):
        reranker.rerank(QUERY, DOCS)
    outcome = rerank_candidates(reranker, QUERY, DOCS)
    assert (outcome.order, outcome.scores, outcome.applied) == ((0, 1, 2, 3), (None,) * 4, False)
    assert expected in outcome.reason
    assert protocol in outcome.reason  # names the provider


def test_unreachable_server_falls_back() -> None:
    with FakeRerankServer() as srv:
        url = srv.url
    outcome = rerank_candidates(HttpReranker(url), QUERY, DOCS, budget_s=1.0)
    assert not outcome.applied
    assert "接続できません" in outcome.reason


def test_wrong_protocol_for_server_is_a_404_hint(server: FakeRerankServer) -> None:
    with pytest.raises(RerankError, match="base_url と protocol"):
        HttpReranker(server.url + "/api", protocol="tei").rerank(QUERY, DOCS)


# -- rerank_candidates ----------------------------------------------------------------------------


def test_rerank_candidates_applies_scores(server: FakeRerankServer) -> None:
    outcome = rerank_candidates(_clients(server.url)["openai"], QUERY, DOCS)
    assert outcome.applied and outcome.reason == ""
    assert outcome.order == (1, 3, 2, 0)
    assert outcome.scores == (0.0, 13 / 14, 2 / 14, 3 / 14)
    assert outcome.elapsed_ms >= 0
    assert "top_n" not in server.requests[-1].body  # every candidate is scored


def test_max_candidates_sends_only_the_first_n(server: FakeRerankServer) -> None:
    texts = [DOCS[0], DOCS[2], DOCS[3], DOCS[1], "予約の変更は前日までに電話で受け付けます。"]
    outcome = rerank_candidates(_clients(server.url)["tei"], QUERY, texts, max_candidates=3)
    assert server.requests[-1].body["texts"] == texts[:3]
    assert outcome.order == (2, 1, 0, 3, 4)  # reranked first three, then the rest in order
    assert outcome.scores == (0.0, 2 / 14, 3 / 14, None, None)


class ListReranker:
    """A fake implementing the Reranker protocol with a fixed answer (or error)."""

    def __init__(self, answer: object) -> None:
        self.answer = answer

    @property
    def name(self) -> str:
        return "list"

    def rerank(
        self,
        query: str,
        documents: Sequence[str],
        *,
        top_n: int | None = None,
        timeout: float | None = None,
    ) -> list[RerankScore]:
        if isinstance(self.answer, Exception):
            raise self.answer
        return self.answer  # type: ignore[return-value]


def test_unscored_candidates_follow_in_original_order() -> None:
    outcome = rerank_candidates(ListReranker([RerankScore(2, 0.9)]), QUERY, DOCS)
    assert outcome.order == (2, 0, 1, 3)
    assert outcome.scores == (None, None, 0.9, None)


def test_ties_keep_the_rerankers_order() -> None:
    answer = [RerankScore(3, 0.5), RerankScore(0, 0.5), RerankScore(1, 0.7)]
    assert rerank_candidates(ListReranker(answer), QUERY, DOCS).order == (1, 3, 0, 2)


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        ([RerankScore(4, 0.9)], "範囲外の index 4"),
        ([RerankScore(-1, 0.9)], "範囲外の index -1"),
        ([RerankScore(1, 0.9), RerankScore(1, 0.8)], "重複"),
        ([RerankScore(1, float("nan"))], "有限の数値"),
        (None, "戻り値が不正"),
        (ValueError("model crashed"), "model crashed"),
        (RerankError("list", "壊れました"), "壊れました"),
    ],
)
def test_custom_reranker_failures_never_raise(answer: object, expected: str) -> None:
    outcome = rerank_candidates(ListReranker(answer), QUERY, DOCS)
    assert (outcome.order, outcome.applied) == ((0, 1, 2, 3), False)
    assert expected in outcome.reason


def test_empty_input(server: FakeRerankServer) -> None:
    outcome = rerank_candidates(_clients(server.url)["cohere"], QUERY, [])
    assert (outcome.order, outcome.scores, outcome.applied) == ((), (), False)
    assert outcome.reason
    assert server.requests == []


@pytest.mark.parametrize(
    ("kwargs", "match"), [({"max_candidates": 0}, "max_candidates"), ({"budget_s": 0}, "budget_s")]
)
def test_rerank_candidates_validates_arguments(kwargs: dict[str, float], match: str) -> None:
    with pytest.raises(ConfigError, match=match):
        rerank_candidates(ListReranker([]), QUERY, DOCS, **kwargs)  # type: ignore[arg-type]


# -- validation -----------------------------------------------------------------------------------


def test_protocol_validation_lists_valid_values() -> None:
    with pytest.raises(RerankError, match=r"tei, openai.*'grpc'"):
        HttpReranker("http://localhost:8080", protocol="grpc")
    assert HttpReranker("http://localhost:8080", protocol=" TEI ").protocol.value == "tei"


@pytest.mark.parametrize("bad", ["localhost:8080", "", "ftp://h/"])
def test_base_url_validation(bad: str) -> None:
    with pytest.raises(RerankError, match="base_url"):
        HttpReranker(bad)


def test_timeout_validation() -> None:
    with pytest.raises(RerankError, match="timeout"):
        HttpReranker("http://h:1", timeout=0)


@pytest.mark.parametrize(
    ("path", "body", "status", "key"),
    [
        ("/v2/rerank", {"query": QUERY, "documents": DOCS}, 400, "message"),  # no model
        ("/v2/rerank", {"model": "m", "query": QUERY, "documents": [1]}, 400, "message"),
        ("/rerank", {"query": QUERY}, 422, "error"),
        ("/rerank", {"query": QUERY, "texts": []}, 422, "error"),
        ("/v1/rerank", {"documents": DOCS}, 422, "detail"),
        ("/v1/rerank", {"query": QUERY, "documents": DOCS, "top_n": -1}, 422, "detail"),
    ],
)
def test_fake_server_validates_bodies(
    server: FakeRerankServer, path: str, body: dict[str, object], status: int, key: str
) -> None:
    code, payload = _post(server.url + path, json.dumps(body).encode("utf-8"))
    assert code == status
    assert isinstance(payload, dict) and payload[key]


def test_fake_server_rejects_non_json_and_unknown_paths(server: FakeRerankServer) -> None:
    assert _post(server.url + "/v2/rerank", b"{not json")[0] == 400
    assert _post(server.url + "/v1/rerank", b"")[0] == 422
    assert _post(server.url + "/v3/rerank", b"{}")[0] == 404
    with urllib.request.urlopen(server.url + "/health", timeout=5) as resp:
        assert resp.status == 200
    assert [r.path for r in server.requests] == ["/v2/rerank", "/v1/rerank", "/v3/rerank"]


# -- configuration --------------------------------------------------------------------------------


@pytest.mark.parametrize("cfg", [None, {}, {"enabled": False}, {"enabled": True, "budget_s": 1}])
def test_config_without_provider_is_none(cfg: dict[str, object] | None) -> None:
    assert reranker_from_config(cfg) is None


def test_config_builds_each_provider(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MY_RERANK_KEY", "k")
    cohere = reranker_from_config(
        {"provider": "cohere", "api_key_env": "MY_RERANK_KEY", "timeout": 5, "enabled": True}
    )
    assert isinstance(cohere, CohereReranker)
    assert (cohere.url, cohere.timeout, cohere.name) == (
        "https://api.cohere.com/v2/rerank",
        5.0,
        "cohere:rerank-v3.5",
    )
    tei = reranker_from_config({"provider": "tei", "base_url": "http://localhost:8080"})
    assert isinstance(tei, HttpReranker) and tei.url == "http://localhost:8080/rerank"
    for alias in ("openai", "vllm", "infinity"):
        r = reranker_from_config({"provider": alias, "base_url": "http://h:8000/v1", "model": "m"})
        assert isinstance(r, HttpReranker)
        assert (r.url, r.name) == ("http://h:8000/v1/rerank", "openai:m")


def test_config_reranker_end_to_end(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RERANK_TOKEN", "tok")
    with FakeRerankServer(api_key="tok") as srv:
        cfg = {"provider": "openai", "base_url": srv.url, "api_key_env": "RERANK_TOKEN"}
        reranker = reranker_from_config(cfg)
        assert reranker is not None
        outcome = rerank_candidates(reranker, QUERY, DOCS, max_candidates=50, budget_s=2.0)
        assert outcome.applied and outcome.order == (1, 3, 2, 0)


@pytest.mark.parametrize(
    ("cfg", "match"),
    [
        ({"provider": "openai-compatible", "base_url": "http://h"}, "cohere, tei, openai"),
        ({"provider": "tei"}, "base_url が必要"),
        ({"base_url": "http://h"}, "provider がありません"),
        ({"provider": "tei", "base_url": "http://h", "api_key": "x"}, "api_key_env"),
        ({"provider": "tei", "base_url": "http://h", "timeout": 0}, "timeout"),
        ({"provider": "tei", "base_url": "http://h", "timeout": "5"}, "timeout"),
        ({"provider": 3}, "provider は文字列"),
        ({"enabled": "yes"}, "enabled"),
        ({"max_candidates": 0}, "max_candidates"),
        ({"budget_s": -1}, "budget_s"),
    ],
)
def test_config_errors_are_japanese(cfg: dict[str, object], match: str) -> None:
    with pytest.raises(ConfigError, match=match):
        reranker_from_config(cfg)


def test_config_missing_key_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("NOT_SET_ANYWHERE", raising=False)
    with pytest.raises(RerankError, match="NOT_SET_ANYWHERE"):
        reranker_from_config({"provider": "cohere", "api_key_env": "NOT_SET_ANYWHERE"})
    with pytest.raises(RerankError, match="CO_API_KEY"):
        reranker_from_config({"provider": "cohere"})


# -- in the search pipeline -----------------------------------------------------------------------


def test_search_pipeline_reranks_and_falls_back(tmp_path: Path) -> None:
    # A scorer that disagrees with fusion, so the reorder is visible.
    with FakeRerankServer(scorer=lambda q, d: 1.0 if "駐車場" in d else 0.0) as srv:
        cfg = CollectionConfig(
            name="manuals", rerank={"enabled": True, "provider": "tei", "base_url": srv.url}
        )
        records = [
            tansaku.Record(id=f"m{i}:body", doc_id=f"m{i}", field="body", text=text)
            for i, text in enumerate(DOCS)
        ]
        with tansaku.connect(tmp_path / "h", embedder=HashEmbedder(16)) as client:
            client.ingest_records(records, collection="manuals", config=cfg)
            plain = client.search(QUERY, collection="manuals", rerank=False)
            assert plain.plan.rerank is None and plain.hits[0].record.text != DOCS[0]
            res = client.search(QUERY, collection="manuals")
            assert res.plan.rerank is not None and res.plan.rerank.applied is True
            assert res.plan.rerank.model == f"tei:{srv.url}/rerank"
            assert res.hits[0].record.text == DOCS[0] and res.hits[0].rerank_score == 1.0
            assert srv.requests[-1].body["texts"] == [h.record.text for h in plain.hits]
            srv.status = 500
            failed = client.search(QUERY, collection="manuals")
            assert failed.plan.rerank is not None and failed.plan.rerank.applied is False
            assert "HTTP 500" in failed.plan.rerank.reason
            assert [h.record.id for h in failed.hits] == [h.record.id for h in plain.hits]
            assert all(h.rerank_score is None for h in failed.hits)

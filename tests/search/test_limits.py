"""Limits of a search request: checked when it is built, before anything is read."""

from __future__ import annotations

import pytest

import tansaku
from tansaku.config import CollectionConfig
from tansaku.errors import InvalidRequest, QueryTooLong, TansakuError
from tansaku.search.limits import MAX_QUERY_CHARS, MAX_TOP_K, control_characters
from tansaku.testing import HashEmbedder


def _request(**kw):
    return tansaku.SearchRequest(collection="reports", **{"query": "冷蔵庫の故障", **kw})


def _connect(home):
    client = tansaku.connect(home, embedder=HashEmbedder(16))
    client.ingest_records(
        [
            tansaku.Record(
                id="r1:body", doc_id="r1", field="body", text="冷蔵庫の故障で食材を廃棄しました"
            )
        ],
        collection="reports",
    )
    return client


@pytest.fixture(scope="module")
def ts(tmp_path_factory):
    client = _connect(tmp_path_factory.mktemp("limits"))
    yield client
    client.close()


def test_query_over_length_cap_is_rejected(ts):
    assert MAX_QUERY_CHARS == 1000
    query = "冷蔵庫の故障について" * 101  # 1,010 characters
    with pytest.raises(QueryTooLong) as info:
        ts.search(query, collection="reports")
    assert info.value.length == 1010 and info.value.limit == 1000
    assert "1,010文字" in str(info.value) and "上限 1,000文字" in str(info.value)
    assert isinstance(info.value, InvalidRequest) and isinstance(info.value, TansakuError)
    assert ts.search(query[:1000], collection="reports").hits  # at the cap: searched
    raised = ts.search(query, collection="reports", max_query_chars=2000)  # a caller may raise it
    assert raised.hits


def test_control_characters_in_queries_are_rejected(ts):
    for query in ("\x1b[31m冷蔵庫\x1b[0m", "冷蔵庫\x07", "冷蔵庫\x9b2J", "冷蔵庫\x00"):
        with pytest.raises(InvalidRequest, match="制御文字"):
            ts.search(query, collection="reports")
    with pytest.raises(InvalidRequest, match="U\\+001B"):
        _request(query="\x1b]0;title\x07冷蔵庫")
    # tab and newline are whitespace in a pasted query
    assert ts.search("冷蔵庫の\n故障\tについて", collection="reports").hits
    assert control_characters("a\x1bb\x1b\x07\t\n") == ["\x1b", "\x07"]


@pytest.mark.parametrize("value", [float("nan"), float("inf"), float("-inf")])
def test_min_score_nan_is_rejected(ts, value):
    with pytest.raises(InvalidRequest, match="min_score"):
        ts.search("冷蔵庫", collection="reports", min_score=value)


def test_min_score_nan_in_the_config_is_rejected(tmp_path):
    with _connect(tmp_path / "home") as client:
        cfg = CollectionConfig(name="reports", min_score=float("nan"))
        client.create_collection(cfg, replace_config=True)
        with pytest.raises(InvalidRequest, match="min_score"):
            client.search("冷蔵庫", collection="reports")


@pytest.mark.parametrize("team", ["a/b", "../x", "", "チーム", "a b"])
def test_team_with_slash_is_rejected(ts, team):
    with pytest.raises(InvalidRequest, match="チーム名"):
        ts.search("冷蔵庫", collection="reports", team=team)


@pytest.mark.parametrize("top_k", [0, -1, MAX_TOP_K + 1])
def test_top_k_is_capped(top_k):
    with pytest.raises(InvalidRequest, match="top_k"):
        _request(top_k=top_k)
    assert _request(top_k=MAX_TOP_K).top_k == MAX_TOP_K


def test_candidates_are_capped():
    with pytest.raises(InvalidRequest, match="candidates"):
        _request(candidates=100_001)


def test_invalid_request_is_still_a_value_error():
    with pytest.raises(ValueError):
        _request(top_k=0)


def test_where_must_be_a_sequence_of_expressions():
    with pytest.raises(InvalidRequest, match="where"):
        _request(where="cost=3")
    assert _request(where=["cost=3"]).where == ("cost=3",)


@pytest.mark.parametrize("query", ["", "   ", "\u3000\n"])
def test_a_blank_query_is_refused_as_the_cli_refuses_it(query: str) -> None:
    from tansaku.search.types import SearchRequest

    with pytest.raises(InvalidRequest, match="検索クエリが空です"):
        SearchRequest(query=query, collection="manuals")

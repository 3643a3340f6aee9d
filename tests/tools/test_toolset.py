"""Tools from typed functions: schemas, scope bound at build time, JSON results, errors as JSON.
The demo's daily reports and the bundled manuals, with the deterministic embedder."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path

import pytest

import tansaku
from tansaku.demo.reports import generate, write_reports_jsonl
from tansaku.testing import HashEmbedder
from tansaku.text.dates import TOKYO
from tansaku.tools import parameters_of, toolset
from tansaku.tools.registry import MAX_RESULT_CHARS
from tansaku.tools.search import search_past_cases

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
NOW = datetime(2025, 12, 11, 9, 0, tzinfo=TOKYO)


@pytest.fixture(scope="module")
def ts(tmp_path_factory):
    home = tmp_path_factory.mktemp("tools")
    src = write_reports_jsonl(generate(NOW), home / "reports.jsonl")
    client = tansaku.connect(home / "ws", embedder=HashEmbedder(32))
    cfg = EXAMPLES / "configs"
    assert client.ingest([src], collection="reports", config=cfg / "reports.toml").ok
    assert client.ingest(
        [EXAMPLES / "manuals"], collection="manuals", config=cfg / "manuals.toml"
    ).ok
    secret = tansaku.Record(
        id="s:body", doc_id="s", field="body", text="他チームの冷蔵庫の故障の秘密の記録",
        metadata={"source_type": "daily_report", "date": "2025-12-10"},
    )  # fmt: skip
    client.ingest_records([secret], collection="reports", team="other")
    yield client
    client.close()


@pytest.fixture
def tools(ts):
    return toolset(ts, now=NOW)


def test_schema_derived_from_the_signature() -> None:
    schema = parameters_of(search_past_cases.fn)
    assert schema["required"] == ["query"] and schema["additionalProperties"] is False
    props = schema["properties"]
    assert props["query"]["type"] == "string" and props["query"]["description"]
    assert props["source_types"] == {
        "type": "array",
        "items": {"type": "string"},
        "description": "daily_report / bbs_post / bbs_comment",
    }
    assert props["top_k"]["type"] == "integer" and props["top_k"]["default"] == 5
    assert "scope" not in props and "team" not in props


def test_specs_for_a_chat_model(tools) -> None:
    names = [s.name for s in tools.specs]
    assert names == [
        "search_past_cases",
        "expand_and_search_cases",
        "search_manual",
        "list_rag_collections",
        "get_current_time",
        "search_rag_knowledge_base",  # notes / cards tools: only when those collections exist
    ]
    entry = tools.specs[0].to_openai()
    assert entry["type"] == "function" and entry["function"]["name"] == "search_past_cases"
    description = entry["function"]["description"]
    assert "使う場面" in description and "使わない場面" in description
    assert description.count('{"query"') >= 3  # at least three examples


def test_search_past_cases_returns_the_design_shape(tools) -> None:
    text = tools.call("search_past_cases", '{"query": "冷蔵庫の故障", "top_k": 3}')
    assert "冷蔵庫" in text  # ensure_ascii=False: Japanese as it is
    results = json.loads(text)
    assert 1 <= len(results) <= 3
    first = results[0]
    assert set(first) >= {"rank", "source", "date", "store", "author", "similarity", "content"}
    assert first["rank"] == 1 and first["similarity"].endswith("%")
    assert all("秘密" not in r["content"] for r in results)  # the other team never shows


def test_dates_and_source_types_filter(tools) -> None:
    args = {"query": "クレーム", "date_from": "2025-12-09", "date_to": "2025-12-09"}
    results = json.loads(tools.call("search_past_cases", args))
    assert results and {r["date"] for r in results} == {"2025-12-09"}
    posts = json.loads(
        tools.call("search_past_cases", {"query": "冷蔵庫", "source_types": ["bbs_post"]})
    )
    assert posts and {r["source"] for r in posts} == {"掲示板"}


def test_expand_and_search_cases(tools) -> None:
    out = json.loads(tools.call("expand_and_search_cases", {"query": "昨日の問題"}))
    assert out["original_query"] == "昨日の問題" and len(out["expanded_queries"]) > 1
    assert out["results"] and {r["date"] for r in out["results"]} == {"2025-12-10"}


def test_search_manual(tools) -> None:
    results = json.loads(tools.call("search_manual", {"query": "食中毒の予防方法"}))
    assert (
        results and results[0]["document"] and "食中毒" in json.dumps(results, ensure_ascii=False)
    )


def test_a_model_cannot_name_another_team(tools) -> None:
    out = json.loads(tools.call("search_past_cases", {"query": "秘密", "team": "other"}))
    assert "引数 team はありません" in out["error"]


@pytest.mark.parametrize(
    ("name", "arguments", "message"),
    [
        ("no_such_tool", {}, "ツール「no_such_tool」はありません"),
        ("search_past_cases", "{not json", "引数が正しくありません"),
        ("search_past_cases", {}, "引数 query が必要です"),
        ("search_past_cases", {"query": "a", "top_k": "many"}, "型が違います"),
        ("search_past_cases", {"query": "a", "date_from": "12/9"}, "YYYY-MM-DD"),
        ("search_past_cases", "[1, 2]", "JSON オブジェクト"),
    ],
)
def test_failures_are_japanese_json_errors(tools, name, arguments, message) -> None:
    out = json.loads(tools.call(name, arguments))
    assert set(out) == {"error"} and message in out["error"]


def test_quoted_numbers_from_small_models_are_accepted(tools) -> None:
    assert len(json.loads(tools.call("search_past_cases", {"query": "レジ", "top_k": "2"}))) <= 2


def test_results_fit_the_context(tools) -> None:
    text = tools.call("search_past_cases", {"query": "日報", "top_k": 20})
    assert len(text) <= MAX_RESULT_CHARS and json.loads(text)


def test_time_and_collections(tools, ts) -> None:
    now = json.loads(tools.call("get_current_time"))
    assert now == {
        "datetime": "2025-12-11T09:00:00+09:00",
        "date": "2025-12-11",
        "weekday": "木曜日",
        "timezone": "Asia/Tokyo",
    }
    listed = json.loads(tools.call("list_rag_collections", "{}"))["collections"]
    assert {c["name"] for c in listed} == {"reports", "manuals"}
    only = toolset(ts, team="other", collections={"reports": "reports"})
    assert [c["name"] for c in json.loads(only.call("list_rag_collections"))["collections"]] == [
        "reports"
    ]
    missing = json.loads(only.call("search_manual", {"query": "食中毒"}))
    assert "マニュアルのコレクションが設定されていません" in missing["error"]


@pytest.fixture(scope="module")
def tables(tmp_path_factory):
    pytest.importorskip("duckdb")
    from tansaku.demo.tables import install_demo_tables
    from tansaku.tables import TableDatabase, load_tables_config

    home = tmp_path_factory.mktemp("tables")
    install_demo_tables(home)  # the demo's daily reports for 2025-12-11
    with TableDatabase(load_tables_config(home / "tables.toml")) as db:
        yield db


def test_statistics_with_a_relative_period(ts, tables) -> None:
    tools = toolset(ts, now=NOW, tables=tables)
    out = json.loads(tools.call("get_claim_statistics", {"period": "先月"}))
    assert out["period"]["start_date"] == "2025-11-01" and out["period"]["end_date"] == "2025-11-30"
    assert out["summary"]["claim_count"] > 0 and out["period_expression"] == "先月"
    sales = json.loads(
        tools.call("get_sales_trend", {"date_from": "2025-12-01", "date_to": "2025-12-10"})
    )
    assert sales["summary"]["total_sales"] > 0
    both = json.loads(
        tools.call("get_cash_difference_analysis", {"period": "先週", "date_from": "2025-12-01"})
    )
    assert "同時に指定できません" in both["error"]


def test_the_store_comes_from_the_scope(ts, tables) -> None:
    mine = toolset(ts, now=NOW, tables=tables, store="新宿店")
    out = json.loads(mine.call("get_claim_statistics", {"period": "先月"}))
    assert out["store"] == "新宿店"
    refused = json.loads(mine.call("get_claim_statistics", {"period": "先月", "store": "渋谷店"}))
    assert "引数 store はありません" in refused["error"]


def test_sql_tools_come_from_the_registry(ts, tables) -> None:
    tools = toolset(ts, now=NOW, tables=tables)
    names = {s.name for s in tools.specs}
    assert {"search_stores", "compare_periods"} <= names
    ok = json.loads(
        tools.call("search_stores", {"sql_query": "SELECT store_name FROM stores LIMIT 2"})
    )
    assert ok["count"] == 2
    hidden = (
        "WITH RECURSIVE daily_reports AS (SELECT * FROM daily_reports) SELECT * FROM daily_reports"
    )
    assert "error" in json.loads(tools.call("search_stores", {"sql_query": hidden}))
    compared = json.loads(
        tools.call(
            "compare_periods",
            {
                "metric": "sales",
                "current_start": "2025-12-01",
                "current_end": "2025-12-07",
                "previous_start": "2025-11-24",
                "previous_end": "2025-11-30",
            },
        )
    )
    assert "error" not in compared
    bad = json.loads(tools.call("compare_periods", {"metric": "profit", "current_start": "x",
                                                    "current_end": "x", "previous_start": "x",
                                                    "previous_end": "x"}))  # fmt: skip
    assert "sales, claim_count, cash_diff" in bad["error"]


def test_the_design_merge_fields_and_a_real_similarity(tools) -> None:
    """expand_and_search_cases gives the restaurant design's hit_count, max_similarity and
    final_score (hit_count × 10 + max_similarity, best first); a similarity is the hit's cosine,
    not its fused score (which is 100% for every top hit); search_manual takes the design's
    plural category and a document_type."""
    out = json.loads(tools.call("expand_and_search_cases", {"query": "昨日の問題"}))
    rows = out["results"]
    assert rows and all({"hit_count", "max_similarity", "final_score"} <= set(r) for r in rows)
    scores = [float(r["final_score"]) for r in rows]
    assert scores == sorted(scores, reverse=True)
    for r in rows:
        best = float(r["max_similarity"].rstrip("%")) / 100
        assert float(r["final_score"]) == pytest.approx(r["hit_count"] * 10 + best, abs=0.006)
    assert out["source_types"] and set(out["source_types"]) <= {
        "daily_report",
        "bbs_post",
        "bbs_comment",
    }
    manual = json.loads(
        tools.call("search_manual", {"query": "クレームの受付", "category": "complaints"})
    )
    assert manual and {m["category"] for m in manual} == {"complaint"}
    assert all(m["document_type"] == "manual" for m in manual)


def test_a_model_is_offered_only_the_tools_of_its_collections(ts) -> None:
    """A scope without daily reports or manuals offers no search of them (a small model offered
    one calls it and answers 「設定されていません」); called by name they still say so."""
    only = toolset(ts, collections={"reports": "reports"})
    offered = {s.name for s in only.offered}
    assert "search_past_cases" in offered and "search_manual" not in offered
    assert "search_manual" in {s.name for s in only.specs}
    missing = json.loads(only.call("search_manual", {"query": "食中毒"}))
    assert "マニュアルのコレクションが設定されていません" in missing["error"]

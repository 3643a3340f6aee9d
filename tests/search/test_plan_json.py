"""The JSON of a search plan — ``search --json``, ``/api/search`` and the SEARCH_EVENT line — pinned
against ``data/plan_golden.json``, captured from the dict-based plan before ``SearchPlan`` replaced
it: expansion, synonyms, dates from the query and from the caller, ``where`` conditions, every
retry stage, RRF and linear fusion, and the reranker applied, failing, off and not configured.
(HashEmbedder and a local fake rerank server over HTTP: no model.)"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import replace
from datetime import date, datetime
from pathlib import Path
from typing import Any

import pytest

import tansaku
from tansaku.config import (
    CollectionConfig,
    FusionConfig,
    FusionMethod,
    QueryConfig,
    load_config,
)
from tansaku.demo.reports import generate, write_reports_jsonl
from tansaku.search.events import build_event
from tansaku.search.types import SearchResult
from tansaku.store.base import Filter
from tansaku.testing import HashEmbedder
from tansaku.testing.fake_rerank_server import FakeRerankServer
from tansaku.text.dates import TOKYO

NOW = datetime(2025, 12, 11, 9, 0, tzinfo=TOKYO)
CONFIGS = Path(__file__).resolve().parents[2] / "examples" / "configs"
GOLDEN = Path(__file__).resolve().parent / "data" / "plan_golden.json"
PINNED = FusionConfig(normalization="max", dense_gate=0.0, dense_length=0.0)
"""The fusion the golden plans were captured under (the default then); the plan of the
default fusion since (zscore, dense_gate, dense_length) is pinned in test_dense_gate,
test_dense_length and test_api."""
MANUALS = [
    "駐車場の清掃は毎朝開店前に行い、落ち葉とごみを回収する。",
    "冷蔵庫の温度は一日二回確認し、記録表に書き込む。",
    "レジの違算が出たときは店長に報告し、差額を日報に記入する。",
    "フライヤーの油は週に一度交換し、廃油は専用の缶に入れる。",
]


def _pinned(result: SearchResult) -> dict[str, Any]:
    """What the three formats carry of a plan. Left out: what a clock or the OS decides (times,
    ids, the fake server's port) and what the hits, not the plan, decide (scores of threads'
    floating-point sums)."""
    plan = result.to_dict()["plan"]
    event = build_event(result)
    for key in ("query_id", "ts", "timings_ms"):
        event.pop(key)
    for key in ("top5_scores", "top5_doc_ids", "hit_count", "zero_hit"):
        event[key] = "<hits>"
    for part in (plan, event):
        rerank = part.get("rerank")
        if isinstance(rerank, dict) and "elapsed_ms" in rerank:
            part["rerank"] = {**rerank, "elapsed_ms": "<elapsed>"}
    text = re.sub(
        r"127\.0\.0\.1:\d+", "127.0.0.1:<port>", json.dumps({"plan": plan, "event": event})
    )
    pinned: dict[str, Any] = json.loads(text)
    return pinned


def _reports(home: Path) -> Iterator[tuple[str, SearchResult]]:
    src = write_reports_jsonl(generate(NOW), home / "reports.jsonl")
    with tansaku.connect(home / "r", embedder=HashEmbedder(48)) as ts:
        # a budget no loaded machine runs out of: a timed-out variant would change the plan
        cfg = load_config(CONFIGS / "reports.toml", name="reports")
        cfg = replace(cfg, fusion=PINNED, query=replace(cfg.query, budget_ms=600_000))
        ts.ingest([src], collection="reports", config=cfg)
        yield "yesterday_vague", ts.search("昨日の問題", collection="reports", now=NOW)
        yield (
            "expand_off",
            ts.search("昨日の問題", collection="reports", now=NOW, expand=False),
        )
        yield (
            "caller_dates_win",
            ts.search(
                "昨日のクレーム",
                collection="reports",
                now=NOW,
                filter=Filter(date_from=date(2025, 12, 9), date_to=date(2025, 12, 9)),
            ),
        )
        yield (
            "where_and_any_of",
            ts.search(
                "レジの違算",
                collection="reports",
                now=NOW,
                where=("date>=2025-12-01", "customers>=10"),
                filter=Filter(fields=("body",), any_of={"store": ("新宿店", "渋谷店")}),
                top_k=3,
            ),
        )
        yield (
            "rrf_expanded_no_groups",
            ts.search(
                "冷蔵庫の故障",
                collection="reports",
                now=NOW,
                expand=True,
                fusion=FusionConfig(method=FusionMethod.RRF, k=30),
                group_by_doc=False,
                candidates=40,
                min_score=0.01,
                top_k=4,
            ),
        )


def _cards(home: Path) -> Iterator[tuple[str, SearchResult]]:
    cfg = CollectionConfig(
        name="cards",
        axes=(tansaku.Axis(name="kw", mode=tansaku.AxisMode.BM25, fields=("effect_1",)),),
        query=QueryConfig(synonyms=("cards",)),
        fusion=PINNED,
    )
    recs = [
        tansaku.Record(
            id="c1:effect_1",
            doc_id="c1",
            field="effect_1",
            text="相手のフォロワー1体を手札に戻す。",
            metadata={"class": "ウィッチ"},
        ),
        tansaku.Record(
            id="c2:combined",
            doc_id="c2",
            field="combined",
            text="ランダムな相手のフォロワー1体に2ダメージ。",
            metadata={"class": "エルフ"},
        ),
    ]
    with tansaku.connect(home / "c", embedder=HashEmbedder(16)) as ts:
        ts.ingest_records(recs, collection="cards", config=cfg)
        yield "retry_1", ts.search("ランダム ダメージ", collection="cards", now=NOW, synonyms=False)
        yield "retry_2", ts.search("バウンス", collection="cards", now=NOW, synonyms=False)
        yield (
            "retry_2_filtered",
            ts.search(
                "バウンス",
                collection="cards",
                now=NOW,
                synonyms=False,
                filter=Filter(equals={"class": "エルフ"}),
            ),
        )
        yield (
            "retry_off",
            ts.search("バウンス", collection="cards", now=NOW, synonyms=False, retry=False),
        )


def _manuals(home: Path) -> Iterator[tuple[str, SearchResult]]:
    records = [
        tansaku.Record(id=f"m{i}:body", doc_id=f"m{i}", field="body", text=text)
        for i, text in enumerate(MANUALS)
    ]
    with FakeRerankServer(scorer=lambda q, d: 1.0 if "駐車場" in d else 0.0) as srv:
        cfg = CollectionConfig(
            name="manuals",
            rerank={"enabled": True, "provider": "tei", "base_url": srv.url},
            fusion=PINNED,
        )
        with tansaku.connect(home / "m", embedder=HashEmbedder(16)) as ts:
            ts.ingest_records(records, collection="manuals", config=cfg)
            ts.ingest_records(
                records, collection="plain", config=CollectionConfig(name="plain", fusion=PINNED)
            )
            query = "昨日の駐車場の掃除"
            yield "dates_unused", ts.search(query, collection="manuals", now=NOW, rerank=False)
            yield "rerank_applied", ts.search(query, collection="manuals", now=NOW)
            srv.status = 500
            yield "rerank_failed", ts.search(query, collection="manuals", now=NOW)
            yield (
                "rerank_unconfigured",
                ts.search(query, collection="plain", now=NOW, rerank=True),
            )


def plan_cases(home: Path) -> dict[str, dict[str, Any]]:
    """Every pinned case, by name."""
    out: dict[str, dict[str, Any]] = {}
    for cases in (_reports(home), _cards(home), _manuals(home)):
        for name, result in cases:
            out[name] = _pinned(result)
    return out


def _text(data: Any) -> str:
    return json.dumps(data, ensure_ascii=False, indent=1) + "\n"


@pytest.fixture(scope="module")
def cases(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Any]]:
    return plan_cases(tmp_path_factory.mktemp("plans"))


def test_the_golden_covers_every_part_of_a_plan() -> None:
    golden = json.loads(GOLDEN.read_text(encoding="utf-8"))
    plans = [case["plan"] for case in golden.values()]
    assert any(len(p["expanded_queries"]) >= 3 for p in plans)
    assert any(p["synonyms"] for p in plans)
    assert {p["retry_stage"] for p in plans} == {0, 1, 2}
    assert any(p["date_range"] for p in plans) and any(p["date_unused"] for p in plans)
    assert {(p["date_filter"] or {}).get("source") for p in plans} == {None, "query", "filter"}
    assert {p["fusion"]["method"] for p in plans} == {"rrf", "linear"}
    assert {p["merge"] for p in plans} >= {None, "hits"}
    reranks = [p["rerank"] for p in plans if p["rerank"]]
    assert {r["applied"] for r in reranks} == {True, False} and len(reranks) == 3
    assert any(p["filter"].get("where") for p in plans)
    assert any(p["filter"].get("any_of") for p in plans)


@pytest.mark.parametrize(
    "name",
    [
        "yesterday_vague",
        "expand_off",
        "caller_dates_win",
        "where_and_any_of",
        "rrf_expanded_no_groups",
        "retry_1",
        "retry_2",
        "retry_2_filtered",
        "retry_off",
        "dates_unused",
        "rerank_applied",
        "rerank_failed",
        "rerank_unconfigured",
    ],
)
def test_plan_json_is_unchanged(cases: dict[str, dict[str, Any]], name: str) -> None:
    golden = json.loads(GOLDEN.read_text(encoding="utf-8"))
    # the text, not only the value: the order of the keys is part of the format
    assert _text(cases[name]) == _text(golden[name])

"""The query-understanding pipeline over generated daily reports (HashEmbedder: no model)."""

from __future__ import annotations

from datetime import date, datetime

import pytest

import tansaku
from tansaku.config import CollectionConfig, FusionConfig, QueryConfig
from tansaku.demo.reports import generate, write_reports_jsonl
from tansaku.search.classify import QueryLabel
from tansaku.search.events import read_events
from tansaku.search.plan import FilterPlan, SynonymPlan
from tansaku.store.base import Filter
from tansaku.testing import HashEmbedder
from tansaku.text.dates import TOKYO, DateRange

NOW = datetime(2025, 12, 11, 9, 0, tzinfo=TOKYO)
DAY = date(2025, 12, 10)  # 昨日
CONFIGS = __import__("pathlib").Path(__file__).resolve().parents[2] / "examples" / "configs"


@pytest.fixture(scope="module")
def ts(tmp_path_factory):
    home = tmp_path_factory.mktemp("pipe")
    src = write_reports_jsonl(generate(NOW), home / "reports.jsonl")
    client = tansaku.connect(home, embedder=HashEmbedder(48))
    report = client.ingest([src], collection="reports", config=CONFIGS / "reports.toml")
    assert report.ok and report.inserted > 300
    yield client
    client.close()


def test_yesterdays_problems(ts):
    res = ts.search("昨日の問題", collection="reports", now=NOW)
    plan = res.plan
    assert plan.classification.label is QueryLabel.VAGUE
    assert plan.date_range == DateRange(DAY, DAY, "昨日")
    expanded = plan.stage.expanded_queries
    assert len(expanded) >= 3 and expanded[0] == "2025-12-10の問題"
    assert all(q.startswith("2025-12-10の") for q in expanded)
    assert SynonymPlan("問題", ("トラブル", "クレーム", "事故", "不具合")) in plan.stage.synonyms
    assert plan.filter == FilterPlan(date_from=DAY, date_to=DAY)
    assert res.hits and {h.record.metadata["date"] for h in res.hits} == {"2025-12-10"}
    text = " ".join(h.record.text for h in res.hits[:5])
    assert "クレーム" in text and "故障" in text
    top = res.hits[0].to_dict()
    assert top["hit_count"] >= 2 and top["matched_queries"]


def test_expand_switches(ts):
    off = ts.search("昨日の問題", collection="reports", now=NOW, expand=False)
    assert off.plan.stage.expanded_queries == ()
    assert off.plan.date_range == DateRange(DAY, DAY, "昨日")
    on = ts.search("冷蔵庫の故障", collection="reports", now=NOW, expand=True)
    assert len(on.plan.stage.expanded_queries) >= 3


def test_caller_date_filter_wins_over_the_query(ts):
    res = ts.search(
        "昨日のクレーム",
        collection="reports",
        now=NOW,
        filter=Filter(date_from=date(2025, 12, 9), date_to=date(2025, 12, 9)),
    )
    assert res.plan.date_range is None
    assert {h.record.metadata["date"] for h in res.hits} == {"2025-12-09"}


def test_dates_do_not_filter_a_collection_without_dates(tmp_path):
    with tansaku.connect(tmp_path / "h", embedder=HashEmbedder(16)) as client:
        client.ingest_records(
            [tansaku.Record(id="m:body", doc_id="m", field="body", text="昨日の清掃手順")],
            collection="manuals",
        )
        res = client.search("昨日の清掃", collection="manuals", now=NOW)
        assert res.plan.date_range is None and res.hits


def test_zscore_fusion_keeps_every_candidate_the_merge_and_min_score(ts):
    z = FusionConfig(normalization="zscore", dense_gate=0.0)  # the normalisation alone
    kw = {"collection": "reports", "now": NOW, "expand": False, "top_k": 50}
    plain, zs = ts.search("冷蔵庫の故障", **kw), ts.search("冷蔵庫の故障", fusion=z, **kw)
    assert len(zs.hits) == len(plain.hits) == 50  # no candidate dropped below its legs' means
    assert all(0 < h.score < 1 for h in zs.hits)  # a tenth of the standard score
    assert zs.plan.fusion.normalization == "zscore"
    cut = zs.hits[4].score
    kept = ts.search("冷蔵庫の故障", fusion=z, min_score=cut, **kw)
    assert [h.doc_id for h in kept.hits] == [h.doc_id for h in zs.hits[:5]]
    merged = ts.search("昨日の問題", collection="reports", now=NOW, fusion=z)
    assert merged.plan.stage.expanded_queries  # hit_count × 10 still ranks first
    for kind in {h.record.metadata["source_type"] for h in merged.hits}:  # source weights apart
        counts = [
            len(h.matched_queries) for h in merged.hits if h.record.metadata["source_type"] == kind
        ]
        assert counts == sorted(counts, reverse=True)
    assert len(merged.hits[0].matched_queries) >= 2


def test_staged_retry_keeps_filters_and_reaches_stage_2(tmp_path):
    cfg = CollectionConfig(
        name="cards",
        axes=(tansaku.Axis(name="kw", mode=tansaku.AxisMode.BM25, fields=("effect_1",)),),
        query=QueryConfig(synonyms=("cards",)),
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
    with tansaku.connect(tmp_path / "h", embedder=HashEmbedder(16)) as client:
        client.ingest_records(recs, collection="cards", config=cfg)
        # stage 1: only `combined` has the words; the field-restricted axis finds nothing first
        r1 = client.search("ランダム ダメージ", collection="cards", synonyms=False)
        assert r1.plan.stage.retry_stage == 1
        assert [h.doc_id for h in r1.hits] == ["c2"]
        assert r1.plan.stage.top_k == 20 and r1.plan.stage.min_score == pytest.approx(-0.05)
        # stage 2: only the synonym バウンス→手札に戻す finds c1
        r2 = client.search("バウンス", collection="cards", synonyms=False)
        assert r2.plan.stage.retry_stage == 2 and [h.doc_id for h in r2.hits] == ["c1"]
        # filters are never dropped: the class filter excludes c1 at every stage
        r3 = client.search(
            "バウンス",
            collection="cards",
            synonyms=False,
            filter=Filter(equals={"class": "エルフ"}),
        )
        assert r3.hits == () and r3.plan.stage.retry_stage == 2
        assert r3.plan.filter == FilterPlan(equals=(("class", "エルフ"),))
        off = client.search("バウンス", collection="cards", synonyms=False, retry=False)
        assert off.hits == () and off.plan.stage.retry_stage == 0


def test_search_events_and_counters(ts):
    before = ts.events.counters.snapshot()
    ts.search("冷蔵庫の故障", collection="reports", now=NOW)
    ts.search(
        "ｘｙｚｚｙ-9999",
        collection="reports",
        now=NOW,
        axes=(tansaku.Axis(name="kw", mode=tansaku.AxisMode.BM25),),
        retry=False,
    )
    after = ts.events.counters.snapshot()
    assert after["searches_total"] == before["searches_total"] + 2
    assert after["zero_hit_total"] == before["zero_hit_total"] + 1
    events = read_events(ts.workspace.logs_dir / "search_events.jsonl")
    last = events[-1]
    assert last["event"] == "SEARCH_EVENT" and last["zero_hit"] is True
    assert {
        "query_id",
        "ts",
        "normalized_query",
        "expanded_queries",
        "axes",
        "namespaces",
        "retry_stage",
        "min_score",
        "top5_scores",
        "timings_ms",
    } <= set(last)
    assert events[-2]["top5_scores"] and events[-2]["normalized_query"] == "冷蔵庫の故障"


def test_expander_failure_falls_back_to_the_original_query(ts):
    class Broken:
        name = "broken"

        def expand(self, query, ctx):
            raise RuntimeError("LLM down")

    saved = ts.services.expander
    ts.with_services(expander=Broken())
    try:
        res = ts.search("昨日の問題", collection="reports", now=NOW)
    finally:
        ts.with_services(expander=saved)
    assert res.plan.stage.expanded_queries == ("2025-12-10の問題",)
    assert res.hits


def test_expanded_searches_share_one_pool_of_variant_threads(ts):
    """Variants run on the process's pool: many expanded searches from several threads start
    no threads of their own, and each search merges every variant it ran."""
    import threading

    from tansaku.search.variant_pool import VARIANT_THREADS, variant_pool

    variant_pool()  # made on first use
    before = threading.active_count()
    results: list = []

    def many() -> None:
        for query in ("昨日の問題", "冷蔵庫の故障", "先週のクレーム"):
            results.append(ts.search(query, collection="reports", now=NOW, expand=True))

    workers = [threading.Thread(target=many) for _ in range(3)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    assert threading.active_count() <= before + VARIANT_THREADS
    assert len(results) == 9
    for res in results:
        stage = res.plan.stage
        assert len(stage.expanded_queries) >= 3 and not stage.timed_out_queries
        matched = {q for h in res.hits for q in h.matched_queries}
        assert stage.expanded_queries[0] in matched


def test_a_tight_budget_keeps_the_original_query_and_names_the_variants_left_out(tmp_path):
    """Past ``budget_ms`` the variants not finished are listed, never waited for; the original
    query always completes."""
    home = tmp_path / "home"
    src = write_reports_jsonl(generate(NOW), tmp_path / "reports.jsonl")
    config = (CONFIGS / "reports.toml").read_text(encoding="utf-8")
    tight = tmp_path / "reports.toml"
    tight.write_text(config.replace("[query]\n", "[query]\nbudget_ms = 1\n"), encoding="utf-8")
    with tansaku.connect(home, embedder=HashEmbedder(48)) as client:
        assert client.ingest([src], collection="reports", config=tight).ok
        for _ in range(5):
            res = client.search("昨日の問題", collection="reports", now=NOW, expand=True)
            stage = res.plan.stage
            assert len(stage.expanded_queries) >= 3
            left_out = set(stage.timed_out_queries)
            assert left_out <= set(stage.expanded_queries[1:])
            assert res.hits  # the original query's, whatever was left out
            matched = {q for h in res.hits for q in h.matched_queries}  # set when merged
            assert not matched or stage.expanded_queries[0] in matched
            assert not matched & left_out

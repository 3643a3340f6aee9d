"""Congruence: the same Japanese records in the embedded stores (EdgeStore + UnitStore) and in
the Qdrant stores (qdrant-client's local mode) give the same ids in the same order and the same
scores (1e-4 relative) for sparse, dense, hybrid and unit searches, with and without filters —
after updates and deletes too (and against a real server when ``TANSAKU_TEST_QDRANT_URL`` is
set). Records with equal scores (RRF ties) may come in either order.
And team isolation: one team's searches never return, nor are scored by, another's records."""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import date
from typing import Any

import numpy as np
import pytest
from qdrant_client import QdrantClient

from tansaku.records import Record
from tansaku.store.base import Filter, MetaCondition, ScoredRecord, StoredPoint
from tansaku.store.edge import EdgeStore
from tansaku.store.qdrant.records import QdrantRecordStore
from tansaku.store.qdrant.settings import QdrantSettings
from tansaku.store.qdrant.units import QdrantUnitIndex
from tansaku.store.sparse import doc_vector, query_vector, term_id
from tansaku.store.units import UnitStore, idf
from tansaku.text.ngram import bigrams

DIM = 48
SERVER_URL = os.environ.get("TANSAKU_TEST_QDRANT_URL")


def embed(text: str) -> np.ndarray:
    """A dense vector of the text: a fixed Gaussian projection of its character bigrams
    (``HashEmbedder``'s small integer vectors tie too often for an order to be compared)."""
    v = np.zeros(DIM)
    for gram in bigrams(text):
        v += np.random.default_rng(term_id(gram)).standard_normal(DIM)
    return (v / max(float(np.linalg.norm(v)), 1e-12)).astype(np.float32)


AVGDL = {"body": 37.3, "title": 11.7}  # not round: equal dl/avgdl across fields ties BM25

Doc = tuple[str, str, str, str, dict[str, Any]]  # (team, doc, field, text, metadata)


def doc(team: str, doc_id: str, fld: str, *text: str, **meta: Any) -> Doc:
    return team, doc_id, fld, "".join(text), meta


DAILY = "daily_report"
DOCS: list[Doc] = [
    doc("team-a", "d01", "body", "お客様から料理の温度が低いとのクレームがありました。",
        "厨房で保温庫の設定を確認しました。",
        date="2025-12-10", store="新宿店", source_type=DAILY, cost=0, urgent=True),
    doc("team-a", "d01", "title", "料理の温度に関するクレーム", date="2025-12-10", store="新宿店"),
    doc("team-a", "d02", "body", "冷蔵庫の故障で食材を一部廃棄しました。",
        "修理業者を手配し、翌日に部品を交換しました。",
        date="2025-12-10", store="渋谷店", source_type=DAILY, cost=48000, urgent=True),
    doc("team-a", "d02", "title", "冷蔵庫の故障と食材廃棄", date="2025-12-10", store="渋谷店"),
    doc("team-a", "d03", "body", "ランチの提供が遅いとのご指摘を受けました。",
        "ピーク時の人員配置を見直します。",
        date="2025-12-09", store="新宿店", source_type=DAILY, cost=0, urgent=False),
    doc("team-a", "d04", "body", "衛生管理マニュアルを改訂しました。",
        "手洗いの手順と消毒の頻度を明記しています。",
        date="2025-11-01", store="本部", source_type="manual", rating=4.5),
    doc("team-a", "d04", "title", "衛生管理マニュアル 手洗いの手順",
        date="2025-11-01", store="本部", source_type="manual"),
    doc("team-a", "d05", "body", "冷凍庫の霜取りを実施しました。温度記録表に結果を記入しています。",
        date="2025-12-01", store="渋谷店", source_type=DAILY, cost=3000, due="2025-12-05"),
    doc("team-a", "d06", "body", "新メニューの試食会を開きました。",
        "季節の野菜を使ったスープが好評でした。",
        date="2025-11-20", store="池袋店", source_type=DAILY, rating=5.0),
    doc("team-a", "d07", "body", "レジの釣り銭が不足していたため、本部に両替を依頼しました。",
        date="2025-12-08", store="池袋店", source_type=DAILY, cost="未定"),
    doc("team-a", "d08", "body", "食材の発注量を見直し、廃棄を前月より二割減らしました。",
        date="2025-12-03", store="渋谷店", source_type=DAILY, cost=1000, due="2025-12-20"),
    doc("team-b", "d01", "body", "冷蔵庫の温度が上がっていたので点検を依頼しました。",
        "故障ではありませんでした。",
        date="2025-12-10", store="梅田店", source_type=DAILY, cost=0),
    doc("team-b", "d02", "body", "お客様から接客の丁寧さについてお褒めの言葉をいただきました。",
        date="2025-12-07", store="難波店", source_type=DAILY),
    doc("team-b", "d03", "title", "店舗運営マニュアル 開店前の点検項目",
        date="2025-10-15", store="本部", source_type="manual"),
]  # fmt: skip

QUERIES = [
    "冷蔵庫の故障",
    "料理の温度が低いクレーム",
    "手洗いの手順",
    "食材の廃棄を減らす",
    "お客様からの指摘",
    "温度記録",
]
FILTERS: list[Filter | None] = [
    None,
    Filter(fields=("body",)),
    Filter(fields=("title",)),
    Filter(equals={"store": "新宿店"}),
    Filter(any_of={"store": ("渋谷店", "池袋店")}),
    Filter(date_from=date(2025, 12, 1), date_to=date(2025, 12, 9)),
    Filter(doc_ids=("d01", "d02", "d05")),
    Filter(equals={"urgent": True}),
    Filter(where=(MetaCondition(key="cost", gte=1000),)),
    Filter(where=(MetaCondition(key="cost", values=(0, "未定")),)),
    Filter(where=(MetaCondition(key="rating", values=(5.0,)),)),
    Filter(where=(MetaCondition(key="due", lte=date(2025, 12, 10)),)),
    Filter(where=(MetaCondition(key="date", values=(date(2025, 12, 10),)),)),
    Filter(fields=("body",), where=(MetaCondition(key="urgent", values=(False,)),)),
    Filter(where=(MetaCondition(key="cost", gt=0, lt=48000),)),
    Filter(where=(MetaCondition(key="due", gt=date(2025, 12, 5)),)),
    Filter(
        where=(
            MetaCondition(key="date", gte=date(2025, 12, 8)),
            MetaCondition(key="rating", lte=4.9),
        )
    ),
]


def record(doc: str, fld: str, text: str, meta: dict[str, Any]) -> Record:
    return Record(id=f"{doc}:{fld}", doc_id=doc, field=fld, text=text, metadata=meta)


def stored(rec: Record) -> StoredPoint:
    terms = bigrams(rec.text)
    sparse = doc_vector(terms, k1=0.9, b=0.4, avgdl=AVGDL[rec.field])
    return StoredPoint(rec, sparse, embed(rec.text), rec.content_hash(), len(terms))


@dataclass
class Pair:
    edge: EdgeStore
    qdrant: QdrantRecordStore
    edge_units: UnitStore
    qdrant_units: QdrantUnitIndex

    def write(self, tenant: str, records: Sequence[Record]) -> None:
        points = [stored(r) for r in records]
        for store in (self.edge, self.qdrant):
            store.upsert(tenant, points)
        for units in (self.edge_units, self.qdrant_units):
            units.replace(tenant, records)

    def delete(self, tenant: str, rids: Sequence[str]) -> None:
        for s in (self.edge, self.qdrant, self.edge_units, self.qdrant_units):
            s.delete(tenant, rids)


@pytest.fixture(params=["local", "server"])
def pair(request: pytest.FixtureRequest, tmp_path) -> Iterator[Pair]:
    prefix = f"c{uuid.uuid4().hex[:8]}_"
    if request.param == "server":
        if not SERVER_URL:
            pytest.skip("TANSAKU_TEST_QDRANT_URL is not set: no Qdrant server to test against")
        key = os.environ.get("TANSAKU_QDRANT_API_KEY")
        settings = QdrantSettings(url=SERVER_URL, api_key=key, prefix=prefix)
        client = settings.client()
    else:
        settings = QdrantSettings(url="qdrant+memory://", prefix=prefix)
        client = QdrantClient(location=":memory:")
    p = Pair(
        EdgeStore(tmp_path / "shard", dim=DIM),
        QdrantRecordStore(client, "congruence", dim=DIM, settings=settings),
        UnitStore(tmp_path / "units"),
        QdrantUnitIndex(client, "congruence", settings=settings),
    )
    by_team: dict[str, list[Record]] = {}
    for team, doc, fld, text, meta in DOCS:
        by_team.setdefault(team, []).append(record(doc, fld, text, meta))
    for team, records in by_team.items():
        p.write(team, records)
    yield p
    p.edge.close()
    p.edge_units.close()
    for c in client.get_collections().collections:
        if c.name.startswith(prefix):
            client.delete_collection(c.name)
    client.close()


def assert_same(want: list[ScoredRecord], got: list[ScoredRecord], what: str) -> None:
    """Same scores (1e-4 relative) position by position, and the same ids in the same order
    except among records with equal scores."""
    assert len(got) == len(want), (
        f"{what}: {[h.record.id for h in got]} != {[h.record.id for h in want]}"
    )
    for w, g in zip(want, got, strict=True):
        assert g.score == pytest.approx(w.score, rel=1e-4), what

    def groups(hits: list[ScoredRecord]) -> list[set[str]]:
        out: list[set[str]] = []
        last: float | None = None
        for h in hits:
            if last is None or abs(h.score - last) > 1e-6 * max(abs(last), 1e-12):
                out.append(set())
            out[-1].add(h.record.id)
            last = h.score
        return out

    assert groups(got) == groups(want), what


def compare_all(p: Pair, tenant: str) -> int:
    """Every query × filter × search kind on both sides; returns how many lists had hits."""
    nonempty = 0
    for text in QUERIES:
        sparse = query_vector(bigrams(text))
        dense = embed(text)
        for flt in FILTERS:
            what = f"{tenant} {text!r} {flt}"
            pairs = [
                (p.edge.search_sparse(tenant, sparse, filter=flt, limit=8),
                 p.qdrant.search_sparse(tenant, sparse, filter=flt, limit=8), "sparse"),
                (p.edge.search_dense(tenant, dense, filter=flt, limit=5),
                 p.qdrant.search_dense(tenant, dense, filter=flt, limit=5), "dense"),
                (p.edge.search_hybrid(tenant, sparse=sparse, dense=dense, filter=flt, limit=6),
                 p.qdrant.search_hybrid(tenant, sparse=sparse, dense=dense, filter=flt, limit=6),
                 "hybrid"),
                (p.edge.search_hybrid(tenant, sparse=sparse, dense=dense, filter=flt, limit=6,
                                      k=20, weights=[0.4, 1.6], candidates=5),
                 p.qdrant.search_hybrid(tenant, sparse=sparse, dense=dense, filter=flt, limit=6,
                                        k=20, weights=[0.4, 1.6], candidates=5),
                 "weighted hybrid"),
                (p.edge_units.search(tenant, text, filter=flt, limit=4),
                 p.qdrant_units.search(tenant, text, filter=flt, limit=4), "units"),
            ]  # fmt: skip
            for want, got, kind in pairs:
                assert_same(want, got, f"{kind} {what}")
                nonempty += bool(want)
            assert p.edge.count(tenant, flt) == p.qdrant.count(tenant, flt), what
            assert p.edge_units.count(tenant, flt) == p.qdrant_units.count(tenant, flt), what
    return nonempty


def test_every_search_gives_the_same_ids_order_and_scores(pair: Pair) -> None:
    assert compare_all(pair, "team-a") > 200  # most combinations find something
    assert compare_all(pair, "team-b") > 50


def test_still_the_same_after_updates_and_deletes(pair: Pair) -> None:
    meta = {"date": "2025-12-09", "store": "新宿店", "source_type": DAILY, "cost": 0}
    changed = record("d03", "body", "ランチの提供が遅く、冷蔵庫の温度も高めでした。", meta)
    pair.write("team-a", [changed])
    pair.delete("team-a", ["d02:body", "d04:title"])
    moved = doc_vector(bigrams("衛生管理と冷蔵庫"), k1=0.9, b=0.4, avgdl=30.0)
    for store in (pair.edge, pair.qdrant):
        store.update_sparse("team-a", {"d04:body": moved})
    assert compare_all(pair, "team-a") > 150
    assert pair.edge.lengths() == pair.qdrant.lengths()
    assert pair.edge.hashes("team-a") == pair.qdrant.hashes("team-a")


def test_unit_statistics_agree(pair: Pair) -> None:
    assert pair.edge_units.unit_counts(from_shard=False) == pair.qdrant_units.unit_counts(
        from_shard=False
    )
    terms = [t for text in QUERIES for t in query_vector(bigrams(text)).indices]
    for fields in ((), ("body",), ("title",)):
        want = pair.edge_units.idf_weights("team-a", terms, fields)
        got = pair.qdrant_units.idf_weights("team-a", terms, fields)
        assert set(got) == set(want) and want
        for t, w in want.items():
            assert got[t] == pytest.approx(w, rel=1e-5)
    n = pair.qdrant_units.count("team-b")
    term = query_vector(["冷蔵"]).indices[0]
    assert pair.qdrant_units.idf_weights("team-b", [term])[term] == pytest.approx(idf(n, 1))


def test_one_team_never_sees_nor_scores_by_another(pair: Pair) -> None:
    text = "霜取り"  # only team-a has these bigrams
    sparse, dense = query_vector(bigrams(text)), embed(text)
    for side, units in ((pair.edge, pair.edge_units), (pair.qdrant, pair.qdrant_units)):
        assert side.search_sparse("team-b", sparse, limit=10) == []
        assert {h.record.id for h in side.search_dense("team-b", dense, limit=10)} <= {
            "d01:body", "d02:body", "d03:title"}  # fmt: skip
        assert units.search("team-b", text, limit=10) == []
        assert side.get("team-b", ["d05:body"]) == []
    query = "冷蔵庫の温度"
    sparse, dense = query_vector(bigrams(query)), embed(query)

    def team_b() -> list[tuple[str, float]]:
        hits = pair.qdrant.search_sparse("team-b", sparse, limit=5)
        hits += pair.qdrant.search_hybrid("team-b", sparse=sparse, dense=dense, limit=5)
        hits += pair.qdrant_units.search("team-b", query, limit=5)
        return [(h.record.id, h.score) for h in hits]

    before = team_b()
    assert before
    flood = [record(f"x{i:02d}", "body", f"冷蔵庫の温度点検 その{i}。冷蔵庫は正常でした。",
                    {"date": "2025-12-11", "store": "新宿店"}) for i in range(30)]  # fmt: skip
    pair.write("team-a", flood)
    assert team_b() == before  # team-a's document frequencies moved, team-b's did not


def test_dense_vectors_round_trip_as_stored(pair: Pair) -> None:
    dumped = {(t, p.record.id): p for t, pts in pair.qdrant.dump(batch=4) for p in pts}
    assert len(dumped) == len(DOCS)
    for team, doc, fld, text, _meta in DOCS:
        p = dumped[(team, f"{doc}:{fld}")]
        assert p.record.text == text and p.dense is not None
        want = embed(text)
        assert np.allclose(p.dense, want / np.linalg.norm(want), atol=1e-6)

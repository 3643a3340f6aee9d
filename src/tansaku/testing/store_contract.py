"""The contract every backend's :class:`~tansaku.store.protocols.RecordStore` passes — every
method of the protocol. Subclass and override the ``store`` fixture::

class TestMyStore(StoreContract):
    @pytest.fixture
    def store(self, tmp_path):
        yield MyStore(...)

The sentence-unit index has its own suite (``tansaku.testing.unit_contract``).
"""

from __future__ import annotations

from datetime import date

import numpy as np
import pytest

from tansaku.embed.hash import HashEmbedder
from tansaku.records import Record, record_id
from tansaku.store.base import Filter, StoredPoint
from tansaku.store.protocols import RecordStore as Store
from tansaku.store.sparse import SparseVec, doc_vector, query_vector, term_id

DOCS = [
    ("r1", "body", "お客様から料理の温度が低いとのクレームがありました", "2025-12-10", "新宿店"),
    ("r2", "body", "冷蔵庫の故障で食材を一部廃棄しました", "2025-12-10", "渋谷店"),
    ("r3", "body", "ランチの提供が遅いとのご指摘を受けました", "2025-12-09", "新宿店"),
    ("r4", "title", "衛生管理マニュアル 手洗いの手順", "2025-11-01", "本部"),
]
DIM = 32


def _terms(text: str) -> list[str]:
    return [text[i : i + 2] for i in range(len(text) - 1)]


def make_points(embedder: HashEmbedder | None = None) -> list[StoredPoint]:
    emb = embedder or HashEmbedder(DIM)
    out = []
    for doc, fld, text, day, store in DOCS:
        rec = Record(
            id=record_id(doc, fld),
            doc_id=doc,
            field=fld,
            text=text,
            metadata={"date": day, "store": store, "source_type": "daily_report"},
        )
        terms = _terms(text)
        out.append(
            StoredPoint(
                rec,
                doc_vector(terms, k1=0.9, b=0.4, avgdl=20.0),
                emb.embed_passages([text])[0],
                rec.content_hash(),
                len(terms),
            )
        )
    return out


def q(text: str):
    return query_vector(_terms(text))


class StoreContract:
    @pytest.fixture
    def store(self, tmp_path):
        raise NotImplementedError

    @pytest.fixture
    def filled(self, store: Store) -> Store:
        store.upsert("team-a", make_points())
        store.upsert("team-b", make_points()[:1])
        return store

    def test_count_is_per_tenant(self, filled: Store) -> None:
        assert filled.count("team-a") == 4
        assert filled.count("team-b") == 1
        assert filled.count("team-c") == 0

    def test_get_returns_records_in_request_order(self, filled: Store) -> None:
        got = filled.get("team-a", ["r3:body", "missing:body", "r1:body"])
        assert [r.id for r in got] == ["r3:body", "r1:body"]
        assert got[1].metadata["store"] == "新宿店"
        assert got[1].text.startswith("お客様から")

    def test_term_ids_are_the_terms_a_record_was_indexed_with(self, filled: Store) -> None:
        text = DOCS[1][2]  # r2: 冷蔵庫の故障で…
        assert filled.term_ids("team-a", "r2:body") == frozenset(map(term_id, _terms(text)))
        assert term_id("冷蔵") in filled.term_ids("team-a", "r2:body")
        assert filled.term_ids("team-b", "r2:body") == frozenset()  # another team's record
        assert filled.term_ids("team-a", "missing:body") == frozenset()

    def test_tenant_isolation_on_every_read(self, filled: Store) -> None:
        assert filled.get("team-b", ["r2:body"]) == []
        hits = filled.search_sparse("team-b", q("冷蔵庫の故障"), limit=10)
        assert hits == []
        dense = filled.search_dense(
            "team-b", HashEmbedder(DIM).embed_queries(["冷蔵庫"])[0], limit=10
        )
        assert {h.record.id for h in dense} == {"r1:body"}
        assert set(filled.hashes("team-b")) == {"r1:body"}

    def test_sparse_ranks_lexical_match_first_and_drops_zero(self, filled: Store) -> None:
        hits = filled.search_sparse("team-a", q("冷蔵庫"), limit=10)
        assert hits[0].record.id == "r2:body"
        assert all(h.score > 0 for h in hits)
        assert len(hits) == 1

    def test_candidates_without_text_keep_ids_field_and_source_type(self, filled: Store) -> None:
        vec = HashEmbedder(DIM).embed_queries(["冷蔵庫の温度"])[0]
        lengths = {p.record.id: p.bm25_len for p in make_points()}
        for search, query in ((filled.search_sparse, q("冷蔵庫")), (filled.search_dense, vec)):
            full = search("team-a", query, limit=10)  # type: ignore[operator]
            bare = search("team-a", query, limit=10, with_text=False)  # type: ignore[operator]
            assert [(h.record.id, h.score) for h in bare] == [(h.record.id, h.score) for h in full]
            for b, f in zip(bare, full, strict=True):
                assert b.record.text == "" and f.record.text
                assert b.length == f.length == lengths[b.record.id] > 0  # the fusion reads it
                assert (b.record.doc_id, b.record.field) == (f.record.doc_id, f.record.field)
                source_type = f.record.metadata.get("source_type")
                assert b.record.metadata.get("source_type") == source_type

    def test_dense_returns_all_candidates_by_similarity(self, filled: Store) -> None:
        vec = HashEmbedder(DIM).embed_queries(["料理の温度が低いクレーム"])[0]
        hits = filled.search_dense("team-a", vec, limit=10)
        assert hits[0].record.id == "r1:body"
        scores = [h.score for h in hits]
        assert scores == sorted(scores, reverse=True)

    def test_filters(self, filled: Store) -> None:
        vec = HashEmbedder(DIM).embed_queries(["クレーム"])[0]
        day = date(2025, 12, 10)
        by_date = filled.search_dense("team-a", vec, filter=Filter(date_from=day, date_to=day))
        assert {h.record.id for h in by_date} == {"r1:body", "r2:body"}
        by_store = filled.search_dense("team-a", vec, filter=Filter(equals={"store": "新宿店"}))
        assert {h.record.id for h in by_store} == {"r1:body", "r3:body"}
        by_any = filled.search_dense(
            "team-a", vec, filter=Filter(any_of={"store": ("渋谷店", "本部")})
        )
        assert {h.record.id for h in by_any} == {"r2:body", "r4:title"}
        by_field = filled.search_dense("team-a", vec, filter=Filter(fields=("title",)))
        assert [h.record.id for h in by_field] == ["r4:title"]
        by_doc = filled.count("team-a", Filter(doc_ids=("r1", "r2")))
        assert by_doc == 2

    def test_upsert_replaces_by_id_and_delete(self, filled: Store) -> None:
        pts = make_points()
        changed = StoredPoint(
            Record(
                id="r1:body",
                doc_id="r1",
                field="body",
                text="内容を更新しました",
                metadata={"date": "2025-12-10"},
            ),
            pts[0].sparse,
            pts[0].dense,
            "new-hash",
            5,
        )
        filled.upsert("team-a", [changed])
        assert filled.count("team-a") == 4
        assert filled.get("team-a", ["r1:body"])[0].text == "内容を更新しました"
        assert filled.hashes("team-a")["r1:body"] == "new-hash"
        assert filled.get("team-b", ["r1:body"])[0].text.startswith("お客様から")
        filled.delete("team-a", ["r1:body", "r2:body"])
        assert filled.count("team-a") == 2
        assert filled.count("team-b") == 1

    def test_hybrid_rrf(self, filled: Store) -> None:
        vec = HashEmbedder(DIM).embed_queries(["冷蔵庫の故障"])[0]
        hits = filled.search_hybrid("team-a", sparse=q("冷蔵庫の故障"), dense=vec, limit=3, k=60)
        assert hits[0].record.id == "r2:body"
        # Qdrant's engine-side RRF counts ranks from 0: 1/(k+0) per leg for a double first place.
        # (tansaku.search.fusion.rrf_fusion counts from 1, as the literature does.)
        assert hits[0].score == pytest.approx(2 / 60, rel=1e-4)
        # without options: the first 10 under k = 60 and 100 candidates a leg
        plain = filled.search_hybrid("team-a", sparse=q("冷蔵庫の故障"), dense=vec)
        assert plain == filled.search_hybrid(
            "team-a", sparse=q("冷蔵庫の故障"), dense=vec, limit=10, k=60, candidates=100
        )

    def test_idf_is_computed_per_tenant(self, store: Store) -> None:
        pts = make_points()
        store.upsert("team-a", pts)
        store.upsert("team-b", pts[:2])
        a = store.search_sparse("team-a", q("冷蔵庫"), limit=1)[0].score
        b = store.search_sparse("team-b", q("冷蔵庫"), limit=1)[0].score
        n_a, n_b = 4, 2
        idf = lambda n: np.log(1 + (n - 1 + 0.5) / 1.5)  # noqa: E731
        assert a / b == pytest.approx(idf(n_a) / idf(n_b), rel=1e-3)

    # -- the rest of the protocol: scans, statistics, samples, maintenance ---------------
    def test_it_is_a_record_store(self, store: Store) -> None:
        assert isinstance(store, Store)

    def test_scan_returns_hash_and_length_and_text_only_when_asked(self, filled: Store) -> None:
        pts = {p.record.id: p for p in make_points()}
        bare = {i.record.id: i for i in filled.scan("team-a")}
        assert set(bare) == set(pts)
        for rid, info in bare.items():
            assert info.content_hash == pts[rid].content_hash
            assert info.bm25_len == pts[rid].bm25_len
            assert (info.record.doc_id, info.record.field) == (
                rid.split(":")[0],
                pts[rid].record.field,
            )
            assert info.record.text == "" and not info.record.metadata
        full = filled.scan("team-a", Filter(fields=("body",)), with_text=True, with_meta=True)
        assert {i.record.id for i in full} == {"r1:body", "r2:body", "r3:body"}
        for info in full:
            assert info.record.text == pts[info.record.id].record.text
            assert info.record.metadata["store"] == pts[info.record.id].record.metadata["store"]
        assert [i.record.id for i in filled.scan("team-b")] == ["r1:body"]
        assert filled.scan("team-c") == []

    def test_hashes_take_a_filter(self, filled: Store) -> None:
        assert set(filled.hashes("team-a", Filter(doc_ids=("r2", "r4")))) == {"r2:body", "r4:title"}

    def test_total_counts_every_tenant(self, filled: Store) -> None:
        assert filled.total() == 5
        filled.delete("team-a", ["r4:title"])
        assert filled.total() == 4

    def test_lengths_sum_what_each_record_carries(self, filled: Store) -> None:
        pts = make_points()
        want: dict[str, tuple[int, int]] = {}
        for p in pts:
            total, count = want.get(p.record.field, (0, 0))
            want[p.record.field] = (total + p.bm25_len, count + 1)
        assert filled.lengths() == {"team-a": want, "team-b": {"body": (pts[0].bm25_len, 1)}}

    def test_metadata_sample_reads_stored_values_per_key(self, filled: Store) -> None:
        sample = filled.metadata_sample("team-a", ["store", "missing"], limit=10)
        assert sorted(sample["store"]) == sorted(d[4] for d in DOCS)
        assert "missing" not in sample
        every = filled.metadata_sample("team-b", limit=5)
        assert every["store"] == ["新宿店"] and every["date"] == ["2025-12-10"]

    def test_delete_tenant_removes_only_that_team(self, filled: Store) -> None:
        filled.delete_tenant("team-a")
        assert filled.count("team-a") == 0 and filled.count("team-b") == 1
        assert filled.search_sparse("team-a", q("冷蔵庫"), limit=5) == []

    def test_update_sparse_replaces_the_bm25_vector_only(self, filled: Store) -> None:
        assert filled.search_sparse("team-a", q("衛生管理"), limit=5)[0].record.id == "r4:title"
        moved = doc_vector(_terms("冷蔵庫"), k1=0.9, b=0.4, avgdl=20.0)
        filled.update_sparse("team-a", {"r4:title": moved, "r1:body": SparseVec((), ())})
        hits = filled.search_sparse("team-a", q("衛生管理"), limit=5)
        assert "r4:title" not in {h.record.id for h in hits}
        top = filled.search_sparse("team-a", q("冷蔵庫"), limit=5)
        assert {h.record.id for h in top} >= {"r4:title", "r2:body"}
        assert filled.get("team-a", ["r4:title"])[0].text.startswith("衛生管理")
        assert filled.hashes("team-a")["r4:title"] == make_points()[3].content_hash

    def test_maintenance_keeps_every_record_searchable(self, filled: Store) -> None:
        assert filled.needs_index(0) is False
        filled.optimize()
        filled.flush()
        assert filled.count("team-a") == 4
        assert filled.search_sparse("team-a", q("冷蔵庫"), limit=1)[0].record.id == "r2:body"

    # -- dump: what an export writes and an import upserts --------------------------------
    def test_dump_of_an_empty_store_yields_nothing(self, store: Store) -> None:
        assert list(store.dump()) == []

    def test_dump_gives_every_record_with_its_vectors_hash_and_length(self, filled: Store) -> None:
        pts = {p.record.id: p for p in make_points()}
        batches = list(filled.dump(batch=2))
        assert all(0 < len(points) <= 2 for _, points in batches)
        by_team: dict[str, dict[str, StoredPoint]] = {}
        for tenant, points in batches:
            for p in points:
                assert p.record.id not in by_team.setdefault(tenant, {})
                by_team[tenant][p.record.id] = p
        assert {t: set(ps) for t, ps in by_team.items()} == {
            "team-a": set(pts),
            "team-b": {"r1:body"},
        }
        for got in by_team.values():
            for rid, p in got.items():
                want = pts[rid]
                assert p.record == want.record
                assert (p.content_hash, p.bm25_len) == (want.content_hash, want.bm25_len)
                assert _sparse(p.sparse) == pytest.approx(_sparse(want.sparse), rel=1e-6)
                assert p.dense is not None and want.dense is not None
                unit = want.dense / np.linalg.norm(want.dense)  # cosine: stored normalised
                assert np.allclose(p.dense / np.linalg.norm(p.dense), unit, atol=1e-6)

    def test_dump_upserted_into_an_emptied_store_searches_the_same(self, filled: Store) -> None:
        before = _answers(filled)
        dumped = list(filled.dump(batch=3))
        tenants = sorted({t for t, _ in dumped})
        assert tenants == ["team-a", "team-b"]
        for tenant in tenants:
            filled.delete_tenant(tenant)
        assert filled.total() == 0
        for tenant, points in dumped:
            filled.upsert(tenant, points)
        assert _answers(filled) == before
        assert filled.lengths() == {
            "team-a": {
                "body": (sum(p.bm25_len for p in make_points()[:3]), 3),
                "title": (
                    make_points()[3].bm25_len,
                    1,
                ),
            },
            "team-b": {"body": (make_points()[0].bm25_len, 1)},
        }
        again = {(t, p.record.id): p for t, points in filled.dump() for p in points}
        for tenant, points in dumped:
            for p in points:
                q2 = again[(tenant, p.record.id)]
                assert (q2.record, q2.content_hash, q2.bm25_len) == (
                    p.record,
                    p.content_hash,
                    p.bm25_len,
                )
                assert p.dense is not None and q2.dense is not None
                assert np.allclose(q2.dense, p.dense, atol=1e-6)
                assert _sparse(q2.sparse) == pytest.approx(_sparse(p.sparse), rel=1e-6)


def _sparse(v: SparseVec) -> dict[int, float]:
    return dict(zip(v.indices, v.values, strict=True))


def _answers(store: Store) -> dict[str, list[tuple[str, float]]]:
    """What every kind of search answers, per team, rounded past float noise."""
    vec = HashEmbedder(DIM).embed_queries(["冷蔵庫の温度が低い"])[0]
    out: dict[str, list[tuple[str, float]]] = {}
    for team in ("team-a", "team-b"):
        for name, hits in (
            ("sparse", store.search_sparse(team, q("冷蔵庫の温度"), limit=10)),
            ("dense", store.search_dense(team, vec, limit=10)),
            ("hybrid", store.search_hybrid(team, sparse=q("料理の温度"), dense=vec, limit=10)),
        ):
            out[f"{team}/{name}"] = [(h.record.id, round(h.score, 5)) for h in hits]
    return out

from __future__ import annotations

import pytest

from tansaku.store.edge import EdgeStore
from tansaku.testing.store_contract import DIM, StoreContract, make_points


class TestEdgeStore(StoreContract):
    @pytest.fixture
    def store(self, tmp_path):
        s = EdgeStore(tmp_path / "shard", dim=DIM)
        yield s
        s.close()


def test_reopen_keeps_points(tmp_path):
    s = EdgeStore(tmp_path / "shard", dim=DIM)
    s.upsert("team-a", make_points())
    s.close()
    again = EdgeStore(tmp_path / "shard", dim=DIM)
    try:
        assert again.count("team-a") == 4
        assert again.get("team-a", ["r2:body"])[0].metadata["store"] == "渋谷店"
    finally:
        again.close()


def test_total_is_cached_and_invalidated_by_writes(tmp_path):
    s = EdgeStore(tmp_path / "shard", dim=DIM)
    try:
        assert s.total() == 0
        s.upsert("team-a", make_points())
        assert s.total() == 4
        s.upsert("team-b", make_points()[:2])
        assert s.total() == 6
        s.delete("team-a", ["r1:body"])
        assert s.total() == 5
    finally:
        s.close()


def test_large_writes_build_the_index_and_search_still_works(tmp_path, monkeypatch):
    import tansaku.store.edge as edge
    from tansaku.embed.hash import HashEmbedder
    from tansaku.testing.store_contract import q

    monkeypatch.setattr(edge, "_EXACT_BELOW", 3)
    monkeypatch.setattr(edge, "OPTIMIZE_MIN_CHANGED", 2)
    s = EdgeStore(tmp_path / "shard", dim=DIM)
    try:
        s.upsert("team-a", make_points())
        assert s.needs_index(4) and not s.needs_index(1)
        s.optimize()
        assert s.search_sparse("team-a", q("冷蔵庫"), limit=1)[0].record.id == "r2:body"
        vec = HashEmbedder(DIM).embed_queries(["冷蔵庫の故障"])[0]
        assert s.search_dense("team-a", vec, limit=1)[0].record.id == "r2:body"
    finally:
        s.close()


def test_a_sole_team_searches_without_the_team_condition_but_never_returns_another_team(
    tmp_path,
):
    from tansaku.embed.hash import HashEmbedder
    from tansaku.testing.store_contract import q

    s = EdgeStore(tmp_path / "shard", dim=DIM)
    vec = HashEmbedder(DIM).embed_queries(["冷蔵庫の温度"])[0]
    try:
        s.upsert("team-a", make_points())
        assert s._sole("team-a") and not s._sole("team-b")
        assert s.search_dense("team-b", vec, limit=10) == []  # team-b has nothing: filtered
        assert s.search_sparse("team-b", q("冷蔵庫"), limit=10) == []
        s.upsert("team-b", make_points()[:2])
        assert not s._sole("team-a")  # the write cleared the cached counts
        # a stale "sole" (another process wrote, say) costs results, never another team's
        s._counts[f"team-b\x00{None!r}"] = s.total()
        assert s._sole("team-b")
        for hits in (
            s.search_dense("team-b", vec, limit=10),
            s.search_dense("team-b", vec, limit=10, with_text=False),
            s.search_sparse("team-b", q("冷蔵庫"), limit=10),
            s.search_sparse("team-b", q("冷蔵庫"), limit=10, with_text=False),
            s.search_hybrid("team-b", sparse=q("冷蔵庫"), dense=vec, limit=10),
        ):
            # the engine ran without the team condition (6 points match); team-b owns 2
            assert hits and len(hits) <= 2
            assert {h.record.id for h in hits} <= {"r1:body", "r2:body"}
    finally:
        s.close()


def test_candidates_are_resolved_after_reopen_and_after_the_index_forgets(tmp_path):
    """Candidates come from ids + the candidate index; a reopened store (empty index) or one
    that forgot (bounded index) reads what it misses, with the same answer."""
    from tansaku.embed.hash import HashEmbedder
    from tansaku.store.candidates import CandidateIndex

    vec = HashEmbedder(DIM).embed_queries(["冷蔵庫の温度が高い"])[0]
    s = EdgeStore(tmp_path / "shard", dim=DIM)
    s.upsert("team-a", make_points())
    before = [
        (h.record.id, h.record.doc_id, h.record.field, h.score)
        for h in s.search_dense("team-a", vec, limit=10, with_text=False)
    ]
    s.close()
    again = EdgeStore(tmp_path / "shard", dim=DIM)
    try:
        assert len(again._candidates) == 0
        hits = again.search_dense("team-a", vec, limit=10, with_text=False)
        assert [(h.record.id, h.record.doc_id, h.record.field, h.score) for h in hits] == before
        assert all(h.record.metadata == {"source_type": "daily_report"} for h in hits)
        with pytest.raises(TypeError):  # candidates share their metadata: read-only
            hits[0].record.metadata["source_type"] = "manual"  # type: ignore[index]
        again._candidates = CandidateIndex(max_entries=2)  # forgets all but the newest 2
        again.upsert("team-a", make_points()[:3])
        assert len(again._candidates) <= 2
        hits = again.search_dense("team-a", vec, limit=10, with_text=False)
        assert [(h.record.id, h.record.doc_id, h.record.field, h.score) for h in hits] == before
        again.delete("team-a", ["r1:body"])
        hits = again.search_dense("team-a", vec, limit=10, with_text=False)
        assert "r1:body" not in {h.record.id for h in hits} and len(hits) == len(before) - 1
    finally:
        again.close()

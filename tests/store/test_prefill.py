"""A large read-only shard's candidate index is read in the background right after it loads
(``tansaku.store.prefill``); searches answer the same, and a closed shard is never loaded
again by it."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from tansaku.records import Record, record_id
from tansaku.store import prefill
from tansaku.store.candidates import CandidateIndex
from tansaku.store.edge import EdgeStore
from tansaku.testing.store_contract import DIM, make_points

TEAM = "チームA"


def _shard(tmp_path: Path, copies: int) -> Path:
    """A committed shard of ``copies`` × 4 daily-report records."""
    base = make_points()
    points = []
    for i in range(copies):
        for p in base:
            doc = f"{p.record.doc_id}-{i}"
            rec = replace(p.record, id=record_id(doc, p.record.field), doc_id=doc)
            points.append(replace(p, record=rec))
    writer = EdgeStore(tmp_path / "shard", dim=DIM)
    writer.upsert(TEAM, points)
    writer.close()
    return tmp_path / "shard"


def test_a_prefill_learns_every_candidate_and_searches_answer_the_same(tmp_path: Path) -> None:
    path = _shard(tmp_path, 50)
    plain = EdgeStore(path, dim=DIM, read_only=True)
    filled = EdgeStore(path, dim=DIM, read_only=True)
    try:
        # a shard of 200 points is below MIN_POINTS: its loads leave the index to searches
        assert len(plain._candidates) == len(filled._candidates) == 0
        prefill.start(filled, bare=False, min_points=100).join(timeout=60)
        assert len(filled._candidates) == 200
        query = make_points()[1].dense
        for store in (plain, filled):
            assert store.count(TEAM) == 200
        got = filled.search_dense(TEAM, query, limit=20)
        want = plain.search_dense(TEAM, query, limit=20)
        assert [(h.record.id, h.record.doc_id, h.record.field) for h in got] == [
            (h.record.id, h.record.doc_id, h.record.field) for h in want
        ]
        assert got[0].record.doc_id.startswith("r2-")  # 冷蔵庫の故障
        assert [h.score for h in got] == [h.score for h in want]
    finally:
        plain.close()
        filled.close()


def test_below_the_threshold_nothing_is_read(tmp_path: Path) -> None:
    store = EdgeStore(_shard(tmp_path, 2), dim=DIM, read_only=True)
    try:
        prefill.start(store, bare=False, min_points=9).join(timeout=60)
        assert len(store._candidates) == 0
    finally:
        store.close()


def test_a_closed_shard_stops_the_prefill_and_stays_closed(tmp_path: Path) -> None:
    store = EdgeStore(_shard(tmp_path, 10), dim=DIM, read_only=True)
    store.close()
    prefill.start(store, bare=False, min_points=1).join(timeout=60)
    assert not store.is_open and len(store._candidates) == 0


class _Point:
    def __init__(self, pid: int) -> None:
        self.id = pid
        self.payload = {"tenant": TEAM, "rid": f"r{pid}:body", "doc_id": f"r{pid}"}


def test_learning_stops_at_the_index_bound() -> None:
    index = CandidateIndex(3, bare=True)
    assert index.learn([_Point(1), _Point(2)]) is True
    assert index.learn([_Point(3), _Point(4), _Point(5)]) is False
    assert len(index) == 3
    tenant, rec = index._known[1]
    assert tenant == TEAM and rec == Record("r1:body", "r1", "", "", rec.metadata)

"""The sentence-unit shard behind ``bigram`` axes: writes, tenant scope, filters, reopen."""

from __future__ import annotations

from datetime import date

import pytest

from tansaku.records import Record
from tansaku.store.base import Filter
from tansaku.store.sparse import doc_vector, term_id
from tansaku.store.unit_base import AVG_UNIT_BIGRAMS, K1, B
from tansaku.store.units import UnitStore, idf
from tansaku.testing.unit_contract import UnitIndexContract
from tansaku.text.ngram import bigrams

RAIN = Record(
    id="rain#0",
    doc_id="rain",
    field="body",
    text="梅雨\n梅雨は北海道を除く日本で見られる。梅雨前線が停滞すると雨が続く。",
    metadata={"title": "梅雨", "store": "本店", "date": "2025-12-09"},
)
MAHLER = Record(
    id="mahler#0",
    doc_id="mahler",
    field="body",
    text="グスタフ・マーラーは後期ロマン派の作曲家である。交響曲を10曲書いた。",
    metadata={"title": "グスタフ・マーラー", "store": "駅前店", "date": "2025-12-10"},
)


@pytest.fixture
def units(tmp_path):
    store = UnitStore(tmp_path / "units")
    yield store
    store.close()


def test_a_record_scores_once_by_its_best_sentence(units) -> None:
    assert units.replace("t", [RAIN, MAHLER]) == 4
    hits = units.search("t", "梅雨前線が停滞するとどうなる？", limit=5)
    assert [h.record.id for h in hits] == ["rain#0"]
    top = hits[0]
    assert top.record.doc_id == "rain" and top.score > 0
    # id and document only: the caller reads the records it keeps from the record store
    assert (top.record.field, top.record.text, dict(top.record.metadata)) == ("", "", {})


def test_replace_rewrites_and_delete_removes_every_unit(units) -> None:
    units.replace("t", [RAIN, MAHLER])
    shorter = Record(id=RAIN.id, doc_id="rain", field="body", text="梅雨は雨季である。")
    units.replace("t", [shorter])
    assert units.count("t") == 3
    assert units.search("t", "梅雨前線が停滞", limit=5)[0].record.id == "rain#0"
    units.delete("t", [RAIN.id])
    assert units.count("t") == 2
    assert units.search("t", "梅雨前線が停滞", limit=5) == []


def test_tenants_never_see_each_other(units) -> None:
    units.replace("team-a", [RAIN])
    units.replace("team-b", [MAHLER])
    assert units.search("team-b", "梅雨前線", limit=5) == []
    assert [h.record.id for h in units.search("team-a", "梅雨前線", limit=5)] == ["rain#0"]
    units.delete("team-b", [RAIN.id])  # another tenant's ids do not touch team-a
    assert units.count("team-a") == 2


def test_filters_apply_to_units(units) -> None:
    units.replace("t", [RAIN, MAHLER])
    q = "梅雨の作曲家"
    assert {h.record.id for h in units.search("t", q, limit=5)} == {"rain#0", "mahler#0"}
    by_store = units.search("t", q, filter=Filter(equals={"store": "駅前店"}), limit=5)
    assert [h.record.id for h in by_store] == ["mahler#0"]
    by_date = units.search(
        "t", q, filter=Filter(date_from=date(2025, 12, 9), date_to=date(2025, 12, 9)), limit=5
    )
    assert [h.record.id for h in by_date] == ["rain#0"]
    assert units.search("t", q, filter=Filter(fields=("title",)), limit=5) == []


def test_limit_counts_records_not_units(units) -> None:
    units.replace("t", [RAIN, MAHLER])
    assert len(units.search("t", "梅雨の作曲家", limit=1)) == 1
    assert units.search("t", "", limit=5) == []


def test_units_survive_reopen(tmp_path) -> None:
    store = UnitStore(tmp_path / "u")
    store.replace("t", [RAIN])
    store.close()
    again = UnitStore(tmp_path / "u")
    try:
        assert again.count("t") == 2
        assert again.search("t", "梅雨前線", limit=3)[0].record.id == "rain#0"
    finally:
        again.close()


def test_unit_candidates_are_the_same_from_the_index_or_the_shard(tmp_path) -> None:
    """A search reads no unit payloads: what a unit names comes from the index its writes
    filled, or from one read of the units it has not seen (a reopened store, a full index)."""
    from tansaku.store.candidates import CandidateIndex

    store = UnitStore(tmp_path / "u")
    store.replace("t", [RAIN, MAHLER])
    moved = Record(id="rain#0", doc_id="tsuyu", field="body", text=RAIN.text)
    store.replace("t", [moved])  # the same record id, now in another document
    first = [
        (h.record.id, h.record.doc_id, h.score) for h in store.search("t", "梅雨前線", limit=5)
    ]
    assert first[0][:2] == ("rain#0", "tsuyu")
    store.close()
    again = UnitStore(tmp_path / "u")
    try:
        assert len(again._candidates) == 0
        hits = again.search("t", "梅雨前線", limit=5)
        assert [(h.record.id, h.record.doc_id, h.score) for h in hits] == first
        assert (hits[0].record.field, hits[0].record.text, dict(hits[0].record.metadata)) == (
            "",
            "",
            {},
        )
        again._candidates = CandidateIndex(max_entries=1, bare=True)
        hits = again.search("t", "梅雨前線", limit=5)
        assert [(h.record.id, h.record.doc_id, h.score) for h in hits] == first
        again.delete("t", ["rain#0"])
        assert again.search("t", "梅雨前線", limit=5) == []
        assert again.search("team-b", "作曲家", limit=5) == []
    finally:
        again.close()


def test_another_teams_units_never_shift_scores(units) -> None:
    units.replace("team-a", [RAIN, MAHLER])
    alone = {h.record.id: h.score for h in units.search("team-a", "梅雨前線の作曲家", limit=5)}
    noise = [
        Record(id=f"n{i}", doc_id=f"n{i}", field="body", text=f"梅雨前線の話その{i}。")
        for i in range(30)
    ]
    units.replace("team-b", noise)  # many units with the query's bigrams, in another team
    shared = {h.record.id: h.score for h in units.search("team-a", "梅雨前線の作曲家", limit=5)}
    assert shared.keys() == alone.keys()
    for rid, score in alone.items():
        assert shared[rid] == pytest.approx(score, rel=1e-6)
    units.delete("team-b", [r.id for r in noise])  # alone again: the shard's own IDF
    again = {h.record.id: h.score for h in units.search("team-a", "梅雨前線の作曲家", limit=5)}
    assert again == pytest.approx(alone, rel=1e-6)


def test_scores_are_bm25_over_the_teams_units(units) -> None:
    """idf(t) = ln(1 + (N - df + 0.5) / (df + 0.5)) over the team's units, times the unit's
    term-frequency part: checked against a hand count for a one-bigram query."""
    units.replace("t", [RAIN, MAHLER])  # 4 units; 前線 occurs in one of them
    (hit,) = units.search("t", "前線", limit=5)
    unit = "梅雨\n梅雨前線が停滞すると雨が続く。"
    vec = doc_vector(bigrams(unit), k1=K1, b=B, avgdl=AVG_UNIT_BIGRAMS)
    tf_part = dict(zip(vec.indices, vec.values, strict=True))[term_id("前線")]
    assert hit.score == pytest.approx(idf(4, 1) * tf_part, rel=1e-5)


def test_scores_follow_the_unit_count_after_every_write(units) -> None:
    """The team's unit count is cached between writes: a write must show in the next IDF."""
    units.replace("t", [RAIN, MAHLER])
    unit = "梅雨\n梅雨前線が停滞すると雨が続く。"
    vec = doc_vector(bigrams(unit), k1=K1, b=B, avgdl=AVG_UNIT_BIGRAMS)
    tf_part = dict(zip(vec.indices, vec.values, strict=True))[term_id("前線")]
    (first,) = units.search("t", "前線", limit=5)
    assert first.score == pytest.approx(idf(4, 1) * tf_part, rel=1e-5)
    more = Record(id="m#0", doc_id="m", field="body", text="交響曲を書いた。歌曲も残した。")
    units.replace("t", [more])
    n = units.count("t")
    assert n > 4
    (second,) = units.search("t", "前線", limit=5)
    assert second.score == pytest.approx(idf(n, 1) * tf_part, rel=1e-5)
    units.delete("t", [more.id])
    (third,) = units.search("t", "前線", limit=5)
    assert third.score == pytest.approx(first.score, rel=1e-6)


def test_term_counts_are_kept_between_writes_and_renewed_by_each(units, monkeypatch) -> None:
    """Document frequencies are read once and kept: a term no unit held (kept as 0) and a term
    a write adds to more units both show in the next search; past the cap the kept counts
    start again and searches still score as the table says."""
    units.replace("t", [RAIN, MAHLER])
    assert units.search("t", "歌曲", limit=5) == []  # 歌曲: no unit yet (df 0 kept)
    (first,) = units.search("t", "前線", limit=5)
    more = [
        Record(id="s#0", doc_id="s", field="body", text="前線が北上した。歌曲の夕べ。"),
        Record(id="w#0", doc_id="w", field="body", text="寒冷前線の通過。"),
    ]
    units.replace("t", more)
    assert [h.record.id for h in units.search("t", "歌曲", limit=5)] == ["s#0"]
    n = units.count("t")
    scores = {h.record.id: h.score for h in units.search("t", "前線", limit=5)}
    assert set(scores) == {"rain#0", "s#0", "w#0"}
    assert scores["rain#0"] < first.score  # three units hold 前線 now, of more units
    assert units.idf_weights("t", [term_id("前線")]) == {term_id("前線"): idf(n, 3)}
    texts = ("梅雨前線の停滞", "交響曲と歌曲", "北海道の梅雨")
    before = [{h.record.id: h.score for h in units.search("t", q, limit=5)} for q in texts]
    monkeypatch.setattr("tansaku.store.units.MAX_CACHED_TERMS", 3)
    for _ in range(2):
        after = [{h.record.id: h.score for h in units.search("t", q, limit=5)} for q in texts]
        assert after == before


def test_an_interrupted_write_is_recounted_on_open(tmp_path) -> None:
    store = UnitStore(tmp_path / "u")
    store.replace("t", [RAIN, MAHLER])
    before = {h.record.id: h.score for h in store.search("t", "梅雨の作曲家", limit=5)}
    store._set_dirty(True)  # as if the process died between the shard write and the counts
    with store._db:
        store._db.execute("UPDATE df SET n = n + 7")
    store.close()
    again = UnitStore(tmp_path / "u")
    try:
        after = {h.record.id: h.score for h in again.search("t", "梅雨の作曲家", limit=5)}
        assert after == pytest.approx(before, rel=1e-6)
    finally:
        again.close()


def test_a_sole_team_searches_without_the_team_condition_but_never_returns_another(
    units,
) -> None:
    units.replace("team-a", [RAIN, MAHLER])
    assert units._sole("team-a") and not units._sole("team-b")
    assert units.search("team-b", "梅雨前線", limit=5) == []
    units.replace("team-b", [Record(id="b#0", doc_id="b", field="body", text="梅雨前線の話。")])
    assert not units._sole("team-a")  # the write cleared the cached team list
    units._tenants = frozenset({"team-b"})  # stale: as if team-a's units were not there
    assert [h.record.id for h in units.search("team-b", "梅雨前線", limit=5)] == ["b#0"]


class TestUnitStoreContract(UnitIndexContract):
    @pytest.fixture
    def units(self, tmp_path):
        store = UnitStore(tmp_path / "units")
        yield store
        store.close()

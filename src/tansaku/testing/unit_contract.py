"""The contract every backend's :class:`~tansaku.store.protocols.UnitIndex` (the sentence
units of ``bigram`` axes and their IDF statistics) passes. Subclass and override ``units``::

class TestMyUnits(UnitIndexContract):
    @pytest.fixture
    def units(self, tmp_path):
        yield MyUnits(...)
"""

from __future__ import annotations

import math
from datetime import date

import pytest

from tansaku.records import Record
from tansaku.store.base import Filter
from tansaku.store.protocols import UnitIndex
from tansaku.store.sparse import term_id
from tansaku.text.ngram import bigrams, unit_texts

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
TITLE = Record(id="rain#t", doc_id="rain", field="title", text="梅雨の季節", metadata={})


class UnitIndexContract:
    @pytest.fixture
    def units(self, tmp_path):
        raise NotImplementedError

    def test_it_is_a_unit_index(self, units: UnitIndex) -> None:
        assert isinstance(units, UnitIndex)

    def test_replace_writes_one_unit_per_sentence(self, units: UnitIndex) -> None:
        want = len(unit_texts(RAIN.text, RAIN.metadata)) + len(
            unit_texts(MAHLER.text, MAHLER.metadata)
        )
        assert units.replace("t", [RAIN, MAHLER]) == want == units.count("t")
        assert units.count("t", Filter(doc_ids=("rain",))) == len(
            unit_texts(RAIN.text, RAIN.metadata)
        )

    def test_search_scores_a_record_once_by_its_best_unit(self, units: UnitIndex) -> None:
        units.replace("t", [RAIN, MAHLER])
        hits = units.search("t", "梅雨前線が停滞するとどうなる？", limit=5)
        assert [h.record.id for h in hits] == ["rain#0"] and hits[0].score > 0
        assert hits[0].record.doc_id == "rain"
        assert units.search("t", "梅雨前線") == units.search("t", "梅雨前線", limit=10)

    def test_weights_scale_each_bigrams_part_of_the_score(self, units: UnitIndex) -> None:
        units.replace("t", [RAIN, MAHLER])
        query = "梅雨前線が停滞するとどうなる？"
        (plain,) = units.search("t", query, limit=5)
        halved = units.search("t", query, limit=5, weights=dict.fromkeys(bigrams(query), 0.5))
        assert halved[0].score == pytest.approx(plain.score / 2)
        # down-weighting the frame (どうなる？) leaves the content bigrams' score whole
        frame = dict.fromkeys(bigrams("るとどうなる？"), 0.0)
        (content,) = units.search("t", query, limit=5, weights=frame)
        (only,) = units.search("t", "梅雨前線が停滞する", limit=5)
        assert content.score == pytest.approx(only.score) and content.score < plain.score

    def test_tenants_and_filters_scope_every_read(self, units: UnitIndex) -> None:
        units.replace("a", [RAIN])
        units.replace("b", [MAHLER])
        assert units.search("b", "梅雨前線", limit=5) == []
        day = date(2025, 12, 9)
        assert units.search("a", "梅雨", filter=Filter(date_from=day, date_to=day), limit=5)
        assert units.search("a", "梅雨", filter=Filter(equals={"store": "駅前店"}), limit=5) == []
        units.delete("b", [RAIN.id])  # another team's ids never touch team a
        assert units.count("a") > 0

    def test_idf_counts_the_teams_units_of_the_fields(self, units: UnitIndex) -> None:
        units.replace("t", [RAIN, MAHLER, TITLE])
        units.replace("other", [RAIN])
        n_body = units.count("t", Filter(fields=("body",)))
        term = term_id("梅雨")
        with_term = sum("梅雨" in u for u in unit_texts(RAIN.text, RAIN.metadata))
        weights = units.idf_weights("t", [term, term_id("存在")], ("body",))
        want = math.log(1 + (n_body - with_term + 0.5) / (with_term + 0.5))
        assert weights == {term: pytest.approx(want)}
        assert units.idf_weights("t", [term])[term] < weights[term]  # the title has it too

    def test_counts_follow_writes_and_recount_agrees(self, units: UnitIndex) -> None:
        units.replace("t", [RAIN, MAHLER, TITLE])
        units.replace("u", [MAHLER])
        units.delete("t", [MAHLER.id])
        units.replace("t", [TITLE])
        counted = units.unit_counts(from_shard=True)
        assert units.unit_counts(from_shard=False) == counted
        assert counted[("u", "body")] == units.count("u")
        before = units.idf_weights("t", [term_id("梅雨")])
        units.recount()
        assert units.idf_weights("t", [term_id("梅雨")]) == before

    def test_delete_tenant_removes_units_and_counts(self, units: UnitIndex) -> None:
        units.replace("t", [RAIN])
        units.replace("u", [MAHLER])
        units.delete_tenant("t")
        assert units.count("t") == 0 and units.search("t", "梅雨", limit=5) == []
        assert units.idf_weights("t", [term_id("梅雨")]) == {}
        assert {k[0] for k in units.unit_counts(from_shard=False)} == {"u"}

    def test_maintenance_keeps_units_searchable(self, units: UnitIndex) -> None:
        units.replace("t", [RAIN])
        units.optimize()
        units.flush()
        assert units.search("t", "梅雨前線", limit=1)[0].record.id == "rain#0"

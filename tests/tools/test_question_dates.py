"""A question's date expression leaves its words only where the date filtered the search: a
collection whose records carry dates takes 「2023年」 of 「2023年のレジの故障は?」 as a period,
one without dates (an encyclopedia) keeps 「1953年」 of 「1953年に実験を行ったのは?」 as words."""

from __future__ import annotations

from datetime import datetime

import pytest

import tansaku
from tansaku.testing import HashEmbedder
from tansaku.text.dates import TOKYO
from tansaku.tools.scope import Question, search_scope
from tansaku.tools.spec import ToolScope

NOW = datetime(2025, 12, 11, 9, 0, tzinfo=TOKYO)


def test_a_question_as_each_search_took_it() -> None:
    q = Question.of("1953年にミラーが実験を行った大学は?", NOW)
    assert "1953" not in q.terms and "ミラー" in q.terms
    assert q.as_searched(True) is q
    kept = q.as_searched(False)
    assert "1953" in kept.terms and kept.remainder == kept.text == q.text
    plain = Question.of("ミラーが実験を行った大学は?", NOW)
    assert plain.as_searched(False) is plain


@pytest.fixture(scope="module")
def client(tmp_path_factory):
    rec = tansaku.Record
    with tansaku.connect(tmp_path_factory.mktemp("qdates"), embedder=HashEmbedder(32)) as ts:
        ts.ingest_records(
            [
                rec("w1:body", "w1", "body", "1953年にミラーはシカゴ大学で実験を行った。"),
                rec("w2:body", "w2", "body", "1960年にミラーはカリフォルニア大学で実験を行った。"),
            ],
            collection="wiki",
        )
        ts.ingest_records(
            [
                rec(
                    "r1:body", "r1", "body", "レジの故障で会計を手作業で行った。",
                    {"title": "日報", "date": "2023-05-02"},
                ),
                rec(
                    "r2:body", "r2", "body", "レジの故障で釣り銭が合わなかった。",
                    {"title": "日報", "date": "2025-11-20"},
                ),
            ],
            collection="reports",
        )  # fmt: skip
        yield ts


def test_an_undated_collection_keeps_the_year_as_words(client) -> None:
    scope = ToolScope(client=client, now=NOW)
    found = search_scope(scope, Question.of("1953年にミラーが実験を行った大学は?", NOW), ["wiki"])
    assert "1953" in found.weights["wiki"]
    assert found.period == ""


def test_a_dated_collection_takes_the_year_as_its_period(client) -> None:
    scope = ToolScope(client=client, now=NOW)
    found = search_scope(scope, Question.of("2023年のレジの故障は?", NOW), ["reports"])
    assert "2023" not in found.weights["reports"]
    assert found.period == "2023-01-01〜2023-12-31"
    assert {c.hit.doc_id for c in found.candidates} == {"r1"}

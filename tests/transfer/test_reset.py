"""``reset_team``: a team's records leave every collection in one call, other teams' stay, and
a collection left empty is removed unless asked to keep it."""

from __future__ import annotations

from pathlib import Path

import pytest

import tansaku
from tansaku.embed.hash import HashEmbedder
from tansaku.errors import ConfigError
from tansaku.records import Record
from tansaku.transfer.reset import reset_team


def rec(doc: str, text: str) -> Record:
    return Record(id=f"{doc}:body", doc_id=doc, field="body", text=text)


@pytest.fixture
def ts(tmp_path: Path):
    with tansaku.connect(tmp_path / "ws", embedder=HashEmbedder(16)) as ts:
        ts.ingest_records([rec("a1", "冷蔵庫の温度を確認した。")], collection="reports", team="a")
        ts.ingest_records([rec("b1", "レジの釣り銭を数えた。")], collection="reports", team="b")
        notes = [rec("a2", "食洗機の水漏れを修理した。"), rec("a3", "床を清掃した。")]
        ts.ingest_records(notes, collection="notes", team="a")
        ts.ingest_records([rec("b2", "金庫を施錠した。")], collection="vault", team="b")
        yield ts


def test_reset_removes_the_teams_records_everywhere(ts):
    report = reset_team(ts, "a")
    assert report.collections == {"notes": 2, "reports": 1}
    assert report.records == 3
    assert report.emptied == report.removed == ("notes",)
    assert not ts.has_collection("notes")
    assert ts.collection("reports").store.count("a") == 0
    assert ts.collection("reports").store.count("b") == 1
    assert ts.collection("vault").store.count("b") == 1
    assert ts.search("釣り銭", collection="reports", team="b").hits[0].doc_id == "b1"
    assert reset_team(ts, "a").collections == {}


def test_reset_can_keep_emptied_collections(ts):
    report = reset_team(ts, "b", drop_empty=False)
    assert report.emptied == ("vault",) and report.removed == ()
    assert ts.has_collection("vault")
    assert ts.collection("vault").store.count("b") == 0


def test_a_bad_team_name_is_refused(ts):
    with pytest.raises(ConfigError, match="チーム名"):
        reset_team(ts, "../a")

"""The id table a writer leaves with each generation: point id → team, record, document, field
and source type, equal to what the engine's payloads say after every kind of write, and what a
reader resolves search candidates from without a payload read."""

from __future__ import annotations

import os
from pathlib import Path
from types import SimpleNamespace

import pytest
import qdrant_edge as qe

import tansaku
from tansaku.records import Record
from tansaku.store.candidates import BARE_KEYS, PAYLOAD_KEYS, CandidateIndex
from tansaku.store.idtable import IdTable, scrolled, table_path
from tansaku.testing import HashEmbedder

REPORTS = [
    ("r1", "店舗A 日報", "冷蔵庫の温度が上がらず、業者に修理を依頼した。", "daily_report"),
    ("r2", "店舗B 日報", "レジの釣り銭が千円合わなかった。本部に報告済み。", "daily_report"),
    ("p1", "掲示板", "新メニューの試食会は来週の火曜日に行います。", "bbs_post"),
    ("p2", "掲示板", "駐車場の照明が切れています。交換をお願いします。", "bbs_post"),
]


def _records(rows=REPORTS, *, field: str = "body") -> list[Record]:
    return [
        Record(f"{doc}#0", doc, field, text, {"title": title, "source_type": kind})
        for doc, title, text, kind in rows
    ]


def _shards(home: Path, name: str) -> list[Path]:
    col = home / "collections" / name
    gen = col / "gens" / (col / "CURRENT").read_text(encoding="utf-8").strip()
    return [gen / "shard", gen / "units"]


def _assert_tables_match_the_shards(home: Path, name: str) -> None:
    for path in _shards(home, name):
        table = IdTable.open(path)
        assert table is not None, path
        shard = qe.EdgeShard.load(str(path))
        try:
            keys = PAYLOAD_KEYS if path.name == "shard" else BARE_KEYS
            want = dict(scrolled(shard, list(keys)))
        finally:
            shard.close()
        assert table.count == len(want)
        found, rows = table.positions(list(want))
        assert dict(zip(found, table.rows(rows), strict=True)) == want


@pytest.fixture
def client(tmp_path):
    with tansaku.connect(tmp_path / "home", embedder=HashEmbedder(32)) as ts:
        yield ts


def test_every_write_leaves_a_table_equal_to_the_payloads(client) -> None:
    home = client.workspace.home
    client.ingest_records(_records(), collection="reports", team="alpha")
    _assert_tables_match_the_shards(home, "reports")

    # another team, then a record rewritten in another field and one document gone (sync)
    client.ingest_records(_records(REPORTS[:2]), collection="reports", team="beta")
    moved = _records(REPORTS[:1], field="summary") + _records(REPORTS[1:3])
    client.ingest_records(moved, collection="reports", team="alpha", sync=True)
    _assert_tables_match_the_shards(home, "reports")
    alpha = IdTable.open(_shards(home, "reports")[0])
    assert alpha is not None
    rows = alpha.rows(list(range(alpha.count)))
    assert ("alpha", "r1#0", "r1", "summary", "daily_report") in [r[:5] for r in rows]
    assert not any(team == "alpha" and doc == "p2" for team, _, doc, *_ in rows)
    assert all(row[5] > 0 for row in rows)  # every record's BM25 length, as its payload says

    client.delete_collection("reports", team="alpha")  # every record of one team
    _assert_tables_match_the_shards(home, "reports")
    beta = IdTable.open(_shards(home, "reports")[0])
    assert beta is not None and set(beta.teams[c] for c in beta.team.tolist()) == {"beta"}


def test_a_generation_without_a_table_gets_one_at_its_next_write(client) -> None:
    home = client.workspace.home
    client.ingest_records(_records(REPORTS[:2]), collection="reports")
    for path in _shards(home, "reports"):  # as generations were written before tables
        table_path(path).unlink()
    client.ingest_records(_records(REPORTS[2:]), collection="reports")
    _assert_tables_match_the_shards(home, "reports")


def test_searches_find_the_same_records_with_and_without_the_table(client) -> None:
    home = client.workspace.home
    client.ingest_records(_records(), collection="reports")
    questions = ["冷蔵庫が壊れた", "レジの現金が合わない", "照明の交換", "試食会はいつ"]
    before = [[h.record.id for h in client.search(q, collection="reports").hits] for q in questions]
    for path in _shards(home, "reports"):
        table_path(path).unlink()
    with tansaku.connect(home, embedder=HashEmbedder(32)) as fresh:
        after = [
            [h.record.id for h in fresh.search(q, collection="reports").hits] for q in questions
        ]
    assert after == before and all(before)


def test_a_reader_resolves_candidates_from_the_table_alone(client) -> None:
    """No shard to read payloads from: every identity comes from the table; another team's
    point is dropped, an unknown id too."""
    from tansaku.store.ids import point_id

    home = client.workspace.home
    client.ingest_records(_records(), collection="reports", team="alpha")
    client.ingest_records(_records(REPORTS[:1]), collection="reports", team="beta")
    index = CandidateIndex(table=IdTable.open(_shards(home, "reports")[0]))
    points = [
        SimpleNamespace(id=point_id("alpha", "p1#0"), score=0.9),
        SimpleNamespace(id=point_id("beta", "r1#0"), score=0.8),
        SimpleNamespace(id=point_id("alpha", "r2#0"), score=0.7),
    ]
    found = index.resolve(None, points, "alpha")
    assert [(s.record.id, s.record.doc_id, s.record.field, s.score) for s in found] == [
        ("p1#0", "p1", "body", 0.9),
        ("r2#0", "r2", "body", 0.7),
    ]
    stored = {i.record.id: i.bm25_len for i in client.collection("reports").store.scan("alpha")}
    assert [s.length for s in found] == [stored["p1#0"], stored["r2#0"]] and all(stored.values())
    assert found[0].record.metadata == {"source_type": "bbs_post"} and found[0].record.text == ""
    assert len(index) == 3  # remembered: the next search reads nothing
    missing = SimpleNamespace(id=point_id("alpha", "gone#0"), score=0.5)
    with pytest.raises(AttributeError):  # not in the table: a payload read (of no shard here)
        index.resolve(None, [missing], "alpha")


@pytest.mark.parametrize("damage", ["truncated", "magic", "version", "column"])
def test_a_damaged_table_is_left_unread(client, damage) -> None:
    import json

    home = client.workspace.home
    client.ingest_records(_records(), collection="reports")
    path = table_path(_shards(home, "reports")[0])
    data = path.read_bytes()
    size = int.from_bytes(data[8:16], "little")
    header = json.loads(data[16 : 16 + size])
    if damage == "truncated":
        data = data[: len(data) // 2]
    elif damage == "magic":
        data = b"NOTATABL" + data[8:]
    else:
        if damage == "version":
            header["version"] = 99
        else:  # a column said to hold one row fewer than the others
            header["columns"]["team"][2] -= 1
        head = json.dumps(header).encode("utf-8").ljust(size)
        data = data[:16] + head + data[16 + size :]
    path.write_bytes(data)
    assert IdTable.open(_shards(home, "reports")[0]) is None
    with tansaku.connect(home, embedder=HashEmbedder(32)) as fresh:
        assert fresh.search("冷蔵庫", collection="reports").hits  # payload reads instead


def test_an_idle_shard_lets_go_of_its_table_and_maps_it_again(client) -> None:
    """Closing an idle read-only shard unmaps its table (no file held open per idle
    collection); its next use maps it again."""
    from tansaku.store.edge import EdgeStore

    client.ingest_records(_records(), collection="reports")
    shard = _shards(client.workspace.home, "reports")[0]

    def held() -> int:
        fds = Path("/proc/self/fd")
        return sum(1 for fd in os.listdir(fds) if _target(fds / fd) == str(table_path(shard)))

    store = EdgeStore(shard, dim=32, read_only=True)
    try:
        assert held() == 1  # one mapping of one file
        assert store.idle_close() and held() == 0
        assert store.total() == len(REPORTS) and held() == 1
    finally:
        store.close()


def _target(link: Path) -> str:
    try:
        return os.readlink(link)
    except OSError:  # closed meanwhile
        return ""


def test_a_large_write_builds_its_table_from_the_shard(client, monkeypatch) -> None:
    """Past ``MAX_CHANGES`` the writer keeps no log (its memory stays flat) and the table
    comes from one scroll: the same table."""
    from tansaku.store.idtable import IdLog

    monkeypatch.setattr(IdLog, "MAX_CHANGES", 3)
    rows = [
        (f"d{i}", "日報", f"{i}番目の報告。冷蔵庫を点検した。", "daily_report") for i in range(8)
    ]
    client.ingest_records(_records(rows), collection="reports")
    _assert_tables_match_the_shards(home := client.workspace.home, "reports")
    client.ingest_records(_records(rows[:2]), collection="reports", sync=True)
    _assert_tables_match_the_shards(home, "reports")


def _as_version_1(path: Path) -> None:
    """Rewrite the table of ``path`` as the version before the length column (its bytes stay,
    the header no longer names them)."""
    import json

    file = table_path(path)
    data = file.read_bytes()
    size = int.from_bytes(data[8:16], "little")
    header = json.loads(data[16 : 16 + size])
    header["version"] = 1
    del header["columns"]["blen"]
    head = json.dumps(header, ensure_ascii=False).encode("utf-8").ljust(size)
    file.write_bytes(data[:16] + head + data[16 + size :])


def test_a_table_without_lengths_is_read_and_rebuilt_at_the_next_write(client) -> None:
    """A generation written before the length column keeps its table readable (lengths 0:
    the fusion weighs those records × 1), ``tansaku doctor`` names it, and the next write
    builds the current table from the shard, lengths included."""
    from tansaku.maintenance.doctor import check

    home = client.workspace.home
    client.ingest_records(_records(REPORTS[:2]), collection="reports")
    shard = _shards(home, "reports")[0]
    _as_version_1(shard)
    old = IdTable.open(shard)
    assert old is not None and old.version == 1 and not old.current
    assert {row[5] for row in old.rows(list(range(old.count)))} == {0}
    with tansaku.connect(home, embedder=HashEmbedder(32)) as fresh:
        assert fresh.search("冷蔵庫", collection="reports").hits
        findings = check(fresh)
    assert [f.check for f in findings if "古い形式" in f.message] == ["ids"], findings

    client.ingest_records(_records(REPORTS[2:]), collection="reports")
    _assert_tables_match_the_shards(home, "reports")
    new = IdTable.open(_shards(home, "reports")[0])
    assert new is not None and new.current and new.count == len(REPORTS)
    assert all(row[5] > 0 for row in new.rows(list(range(new.count))))

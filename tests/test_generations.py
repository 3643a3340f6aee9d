"""Generations: commits, readers across a commit, removal of old generations, deletes, the
legacy layout's migration, and read commands that never create a workspace."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

import pytest
import qdrant_edge as qe

import tansaku
from tansaku.backends.embedded import generations, handles
from tansaku.backends.locks import WriterLock
from tansaku.config import Axis, AxisMode, CollectionConfig
from tansaku.errors import CollectionBusy, CollectionNotFound, WorkspaceNotFound
from tansaku.records import Record
from tansaku.testing import HashEmbedder

CONFIG = CollectionConfig(
    name="faq",
    axes=(
        Axis(name="bm25", mode=AxisMode.BM25, weight=0.4),
        Axis(name="dense", mode=AxisMode.DENSE, weight=0.3),
        Axis(name="bigram", mode=AxisMode.BIGRAM, weight=0.3),
    ),
)
TEXTS = [
    "冷蔵庫の温度が上がらず、食材を廃棄した。",
    "お客様から提供が遅いとのクレームがあった。",
    "レジの現金が千円合わなかった。",
    "食洗機から水漏れがあり、業者に修理を依頼した。",
]


def records(prefix: str = "r") -> list[Record]:
    return [
        Record(id=f"{prefix}{i}#0", doc_id=f"{prefix}{i}", field="body", text=t)
        for i, t in enumerate(TEXTS)
    ]


@pytest.fixture
def ts(tmp_path):
    with tansaku.connect(tmp_path / "home", embedder=HashEmbedder(32)) as client:
        yield client


def test_a_reader_keeps_its_generation_across_a_commit_and_moves_on_after(ts) -> None:
    ts.ingest_records(records(), collection="faq", config=CONFIG)
    with ts.reading("faq") as old:
        ts.ingest_records(records("s"), collection="faq")
        assert old.store.count("default") == 4  # still the generation it opened
        old_gen = old.gen
    new = ts.collection("faq")
    assert new.gen != old_gen and new.store.count("default") == 8
    ts.ingest_records(records("t"), collection="faq")
    assert old_gen.exists() and old.store.count("default") == 4  # held: a snapshot, still usable
    gens = new.path / "gens"
    del old, new
    ts.ingest_records(records("u"), collection="faq")
    assert not old_gen.exists()  # nobody holds it any more: the next writer removed it
    assert sorted(p.name for p in gens.iterdir()) == [ts.collection("faq").gen.name]


def test_another_process_pin_keeps_a_generation_until_released(ts, tmp_path) -> None:
    ts.ingest_records(records(), collection="faq", config=CONFIG)
    col_dir = ts.collection("faq").path
    first = generations.current(col_dir)
    held = handles.lease(first, dim=32)  # as a reader process would hold it
    try:
        ts.ingest_records(records("s"), collection="faq")
        ts.ingest_records(records("t"), collection="faq")
        assert first.exists()
    finally:
        handles.release(held)
    ts.ingest_records(records("u"), collection="faq")
    assert not first.exists()


def test_one_engine_handle_per_generation_per_process(tmp_path) -> None:
    home = tmp_path / "home"
    with tansaku.connect(home, embedder=HashEmbedder(32)) as a:
        a.ingest_records(records(), collection="faq", config=CONFIG)
        a.collection("faq")
        before = handles.open_count()
        with tansaku.connect(home, embedder=HashEmbedder(32)) as b:
            assert a.collection("faq").handles is b.collection("faq").handles
            assert handles.open_count() == before


def test_second_writer_in_the_same_process_gives_up_with_the_holder(ts, monkeypatch) -> None:
    monkeypatch.setenv("TANSAKU_WRITE_WAIT", "0.3")
    ts.ingest_records(records(), collection="faq", config=CONFIG)
    lock = WriterLock(ts.collection("faq").path / "write.lock", "コレクション「faq」")
    with lock, pytest.raises(CollectionBusy, match="書き込み中です"), ts.writing("faq"):
        pass
    assert ts.collection("faq").store.count("default") == 4


def test_a_search_carries_the_generation_and_embedder_it_read(ts) -> None:
    """The versions a search event records are those of the view the search ran on, also
    when a commit lands right after it; ``CURRENT`` and a missing collection read as before."""
    ts.ingest_records(records(), collection="faq", config=CONFIG)
    col = ts.collection("faq")
    first = ts.search("冷蔵庫", collection="faq")
    assert first.versions == {
        "index_version": col.gen.name,
        "embedding_version": str(col.state.embedder),
    }
    assert "versions" not in first.to_dict()  # the JSON of search --json is unchanged
    ts.ingest_records(records("s"), collection="faq", config=CONFIG)
    second = ts.search("冷蔵庫", collection="faq").versions["index_version"]
    assert second == generations.current(col.path).name != first.versions["index_version"]
    assert generations.current_name(str(col.path)) == second
    assert generations.current_name(str(col.path / "nothing-here")) == ""


def test_delete_a_team_then_the_collection(ts) -> None:
    ts.ingest_records(records(), collection="faq", config=CONFIG, team="shinjuku")
    ts.ingest_records(records(), collection="faq", config=CONFIG, team="shibuya")
    ts.delete_collection("faq", team="shinjuku")
    col = ts.collection("faq")
    assert col.store.count("shinjuku") == 0 and col.store.count("shibuya") == 4
    assert "shinjuku" not in col.state.bm25 and col.units.count("shinjuku") == 0
    assert ts.search("冷蔵庫", collection="faq", team="shinjuku").hits == ()
    assert [i.teams for i in ts.collections()] == [("shibuya",)]
    ts.ingest_records(records(), collection="manuals", config=CONFIG, team="shibuya")
    assert [i.name for i in ts.collections()] == ["faq", "manuals"]
    assert ts.collections(only="manuals") == [ts.collections()[1]]  # one read, the same info
    assert ts.collections(only="missing") == [] and ts.collections(only="../faq") == []
    ts.delete_collection("manuals")
    ts.delete_collection("faq")
    assert ts.workspace.collection_names() == []
    with pytest.raises(CollectionNotFound):
        ts.collection("faq")
    assert not any(ts.workspace.collections_dir.iterdir())


def test_read_only_connect_never_creates_a_workspace(tmp_path) -> None:
    missing = tmp_path / "typo" / "home"
    with pytest.raises(WorkspaceNotFound):
        tansaku.connect(missing, create=False)
    assert not (tmp_path / "typo").exists()


def _legacy_shard(src: Path, dst: Path, config: qe.EdgeConfig) -> None:
    """A shard as tansaku wrote it before generations: with a write-ahead log."""
    old = qe.EdgeShard.load(str(src))
    new = qe.EdgeShard.create(str(dst), config)
    offset = None
    while True:
        points, offset = old.scroll(
            qe.ScrollRequest(offset=offset, limit=100, with_payload=True, with_vector=True)
        )
        if points:
            new.update(
                qe.UpdateOperation.upsert_points(
                    [qe.Point(p.id, p.vector, p.payload or {}) for p in points]
                )
            )
        if offset is None or not points:
            break
    old.close()
    new.flush()
    new.close()


def test_a_legacy_collection_with_lost_statistics_is_migrated_and_repaired(tmp_path) -> None:
    home = tmp_path / "home"
    with tansaku.connect(home, embedder=HashEmbedder(32)) as ts:
        ts.ingest_records(records(), collection="faq", config=CONFIG)
        col = ts.collection("faq")
        gen, col_dir = col.gen, col.path
        good = json.loads((gen / "state.json").read_text(encoding="utf-8"))
        top = [h.doc_id for h in ts.search("冷蔵庫の温度", collection="faq").hits]
    dense = {"dense": qe.EdgeVectorParams(size=32, distance=qe.Distance.Cosine)}
    sparse = {"bm25": qe.EdgeSparseVectorParams(modifier=qe.Modifier.Idf)}
    _legacy_shard(
        gen / "shard", col_dir / "shard", qe.EdgeConfig(vectors=dense, sparse_vectors=sparse)
    )
    _legacy_shard(
        gen / "units",
        col_dir / "units",
        qe.EdgeConfig(vectors={}, sparse_vectors={"bigram": qe.EdgeSparseVectorParams()}),
    )
    shutil.copy(gen / "units" / "df.sqlite", col_dir / "units" / "df.sqlite")
    assert (col_dir / "shard" / "wal").is_dir()
    lost = dict(good, bm25={})  # a kill -9 before generations lost the statistics
    (col_dir / "state.json").write_text(json.dumps(lost), encoding="utf-8")
    shutil.rmtree(col_dir / "gens")
    (col_dir / "CURRENT").unlink()

    with tansaku.connect(home, embedder=HashEmbedder(32)) as ts:
        assert [h.doc_id for h in ts.search("冷蔵庫の温度", collection="faq").hits] == top
        migrated = ts.collection("faq")
        state = json.loads((migrated.gen / "state.json").read_text(encoding="utf-8"))
    assert state["bm25"] == good["bm25"] and state["units"] == good["units"]
    assert not any((col_dir / p).exists() for p in ("shard", "units", "state.json"))
    with sqlite3.connect(migrated.gen / "units" / "df.sqlite") as con:
        assert con.execute("SELECT SUM(n) FROM units").fetchone()[0] > 0


def test_checkpoints_publish_as_they_go_and_keep_the_disk_bounded(ts, monkeypatch) -> None:
    import tansaku.ingest.apply

    monkeypatch.setattr(tansaku.ingest.apply, "BATCH", 1)
    monkeypatch.setenv("TANSAKU_CHECKPOINT_S", "0")
    seen: list[set[str]] = []

    def progress(stage: str, done: int, total: int) -> None:
        if stage == "write":
            gens = ts.workspace.collection_dir("faq") / "gens"
            seen.append({p.name for p in gens.iterdir()})

    ts.ingest_records(records() + records("s"), collection="faq", config=CONFIG, progress=progress)
    assert len(seen) == 8 and max(len(s) for s in seen) <= 2  # committed + working
    assert ts.collection("faq").store.count("default") == 8


def test_a_collection_deleted_and_made_again_elsewhere_is_read_anew(tmp_path) -> None:
    """Another client (another process, or a server's search process) deletes a collection
    and makes one of the same name: this client, which had read the old one, reads the new
    one — its first generation has the old one's name, and the handles of the old one must
    not be taken for it."""
    home = tmp_path / "home"
    with tansaku.connect(home, embedder=HashEmbedder(32)) as reader:
        with tansaku.connect(home, embedder=HashEmbedder(32)) as other:
            other.ingest_records(records("old"), collection="faq", config=CONFIG)
        assert reader.search("冷蔵庫", collection="faq").hits[0].doc_id == "old0"
        with tansaku.connect(home, embedder=HashEmbedder(32)) as other:
            other.delete_collection("faq")
            other.ingest_records(records("new"), collection="faq", config=CONFIG)
        hits = reader.search("冷蔵庫", collection="faq").hits
        assert hits[0].doc_id == "new0"
        assert {h.doc_id for h in hits} <= {f"new{i}" for i in range(len(TEXTS))}

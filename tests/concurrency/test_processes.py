"""Several processes on one workspace: searches and listings during an ingest, two writers,
vague (expanded, multi-threaded) queries on a cold collection, and kill -9 at every stage of an
ingest. Each actor is a fresh Python process (tests/concurrency/actor.py)."""

from __future__ import annotations

import shutil
import sqlite3
import time
from pathlib import Path

import pytest

import tansaku
from tansaku.testing import HashEmbedder

from .support import bm25_stats, ok_json, run, start, write_reports

pytestmark = pytest.mark.e2e


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path / "ws"


def _seed(home: Path, folder: Path) -> None:
    with tansaku.connect(home, embedder=HashEmbedder(32)) as ts:
        ts.ingest([folder], collection="reports")


def test_vague_queries_on_a_cold_collection_in_fresh_processes(home, tmp_path) -> None:
    _seed(home, write_reports(tmp_path / "src", 40))
    procs = [start("search", str(home), "昨日の問題") for _ in range(5)]
    for p in procs:
        _out, err = p.communicate(timeout=180)
        assert p.returncode == 0 and "Traceback" not in err, err
    assert not (home / "collections" / "reports" / "shard").exists()  # generations only


def test_searches_and_listing_during_an_ingest_and_a_second_writer_waits(home, tmp_path) -> None:
    _seed(home, write_reports(tmp_path / "v1", 30))
    big = write_reports(tmp_path / "v2", 400, variant=1)
    marker, hold = tmp_path / "writing", tmp_path / "go-on"
    writer = start(
        "ingest", str(home), str(big), "--slow", "0.4", "--marker", str(marker), "--hold", str(hold)
    )
    deadline = time.monotonic() + 120
    while not marker.exists():
        assert writer.poll() is None, writer.communicate()[1]
        assert time.monotonic() < deadline
        time.sleep(0.1)
    readers = [
        start("search", str(home), q)
        for q in ("冷蔵庫の故障", "クレーム", "現金", "研修", "昨日の問題")
    ]
    listing = start("collections", str(home))
    second = start("ingest", str(home), str(tmp_path / "v1"), "--team", "other")
    for p in [*readers, listing]:
        _out, err = p.communicate(timeout=180)
        assert p.returncode == 0 and "Traceback" not in err, err
    assert writer.poll() is None  # every read above ran while the first ingest was writing
    hold.write_text("go on", encoding="utf-8")
    _out, err = writer.communicate(timeout=300)
    assert writer.returncode == 0, err
    _out2, err2 = second.communicate(timeout=300)
    assert second.returncode == 0 and "Traceback" not in err2, err2
    assert "書き込み中です" in err2  # it waited, and said whom for
    stats = bm25_stats(home)
    assert stats["default"] and stats["other"]
    listed = ok_json(run("collections", str(home)))
    assert listed["reports"] == 400 + 30


def test_a_writer_that_cannot_wait_gets_a_message_naming_the_holder(home, tmp_path) -> None:
    _seed(home, write_reports(tmp_path / "v1", 10))
    marker = tmp_path / "writing"
    big = write_reports(tmp_path / "v2", 400, variant=1)
    writer = start("ingest", str(home), str(big), "--slow", "0.5", "--marker", str(marker))
    while not marker.exists():
        assert writer.poll() is None
        time.sleep(0.1)
    busy = run("ingest", str(home), str(tmp_path / "v1"), TANSAKU_WRITE_WAIT="0.5")
    assert busy.returncode != 0
    assert "書き込み中です" in busy.stderr and f"プロセス {writer.pid}" in busy.stderr
    writer.communicate(timeout=300)
    assert writer.returncode == 0


STAGES = [
    "id-table:2",
    "embed:2",
    "units:2",
    "records:2",
    "stats:2",
    "checkpoint:1",
    "delete:1",
    "settled:1",
    "published:1",
]


@pytest.fixture(scope="module")
def clean_run(tmp_path_factory) -> tuple[dict, dict]:
    """The statistics and unit counts of a clean ingest of the final data."""
    base = tmp_path_factory.mktemp("clean")
    home = base / "ws"
    ok_json(run("ingest", str(home), str(_second_version(base / "src")), "--sync"))
    return bm25_stats(home), _unit_counts(home)


def _second_version(folder: Path) -> Path:
    """560 reports, some changed since the first version, some new, every 7th of the first
    200 gone (``--sync`` deletes those)."""
    write_reports(folder, 560, variant=1)
    for i in range(0, 200, 7):
        (folder / f"report-{i:04d}.txt").unlink()
    return folder


def _unit_counts(home: Path) -> dict[tuple[str, str], int]:
    col = home / "collections" / "reports"
    gen = (col / "CURRENT").read_text(encoding="utf-8").strip()
    db = col / "gens" / gen / "units" / "df.sqlite"
    with sqlite3.connect(f"{db.as_uri()}?mode=ro", uri=True) as con:
        return {(t, f): n for t, f, n in con.execute("SELECT tenant, field, n FROM units")}


@pytest.mark.parametrize("stage", STAGES)
@pytest.mark.parametrize("checkpoints", ["every-batch", "none"])
def test_kill_9_during_an_ingest_ends_in_the_statistics_of_a_clean_ingest(
    stage, checkpoints, clean_run, tmp_path
) -> None:
    clean_stats, clean_units = clean_run
    src = write_reports(tmp_path / "src", 200)
    home = tmp_path / "ws"
    ok_json(run("ingest", str(home), str(src)))
    _second_version(src)
    every = "0" if checkpoints == "every-batch" else "3600"
    killed = run(
        "ingest", str(home), str(src), "--sync", TANSAKU_CRASH_AT=stage, TANSAKU_CHECKPOINT_S=every
    )
    if stage == "checkpoint:1" and checkpoints == "none":
        assert killed.returncode == 0  # never reached
    else:
        assert killed.returncode == -9, killed.stderr
    ok_json(run("search", str(home), "冷蔵庫"))  # readable right after the kill
    ok_json(run("ingest", str(home), str(src), "--sync"))
    assert bm25_stats(home) == clean_stats
    assert _unit_counts(home) == clean_units
    listed = ok_json(run("collections", str(home)))
    assert listed["reports"] == sum(c for f in clean_stats.values() for _, c in f.values())
    gens = [p.name for p in (home / "collections" / "reports" / "gens").iterdir()]
    assert len(gens) == 1, gens  # abandoned working generations were removed
    _assert_id_tables(home / "collections" / "reports" / "gens" / gens[0])
    shutil.rmtree(home)


def _assert_id_tables(gen: Path) -> None:
    """The generation's id tables name exactly the points of its shards."""
    import qdrant_edge as qe

    from tansaku.store.candidates import BARE_KEYS, PAYLOAD_KEYS
    from tansaku.store.idtable import IdTable, scrolled

    for name, keys in (("shard", PAYLOAD_KEYS), ("units", BARE_KEYS)):
        table = IdTable.open(gen / name)
        assert table is not None, name
        shard = qe.EdgeShard.load(str(gen / name))
        try:
            want = dict(scrolled(shard, list(keys)))
        finally:
            shard.close()
        found, rows = table.positions(list(want))
        assert table.count == len(want)
        assert dict(zip(found, table.rows(rows), strict=True)) == want


def test_an_application_holding_connect_does_not_block_other_processes(home, tmp_path) -> None:
    _seed(home, write_reports(tmp_path / "v1", 30))
    with tansaku.connect(home, embedder=HashEmbedder(32)) as app:
        assert app.search("冷蔵庫", collection="reports").hits  # its handles are open
        ok_json(run("search", str(home), "冷蔵庫"))
        ok_json(run("ingest", str(home), str(write_reports(tmp_path / "v2", 50, variant=1))))
        assert app.collection("reports").store.count("default") == 50  # sees the commit
        assert app.search("冷蔵庫", collection="reports").hits


def test_threads_search_while_a_thread_ingests(home, tmp_path) -> None:
    import threading

    _seed(home, write_reports(tmp_path / "v1", 30))
    errors: list[BaseException] = []
    done = threading.Event()
    with tansaku.connect(home, embedder=HashEmbedder(32)) as ts:

        def searcher() -> None:
            try:
                while not done.is_set():
                    assert ts.search("昨日の問題", collection="reports", expand=True).hits
            except BaseException as exc:
                errors.append(exc)

        threads = [threading.Thread(target=searcher) for _ in range(4)]
        for t in threads:
            t.start()
        try:
            for k in range(3):
                ts.ingest(
                    [write_reports(tmp_path / f"w{k}", 40 + k * 10, variant=k)],
                    collection="reports",
                )
        finally:
            done.set()
            for t in threads:
                t.join()
    assert not errors, errors

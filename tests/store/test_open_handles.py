"""Open engine shards are bounded per process: many collections searched in turn keep the
threads and the loaded shards under the limit, evicted collections still answer, and a search
in progress never loses its shards."""

from __future__ import annotations

import json
import os
import random
import threading
from pathlib import Path

import pytest

import tansaku
from tansaku.backends.embedded import handles
from tansaku.config import Axis, AxisMode, CollectionConfig
from tansaku.errors import ConfigError
from tansaku.records import Record
from tansaku.store.shard import search_threads
from tansaku.testing import HashEmbedder

pytestmark = pytest.mark.integration  # sixty real collections on disk

N_COLLECTIONS = 60
LIMIT = 6
PLACES = ["札幌", "仙台", "新潟", "金沢", "静岡", "名古屋", "京都", "神戸", "岡山", "広島"]


def config(name: str) -> CollectionConfig:
    return CollectionConfig(
        name=name,
        axes=(
            Axis(name="bm25", mode=AxisMode.BM25, weight=0.5),
            Axis(name="bigram", mode=AxisMode.BIGRAM, weight=0.3),
            Axis(name="dense", mode=AxisMode.DENSE, weight=0.2),
        ),
    )


def code(i: int) -> str:
    """A word only collection ``i`` has."""
    return f"{PLACES[i % len(PLACES)]}店の棚番号{i:03d}"


def records(i: int) -> list[Record]:
    texts = [
        f"{code(i)}で冷蔵庫の温度が上がらず、食材を廃棄した。",
        "お客様から提供が遅いとのクレームがあった。",
        "レジの現金が千円合わなかった。",
    ]
    return [
        Record(id=f"c{i}-{n}#0", doc_id=f"c{i}-{n}", field="body", text=t)
        for n, t in enumerate(texts)
    ]


def threads() -> int:
    return len(os.listdir("/proc/self/task"))


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("many") / "home"
    with tansaku.connect(path, embedder=HashEmbedder(32)) as ts:
        for i in range(N_COLLECTIONS):
            ts.ingest_records(records(i), collection=f"c{i:02d}", config=config(f"c{i:02d}"))
    return path


@pytest.fixture
def limited():
    handles.set_open_limit(LIMIT)
    try:
        yield LIMIT
    finally:
        handles.set_open_limit(None)


def top_doc(ts: tansaku.Tansaku, i: int) -> str:
    return ts.search(code(i), collection=f"c{i:02d}", top_k=1).hits[0].doc_id


def test_threads_and_loaded_shards_stay_bounded_across_many_collections(home, limited) -> None:
    base = threads()
    # two shards a generation (records, sentence units), each with its own search pool
    bound = base + limited * 2 * search_threads() + 8
    peak_threads = peak_loaded = 0
    with tansaku.connect(home, embedder=HashEmbedder(32), create=False) as ts:
        for i in range(N_COLLECTIONS):
            assert top_doc(ts, i) == f"c{i}-0"
            peak_threads = max(peak_threads, threads())
            peak_loaded = max(peak_loaded, handles.loaded_count())
        assert peak_loaded <= limited
        assert peak_threads <= bound, (peak_threads, bound)
        # the first collections were closed long ago: they load again and still answer
        for i in (0, 1, 2, 30):
            assert top_doc(ts, i) == f"c{i}-0"
        assert handles.loaded_count() <= limited


def test_listing_every_collection_loads_no_shard(home, limited) -> None:
    with tansaku.connect(home, embedder=HashEmbedder(32), create=False) as ts:
        before = handles.loaded_count()
        for _ in range(2):  # the server lists on every request that checks a name
            infos = ts.collections()
            assert len(infos) == N_COLLECTIONS
            assert {i.points for i in infos} == {3}
            assert handles.loaded_count() == before


def test_a_search_in_progress_keeps_its_shards_open(home, limited) -> None:
    with tansaku.connect(home, embedder=HashEmbedder(32), create=False) as ts:
        with ts.reading("c00") as held:
            assert held.store.count("default") == 3
            h = held.handles
            assert isinstance(h, handles.GenHandles) and h.is_open()
            for i in range(1, 3 * LIMIT):  # enough others to push c00 out if it were idle
                top_doc(ts, i)
            assert h.is_open()  # in use: never closed to make room
            assert held.store.count("default") == 3
        for i in range(3 * LIMIT, 4 * LIMIT):
            top_doc(ts, i)
        assert not h.is_open()  # idle now: closed like any other
        assert top_doc(ts, 0) == "c0-0"


def test_concurrent_searches_over_more_collections_than_the_limit(home) -> None:
    handles.set_open_limit(2)
    errors: list[BaseException] = []
    wrong: list[tuple[int, str]] = []
    try:
        with tansaku.connect(home, embedder=HashEmbedder(32), create=False) as ts:

            def worker(seed: int) -> None:
                rng = random.Random(seed)
                try:
                    for _ in range(15):
                        i = rng.randrange(8)
                        found = top_doc(ts, i)
                        if found != f"c{i}-0":
                            wrong.append((i, found))
                except BaseException as exc:  # pragma: no cover - reported below
                    errors.append(exc)

            workers = [threading.Thread(target=worker, args=(s,)) for s in range(3)]
            for t in workers:
                t.start()
            for t in workers:
                t.join()
            assert handles.loaded_count() <= 2
    finally:
        handles.set_open_limit(None)
    assert not errors, errors[:3]
    assert not wrong


def test_a_new_shard_records_its_search_threads(home) -> None:
    gen = next((home / "collections" / "c00" / "gens").iterdir())
    for shard in ("shard", "units"):
        stored = json.loads((gen / shard / "edge_config.json").read_text(encoding="utf-8"))
        assert stored["max_search_threads"] == search_threads()


def test_the_limit_comes_from_the_workspace_config(tmp_path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / "tansaku.toml").write_text("[server]\nopen_collections = 3\n", encoding="utf-8")
    try:
        with tansaku.connect(home, embedder=HashEmbedder(32)):
            assert handles.open_limit() == 3
    finally:
        handles.set_open_limit(None)
    (home / "tansaku.toml").write_text("[server]\nopen_collections = 0\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"\[server\] の open_collections は 1〜10,000"):
        tansaku.connect(home, embedder=HashEmbedder(32))


def test_the_limit_from_the_environment(monkeypatch) -> None:
    monkeypatch.setenv(handles.ENV_OPEN, "5")
    assert handles.open_limit() == 5
    monkeypatch.setenv(handles.ENV_OPEN, "たくさん")
    with pytest.raises(ConfigError, match="TANSAKU_OPEN_COLLECTIONS は 1〜10,000"):
        handles.open_limit()


def test_an_older_shard_records_its_search_threads_at_its_next_write(tmp_path) -> None:
    import qdrant_edge as qe

    from tansaku.store.edge import DENSE, SPARSE, EdgeStore

    path = tmp_path / "shard"
    older = qe.EdgeConfig(  # as shards were created before the setting
        vectors={DENSE: qe.EdgeVectorParams(size=32, distance=qe.Distance.Cosine)},
        sparse_vectors={SPARSE: qe.EdgeSparseVectorParams(modifier=qe.Modifier.Idf)},
        wal_enabled=False,
    )
    qe.EdgeShard.create(str(path), older).close()

    def recorded() -> int | None:
        return json.loads((path / "edge_config.json").read_text(encoding="utf-8")).get(
            "max_search_threads"
        )

    assert recorded() is None
    EdgeStore(path, dim=32, read_only=True).close()
    assert recorded() is None  # a committed generation is never rewritten by a reader
    EdgeStore(path, dim=32).close()
    assert recorded() == search_threads()


def test_a_query_runs_in_the_callers_thread_unless_told_otherwise(monkeypatch) -> None:
    """One search thread by default: the engine holds the interpreter lock through a query, so
    a pool of its own only added a hand-over; ``TANSAKU_SEARCH_THREADS`` still sets more."""
    from tansaku.store.shard import ENV_SEARCH_THREADS

    monkeypatch.delenv(ENV_SEARCH_THREADS, raising=False)
    assert search_threads() == 1
    monkeypatch.setenv(ENV_SEARCH_THREADS, "3")
    assert search_threads() == 3
    monkeypatch.setenv(ENV_SEARCH_THREADS, "0")
    with pytest.raises(Exception, match="TANSAKU_SEARCH_THREADS は 1〜64"):
        search_threads()

"""The server's batched writer of search-event rows, over a real appdb (SQLite file): rows of
one interval in one transaction, flush and close write what waits, a bad row costs only
itself."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest

from tansaku.appdb import open_appdb
from tansaku.appdb.events import EventRow
from tansaku.server.event_writer import EventWriter


class CountingRepo:
    """appdb's event repository, counting the transactions it is asked for."""

    def __init__(self, repo: Any) -> None:
        self.repo = repo
        self.batches: list[int] = []
        self.lock = threading.Lock()

    def record_many(self, rows: list[EventRow]) -> None:
        if any(r.event.get("query") == "壊れた行" for r in rows):
            raise ValueError("bad row")
        self.repo.record_many(rows)
        with self.lock:
            self.batches.append(len(rows))


@pytest.fixture
def repo(tmp_path: Path):
    db = open_appdb(tmp_path)
    yield CountingRepo(db.events)
    db.close()


def _row(i: int, query: str = "冷蔵庫の故障") -> EventRow:
    return EventRow("チームA", {"query_id": f"q{i}", "query": query, "hits": []}, ("報告",))


def test_rows_of_one_interval_are_one_transaction(repo) -> None:
    writer = EventWriter(repo, interval=0.3)
    for i in range(40):
        writer.put(_row(i))
    assert writer.flush()
    writer.close()
    assert sum(repo.batches) == 40 and len(repo.batches) <= 2


def test_flush_cuts_the_interval_short_and_close_writes_the_rest(repo) -> None:
    writer = EventWriter(repo, interval=30.0)
    writer.put(_row(1))
    assert writer.flush(timeout=10.0)  # well before the 30 s interval
    assert repo.batches == [1]
    writer.put(_row(2))
    writer.put(_row(3))
    writer.close(timeout=10.0)
    assert sum(repo.batches) == 3 and writer.pending == 0
    writer.put(_row(4))  # after close: written at once
    assert sum(repo.batches) == 4


def test_a_bad_row_is_written_alone_and_the_rest_stored(repo) -> None:
    writer = EventWriter(repo, interval=0.2)
    writer.put(_row(1))
    writer.put(_row(2, "壊れた行"))
    writer.put(_row(3))
    assert writer.flush()
    writer.close()
    assert sum(repo.batches) == 2  # rows 1 and 3, one by one after the batch failed


def test_many_threads_lose_nothing(repo) -> None:
    writer = EventWriter(repo, interval=0.05, max_batch=64)

    def search(k: int) -> None:
        for i in range(100):
            writer.put(_row(k * 1000 + i))

    threads = [threading.Thread(target=search, args=(k,)) for k in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    writer.close()
    assert sum(repo.batches) == 600 and max(repo.batches) <= 64

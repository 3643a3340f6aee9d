"""A worker left unfit by a failure is replaced, and the next query gets a fresh one.

Real workers for what can be staged fast with small limits (an out-of-memory error under a
64 MB limit, an interrupt under a 0.5 s timeout); a fake worker that speaks the protocol for
what cannot (an internal error, a health probe that comes back wrong). No wall times asserted.
"""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path

import pytest

from tansaku.tables import QueryFailed, SqlFailed, SqlResults, TableDatabase, sql_tool
from tansaku.tables.engine import degrading
from tansaku.tables.worker import WorkerClient

OOM_SQL = (
    "SELECT count(*) FROM (SELECT repeat('x', 1000) || i::VARCHAR AS s "
    "FROM (SELECT unnest(range(0, 2000000)) AS i) ORDER BY s)"
)
# 28^6 rows, each hashed: far past half a second, and stopped by the interrupt between vectors
SLOW_SQL = (
    "SELECT count(*) FROM stores a, stores b, stores c, stores d, stores e, stores f "
    "WHERE hash(a.store_id, d.store_id, f.store_id) % 7 = 3"
)
FAKE_WORKER = Path(__file__).with_name("fake_worker.py")


def _small(config, **changes):
    sandbox = dataclasses.replace(config.sandbox, memory_limit="64MB", **changes)
    return dataclasses.replace(config, sandbox=sandbox)


@pytest.fixture
def small_db(demo_config):
    with TableDatabase(_small(demo_config, timeout_seconds=5.0)) as database:
        yield database


def _pid(db: TableDatabase) -> int:
    worker = db._backend
    assert isinstance(worker, WorkerClient)
    with worker._lock:  # a respawn in the background holds the lock until the child is up
        assert worker._proc is not None
        return worker._proc.pid


def _works(tool) -> None:
    after = tool.run("SELECT store_name FROM stores ORDER BY store_id LIMIT 1")
    assert isinstance(after, SqlResults) and after.count == 1, after


def test_worker_recycled_after_oom(small_db) -> None:
    first = _pid(small_db)
    tool = sql_tool(small_db, "search_stores")
    failed = tool.run(OOM_SQL)
    assert isinstance(failed, SqlFailed) and "Out of Memory" in failed.message
    assert small_db.recycled == 1
    _works(tool)  # transparently, on a fresh worker that loaded the tool's scope again
    assert _pid(small_db) != first
    assert small_db._backend._scopes == [frozenset({"stores"})]


def test_worker_recycled_after_interrupt(demo_config) -> None:
    with TableDatabase(_small(demo_config, timeout_seconds=0.5)) as db:
        first = _pid(db)
        tool = sql_tool(db, "search_stores")
        failed = tool.run(SLOW_SQL)
        assert isinstance(failed, SqlFailed) and failed.timed_out
        assert db.recycled == 1
        _works(tool)
        assert _pid(db) != first


def test_worker_kept_after_an_ordinary_error(small_db) -> None:
    first = _pid(small_db)
    tool = sql_tool(small_db, "search_stores")
    assert "error" in tool("SELECT no_such_column FROM stores")  # the probe answers: kept
    assert small_db.recycled == 0 and _pid(small_db) == first
    _works(tool)


@pytest.fixture
def fake(demo_config):
    worker = WorkerClient(demo_config, command=[sys.executable, str(FAKE_WORKER)])
    yield worker
    worker.close()


def _fake_pid(worker: WorkerClient) -> int:
    return int(worker.execute("SELECT pid", [], 1).rows[0][0])


def test_worker_recycled_after_internal_error(fake) -> None:
    first = _fake_pid(fake)
    with pytest.raises(QueryFailed, match="INTERNAL") as caught:
        fake.execute("SELECT INTERNAL", [], 1)
    assert caught.value.degraded is False  # the message alone tells the parent
    assert fake.recycled == 1
    assert _fake_pid(fake) != first


def test_worker_recycled_when_health_probe_fails(fake) -> None:
    first = _fake_pid(fake)
    with pytest.raises(QueryFailed, match="Binder Error"):
        fake.execute("SELECT BREAK", [], 1)  # an ordinary error, but the probe comes back wrong
    assert fake.recycled == 1
    assert _fake_pid(fake) != first
    second = _fake_pid(fake)
    with pytest.raises(QueryFailed):
        fake.execute("SELECT nothing_wrong FROM nowhere WHERE INTERNAL_not", [], 1)
    assert fake.recycled == 2 and _fake_pid(fake) != second


def test_inline_engine_rebuilt_after_oom(demo_config) -> None:
    config = _small(demo_config, isolation="inline", timeout_seconds=5.0)
    with TableDatabase(config) as db:
        tool = sql_tool(db, "search_stores")
        _works(tool)
        engine = db._backend
        assert isinstance(tool.run(OOM_SQL), SqlFailed)
        assert db.recycled == 1 and db._backend is not engine
        assert db._backend.scopes == (frozenset({"stores"}),)  # the scope loaded again
        _works(tool)


def test_degrading_classifies_duckdb_errors() -> None:
    duckdb = pytest.importorskip("duckdb")
    assert degrading(duckdb.OutOfMemoryException("Out of Memory Error: Allocation failure"))
    assert degrading(duckdb.InternalException("INTERNAL Error: unreachable"))
    assert degrading(duckdb.FatalException("FATAL Error: invalidated"))
    assert degrading(MemoryError())
    assert degrading(duckdb.InvalidInputException("thread: can't start new thread"))
    assert not degrading(duckdb.BinderException('Referenced column "x" not found'))
    assert not degrading(duckdb.ParserException("syntax error at or near"))

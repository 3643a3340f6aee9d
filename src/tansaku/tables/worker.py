"""The sandbox worker: the DuckDB engine in a child process that can be killed.

DuckDB's interrupt is checked between vectors, so one giant scalar call (``repeat('x', 1e9)``,
``list_sum(generate_series(1, 1e9))``) can run far past the timer. The parent therefore waits
``timeout_seconds + GRACE_SECONDS`` for an answer, then kills the child and starts a fresh one
in the background (or, failing that, on the next query). On POSIX the child also caps its
address space (``RLIMIT_AS``), so a huge allocation fails at once with DuckDB's out-of-memory
error instead of exhausting the machine.

A child that still answers can be unfit: after an interrupted ``repeat('x', 1e9)``, a huge
``levenshtein`` or an out-of-memory error it may no longer start threads or allocate. So a
child is also **recycled** (killed, a fresh one started in the background) after any failure
the engine marks ``degraded`` (out of memory, interrupt or timeout, DuckDB internal or fatal
error, a failed allocation or thread start) and after any other failure whose health probe
(:data:`PROBE_SQL`, answered within :data:`PROBE_SECONDS`) does not come back right. The next
query gets the fresh child; nothing changes for the caller.

**Reload.** ``reload(files)`` starts a new child that loads every table from ``files`` (and
every scope used so far), then swaps it in under the query lock and ends the old one: a query
runs on the old tables or on the new ones. When the new child cannot load a table, it reports
which (``TableLoadError``) and the old child keeps serving. A child started after a kill or a
recycle loads the same ``files`` as the one it replaces.

Protocol: JSON lines over the child's stdin/stdout (ASCII-escaped; no pickle). The child points
file descriptor 1 at stderr so nothing but protocol lines reaches the parent.

    parent → child   {"config": "<tables.toml text>", "base_dir": "...", "scopes": [[...]],
                      "files": {"stores": "/tmp/tansaku-tables-…/stores-1.csv", …}}
    child → parent   {"ready": true} | {"error": {"type": ..., "message": ..., "table": ...}}
    parent → child   {"prepare": ["stores"]}          a scope's own database (engine.py)
    child → parent   {"ready": true} | {"error": {...}}
    parent → child   {"sql": "...", "params": [...], "max_rows": 10 | null, "allowed": [...]}
    child → parent   {"ok": {"columns", "rows", "truncated"}} | {"rejected": {"reason"}}
                     | {"failed": {"message", "timed_out", "degraded"}}

Started as ``python -m tansaku.tables._worker_main LIMIT_BYTES`` (never through multiprocessing, so
the caller's ``__main__`` is not re-imported); the child's side of the protocol lives there.
"""

from __future__ import annotations

import json
import os
import queue
import re
import subprocess
import sys
import threading
import weakref
from collections.abc import Collection, Mapping, Sequence
from datetime import date, datetime
from pathlib import Path
from typing import IO, Any

from tansaku.errors import ConfigError, LoadError, TansakuError
from tansaku.tables.config_toml import dump_tables_config
from tansaku.tables.engine import (
    DEGRADING_MESSAGE,
    QueryFailed,
    RawResult,
    TableLoadError,
    timeout_message,
)
from tansaku.tables.registry import TablesConfig
from tansaku.tables.validate import QueryRejected

GRACE_SECONDS = 1.0
PROBE_SECONDS = 2.0
MEMORY = re.compile(r"out of memory|allocation failure|bad_alloc|allocate", re.IGNORECASE)
# allocates, runs DuckDB's pipeline (and its threads), and has one right answer
PROBE_SQL = "SELECT sum(i) FROM range(200000) t(i)"
PROBE_ANSWER = [[19999900000]]
STARTUP_TIMEOUT_SECONDS = 300.0
# address space one more DuckDB database reserves (its threads and allocator arenas: 0.1–0.5 GiB
# measured, virtual, not resident)
SCOPE_ADDRESS_SPACE = 512 * 2**20
_UNITS = {"KB": 10**3, "MB": 10**6, "GB": 10**9, "KIB": 2**10, "MIB": 2**20, "GIB": 2**30}


def address_space_limit(memory_limit: str) -> int:
    """Bytes of address space for the child's shared database: 4 × DuckDB's memory limit
    + 1 GiB, at least 2 GiB (Python + DuckDB reserve about 0.8 GiB of address space before any
    data); each scope's own database adds :data:`SCOPE_ADDRESS_SPACE`."""
    match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([KMG]i?B)\s*", memory_limit, re.IGNORECASE)
    limit = int(float(match.group(1)) * _UNITS[match.group(2).upper()]) if match else 256 * 10**6
    return max(2 * 2**30, 4 * limit + 2**30)


def _param(value: Any) -> Any:
    if isinstance(value, datetime | date):
        return value.isoformat()
    raise TypeError(f"SQLのパラメータに使えない値です: {value!r}")


# --- parent --------------------------------------------------------------------------------------


def _read_lines(stream: IO[bytes], inbox: queue.Queue[bytes | None]) -> None:
    for line in stream:
        inbox.put(line)
    inbox.put(None)


def _terminate(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        proc.kill()
        proc.wait()
    for stream in (proc.stdin, proc.stdout):
        try:
            if stream is not None:
                stream.close()
        except OSError:
            pass


WORKER_COMMAND = (sys.executable, "-m", "tansaku.tables._worker_main")


class WorkerClient:
    """Runs queries in a child process; kills and restarts it when a query overstays, and
    recycles it when a failure may have left it unfit. ``command`` starts the child (the
    address-space limit is appended): a test can put a fake worker that speaks the protocol."""

    def __init__(
        self,
        config: TablesConfig,
        *,
        command: Sequence[str] = WORKER_COMMAND,
        files: Mapping[str, str] | None = None,
    ) -> None:
        self.config = config
        self.command = tuple(command)
        self.files = dict(files or {})
        """Table → the file every child loads it from (absent: its registered path)."""
        self._lock = threading.Lock()
        self._proc: subprocess.Popen[bytes] | None = None
        self._inbox: queue.Queue[bytes | None] = queue.Queue()
        self._closed = False
        self._known = {frozenset(config.table_names)}
        self._scopes: list[frozenset[str]] = []
        """Tool scopes used so far, each with a database of its own in the child (loaded on the
        first query of the scope; every new child loads them all at start)."""
        self.restarts = 0
        """Workers started again after a kill or a crash."""
        self.recycled = 0
        """Workers replaced because a failure may have left them unfit (see ``_degraded``)."""
        self._start()

    def _start(self) -> None:
        base = Path.cwd()
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p and Path(p).is_dir())
        limit = address_space_limit(self.config.sandbox.memory_limit)
        proc = subprocess.Popen(
            [*self.command, str(limit)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=env,
            close_fds=True,
        )
        self._proc = proc
        self._served = 0  # queries this worker process answered
        self._finalizer = weakref.finalize(self, _terminate, proc)
        self._inbox = queue.Queue()
        threading.Thread(target=_read_lines, args=(proc.stdout, self._inbox), daemon=True).start()
        self._write(
            {
                "config": dump_tables_config(self.config, base),
                "base_dir": str(base),
                "scopes": [sorted(s) for s in self._scopes],
                "files": self.files,
            }
        )
        self._expect_ready("テーブルのサンドボックスを起動できません")

    def _expect_ready(self, what: str) -> None:
        try:
            message = self._receive(STARTUP_TIMEOUT_SECONDS)
        except TimeoutError:
            message = {"error": {"message": "タイムアウトしました"}}
        if message is not None and "ready" in message:
            return
        self._kill()
        error = (message or {}).get("error") or {}
        if error.get("type") == "load" and error.get("table"):
            raise TableLoadError(error["table"], error["path"], error["reason"])
        if error.get("type") == "load":
            raise LoadError(error["path"], error["reason"])
        if error.get("type") == "config":
            raise ConfigError(error["message"])
        raise TansakuError(f"{what}: {error.get('message') or 'ワーカープロセスが応答しません'}")

    def _prepare(self, allowed: Collection[str]) -> None:
        """Have the child load a scope's own database on its first query, under the start-up
        time limit rather than the query's."""
        scope = frozenset(allowed)
        if scope in self._known:
            return
        self._write({"prepare": sorted(scope)})
        self._expect_ready("SQLツールのテーブルを用意できません")
        self._known.add(scope)
        self._scopes.append(scope)

    def _write(self, message: dict[str, Any]) -> None:
        assert self._proc is not None and self._proc.stdin is not None
        self._proc.stdin.write((json.dumps(message, default=_param) + "\n").encode("ascii"))
        self._proc.stdin.flush()

    def _receive(self, timeout: float) -> dict[str, Any] | None:
        try:
            line = self._inbox.get(timeout=timeout)
        except queue.Empty:
            raise TimeoutError from None
        return None if line is None else json.loads(line)

    def _kill(self) -> None:
        if self._proc is not None:
            _terminate(self._proc)
            self._finalizer.detach()
            self._proc = None

    def _respawn_soon(self) -> None:
        """Start the next worker in the background, so the next query does not wait for it."""

        def respawn() -> None:
            with self._lock:
                if self._proc is None and not self._closed:
                    try:
                        self._start()
                        self.restarts += 1
                    except TansakuError:
                        pass  # the next execute() tries again and reports the error

        threading.Thread(target=respawn, daemon=True).start()

    def execute(
        self,
        sql: str,
        params: list[Any],
        max_rows: int | None,
        allowed: Collection[str] | None = None,
    ) -> RawResult:
        message = self._run(sql, params, max_rows, allowed)
        failed = message.get("failed")
        if failed and self._served > 1 and MEMORY.search(str(failed.get("message", ""))):
            # a worker that ran earlier queries can fail an allocation a fresh one would not
            # (its address space fragmented near the cap): retry once on a fresh worker
            with self._lock:
                if self._proc is not None:  # not already replaced by _degraded
                    self._kill()
                    self.recycled += 1
            message = self._run(sql, params, max_rows, allowed)
        if "ok" in message:
            ok = message["ok"]
            return RawResult(
                columns=tuple(ok["columns"]),
                rows=tuple(tuple(r) for r in ok["rows"]),
                truncated=bool(ok.get("truncated")),
            )
        if "rejected" in message:
            raise QueryRejected(message["rejected"]["reason"])
        failed = message["failed"]
        raise QueryFailed(
            failed["message"],
            timed_out=bool(failed.get("timed_out")),
            degraded=bool(failed.get("degraded")),
        )

    def _run(
        self,
        sql: str,
        params: list[Any],
        max_rows: int | None,
        allowed: Collection[str] | None,
    ) -> dict[str, Any]:
        timeout = self.config.sandbox.timeout_seconds
        with self._lock:
            if self._closed:
                raise TansakuError("このテーブルデータベースは閉じられています。開き直してください")
            if self._proc is None or self._proc.poll() is not None:
                self._kill()
                self.restarts += 1
                self._start()
            if allowed is not None:
                self._prepare(allowed)
            try:
                request: dict[str, Any] = {"sql": sql, "params": params, "max_rows": max_rows}
                if allowed is not None:
                    request["allowed"] = sorted(allowed)
                self._write(request)
                message = self._receive(timeout + GRACE_SECONDS)
            except TimeoutError:
                self._kill()  # stuck inside one scalar call: the interrupt cannot reach it
                self._respawn_soon()
                raise QueryFailed(timeout_message(timeout), timed_out=True) from None
            except (BrokenPipeError, OSError):
                message = None
            if message is None:
                self._kill()
                raise QueryFailed(
                    "サンドボックスのプロセスが異常終了しました。もう一度実行してください"
                )
            self._served += 1
            if "failed" in message and self._degraded(message["failed"]):
                self._kill()  # it still answers, but may no longer allocate or start threads
                self.recycled += 1
                self._respawn_soon()
            if "error" in message:  # the child could not load the scope's database
                self._kill()
                raise TansakuError(str(message["error"].get("message") or message["error"]))
        result: dict[str, Any] = message
        return result

    def reload(self, files: Mapping[str, str]) -> None:
        """A new child loading every table from ``files``, swapped in for the current one once it
        is ready; ``TableLoadError`` (or another start-up error) leaves the current one serving."""
        with self._lock:
            if self._closed:
                raise TansakuError("このテーブルデータベースは閉じられています。開き直してください")
            saved = (self._proc, self._finalizer, self._inbox, self._served, self.files)
            self._proc, self.files = None, dict(files)
            try:
                self._start()
            except BaseException:
                self._proc, self._finalizer, self._inbox, self._served, self.files = saved
                raise
            old, old_finalizer = saved[0], saved[1]
        if old is not None:
            old_finalizer.detach()
            _terminate(old)

    def _degraded(self, failed: dict[str, Any]) -> bool:
        """Whether the worker should be replaced after this failure: one the engine marked
        degraded (out of memory, interrupt, internal or fatal error …) or whose message says so
        — or a health probe that does not answer right, at once."""
        message = str(failed.get("message", ""))
        if failed.get("timed_out") or failed.get("degraded") or DEGRADING_MESSAGE.search(message):
            return True
        try:
            self._write({"sql": PROBE_SQL, "params": [], "max_rows": 1})
            probe = self._receive(PROBE_SECONDS)
        except (TimeoutError, OSError):
            return True
        return not (probe and probe.get("ok", {}).get("rows") == PROBE_ANSWER)

    def close(self) -> None:
        with self._lock:
            self._closed = True
            proc, self._proc = self._proc, None
            if proc is None:
                return
            self._finalizer.detach()
            try:
                assert proc.stdin is not None
                proc.stdin.close()
                proc.wait(timeout=5)
            except (OSError, subprocess.TimeoutExpired):
                pass
            _terminate(proc)

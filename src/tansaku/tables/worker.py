"""The sandbox worker: the DuckDB engine in a child process that can be killed.

DuckDB's interrupt is checked between vectors, so one giant scalar call (``repeat('x', 1e9)``,
``list_sum(generate_series(1, 1e9))``) can run far past the timer. The parent therefore waits
``timeout_seconds + GRACE_SECONDS`` for an answer, then kills the child and starts a fresh one
in the background (or, failing that, on the next query). On POSIX the child also caps its
address space (``RLIMIT_AS``), so a huge allocation fails at once with DuckDB's out-of-memory
error instead of exhausting the machine.

Protocol: JSON lines over the child's stdin/stdout (ASCII-escaped; no pickle). The child points
file descriptor 1 at stderr so nothing but protocol lines reaches the parent.

    parent → child   {"config": "<tables.toml text>", "base_dir": "..."}   once
    child → parent   {"ready": true} | {"error": {"type": ..., "message": ...}}
    parent → child   {"sql": "...", "params": [...], "max_rows": 10 | null}
    child → parent   {"ok": {"columns": [...], "rows": [[...]]}} | {"failed": {...}}

Started as ``python -m tansaku.tables._worker_main LIMIT_BYTES`` (never through multiprocessing, so
the caller's ``__main__`` is not re-imported).
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
from collections.abc import Collection
from datetime import date, datetime
from pathlib import Path
from typing import IO, Any

from tansaku.errors import LoadError, TansakuError
from tansaku.tables.engine import QueryFailed, RawResult, timeout_message
from tansaku.tables.registry import TablesConfig, dump_tables_config
from tansaku.tables.validate import QueryRejected

GRACE_SECONDS = 1.0
PROBE_SECONDS = 2.0
# failures after which a worker is replaced even though it still answers (see _degraded)
DEGRADED = re.compile(
    r"out of memory|bad_alloc|cannot allocate|could not allocate|failed to allocate|"
    r"can't start new thread|resource temporarily unavailable|interrupt|internal error|fatal",
    re.IGNORECASE,
)
STARTUP_TIMEOUT_SECONDS = 300.0
_UNITS = {"KB": 10**3, "MB": 10**6, "GB": 10**9, "KIB": 2**10, "MIB": 2**20, "GIB": 2**30}


def address_space_limit(memory_limit: str) -> int:
    """Bytes of address space for the child: 4 × DuckDB's memory limit + 1 GiB, at least 2 GiB
    (Python + DuckDB reserve about 0.8 GiB of address space before any data)."""
    match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([KMG]i?B)\s*", memory_limit, re.IGNORECASE)
    limit = int(float(match.group(1)) * _UNITS[match.group(2).upper()]) if match else 256 * 10**6
    return max(2 * 2**30, 4 * limit + 2**30)


def _param(value: Any) -> Any:
    if isinstance(value, datetime | date):
        return value.isoformat()
    raise TypeError(f"SQLのパラメータに使えない値です: {value!r}")


# --- child ---------------------------------------------------------------------------------------


def _send(out: IO[str], message: dict[str, Any]) -> None:
    out.write(json.dumps(message, ensure_ascii=True) + "\n")
    out.flush()


def serve(limit: int) -> int:
    """The child's main loop (see the module docstring); returns the exit code."""
    out = os.fdopen(os.dup(1), "w", encoding="ascii", buffering=1)
    os.dup2(2, 1)  # stray prints (progress bars, warnings) must not corrupt the protocol
    try:
        import resource

        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    except (ImportError, ValueError, OSError):  # not POSIX, or a lower hard limit already
        pass
    import tomllib

    from tansaku.tables.engine import Engine
    from tansaku.tables.registry import parse_tables_config

    stdin = sys.stdin.buffer
    try:
        first = json.loads(stdin.readline())
        config = parse_tables_config(tomllib.loads(first["config"]), Path(first["base_dir"]))
        engine = Engine(config)
    except LoadError as e:
        _send(out, {"error": {"type": "load", "path": e.path, "reason": e.reason}})
        return 1
    except Exception as e:  # report, do not crash silently
        _send(out, {"error": {"type": type(e).__name__, "message": str(e)}})
        return 1
    _send(out, {"ready": True})
    for line in stdin:
        try:
            request = json.loads(line)
            result = engine.execute(
                request["sql"],
                request.get("params") or [],
                request.get("max_rows"),
                request.get("allowed"),
            )
            ok = {
                "columns": list(result.columns),
                "rows": [list(r) for r in result.rows],
                "truncated": result.truncated,
            }
            _send(out, {"ok": ok})
        except QueryRejected as e:
            _send(out, {"rejected": {"reason": e.reason}})
        except QueryFailed as e:
            _send(out, {"failed": {"message": str(e), "timed_out": e.timed_out}})
        except Exception as e:
            _send(out, {"failed": {"message": f"{type(e).__name__}: {e}", "timed_out": False}})
    engine.close()
    return 0


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


class WorkerClient:
    """Runs queries in a child process; kills and restarts it when a query overstays."""

    def __init__(self, config: TablesConfig) -> None:
        self.config = config
        self._lock = threading.Lock()
        self._proc: subprocess.Popen[bytes] | None = None
        self._inbox: queue.Queue[bytes | None] = queue.Queue()
        self._closed = False
        self.restarts = 0
        """Workers started again after a kill or a crash."""
        self.recycled = 0
        """Workers replaced because a failure left them degraded (see ``_degraded``)."""
        self._start()

    def _start(self) -> None:
        base = Path.cwd()
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p and Path(p).is_dir())
        limit = address_space_limit(self.config.sandbox.memory_limit)
        proc = subprocess.Popen(
            [sys.executable, "-m", "tansaku.tables._worker_main", str(limit)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=env,
            close_fds=True,
        )
        self._proc = proc
        self._finalizer = weakref.finalize(self, _terminate, proc)
        self._inbox = queue.Queue()
        threading.Thread(target=_read_lines, args=(proc.stdout, self._inbox), daemon=True).start()
        self._write({"config": dump_tables_config(self.config, base), "base_dir": str(base)})
        try:
            message = self._receive(STARTUP_TIMEOUT_SECONDS)
        except TimeoutError:
            message = {"error": {"message": "起動がタイムアウトしました"}}
        if message is None or "ready" not in message:
            self._kill()
            error = (message or {}).get("error") or {}
            if error.get("type") == "load":
                raise LoadError(error["path"], error["reason"])
            raise TansakuError(
                "テーブルのサンドボックスを起動できません: "
                f"{error.get('message') or 'ワーカープロセスが応答しません'}"
            )

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
        timeout = self.config.sandbox.timeout_seconds
        with self._lock:
            if self._closed:
                raise TansakuError("このテーブルデータベースは閉じられています。開き直してください")
            if self._proc is None or self._proc.poll() is not None:
                self._kill()
                self.restarts += 1
                self._start()
            try:
                request = {"sql": sql, "params": params, "max_rows": max_rows}
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
            if "failed" in message and self._degraded(message["failed"]):
                self._kill()  # it still answers, but may no longer allocate or start threads
                self.recycled += 1
                self._respawn_soon()
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
        raise QueryFailed(failed["message"], timed_out=bool(failed.get("timed_out")))

    def _degraded(self, failed: dict[str, Any]) -> bool:
        """Whether the worker should be replaced after this failure: an interrupted or
        out-of-memory query, an internal or fatal DuckDB error, a failed allocation or thread
        start — or a health probe that does not answer at once."""
        if failed.get("timed_out") or DEGRADED.search(str(failed.get("message", ""))):
            return True
        try:
            self._write({"sql": "SELECT 42", "params": [], "max_rows": 1})
            probe = self._receive(PROBE_SECONDS)
        except (TimeoutError, OSError):
            return True
        return not (probe and probe.get("ok", {}).get("rows") == [[42]])

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

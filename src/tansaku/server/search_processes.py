"""Searches in processes of their own, so that a server's searches use every core.

One Python process computes one search at a time (the engine holds the interpreter lock
through a query), so a server whose searches all run in its own process uses about one core
however many it has. With search processes (``tansaku serve --search-processes N``,
``TANSAKU_SEARCH_PROCESSES``; :func:`process_count`) the server starts N children (``python
-m tansaku.server.search_processes``: a fresh interpreter that imports only the library, not
the web framework or the command line), each opening the workspace with its configured
embedder and answering :data:`SEARCHES_PER_PROCESS` searches at once (one socket and one
thread each: while one embeds its question, which onnxruntime does without the interpreter
lock, the other's Python runs), and hands every search of its client to them
(:meth:`tansaku.client.Tansaku.run_searches_with`): the API's searches and the agent's. The
server process keeps what it did before — parsing requests, keys, the team's collections, the
event row, metrics, the JSON — and a child embeds the question and searches. A search takes
an idle socket of a child, sends it the ``SearchRequest`` and waits for the
``SearchResult`` (or the error the search raised, re-raised here as it would have been
in-process).

A child that dies (``kill -9``, out of memory) is started again, and the search it had is
sent once more to another child (a search writes nothing). Children read committed
generations as any reader does, so an ingest's commit reaches their next search. They exit
when the server stops (:meth:`SearchProcesses.close`), or by themselves when it is gone (the
socket closes). ``Ctrl+C`` reaches the whole process group: children ignore it and are
stopped by the server.
"""

from __future__ import annotations

import contextlib
import logging
import os
import pickle
import queue
import signal
import socket
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

from tansaku import heap
from tansaku.errors import ConfigError, TansakuError
from tansaku.search.types import SearchRequest, SearchResult

log = logging.getLogger("tansaku.server.search")
ENV_PROCESSES = "TANSAKU_SEARCH_PROCESSES"
STOP_GRACE_S = 5.0
WAIT_STEP_S = 0.5
SEARCHES_PER_PROCESS = 2
"""Searches one child runs at once (a socket and a thread each)."""


class SearchProcessesFailed(TansakuError):
    """No search process could start (the reason of the last one that failed)."""


def process_count(setting: int | None = None) -> int:
    """``setting``, else ``$TANSAKU_SEARCH_PROCESSES`` (an integer ≥ 0), else 0 (searches in
    the server's own process)."""
    if setting is None:
        raw = os.environ.get(ENV_PROCESSES, "").strip()
        if not raw:
            return 0
        if not raw.isdigit():
            raise ConfigError(
                f"環境変数 {ENV_PROCESSES}「{raw}」は 0 以上の整数で指定してください"
                "(0: サーバー自身のプロセスで検索する)"
            )
        setting = int(raw)
    return max(0, setting)


# -- the child --------------------------------------------------------------------------
def _open(home: str) -> Any:
    """The workspace's client as ``tansaku serve`` opens it (its configured embedder), without
    an event log (the server records each search), its model loaded and settled on one thread,
    and what it holds then frozen (:func:`tansaku.heap.freeze_loaded`)."""
    from tansaku.client import connect
    from tansaku.embed import load_embedder

    client = connect(home, embedder=load_embedder(home), create=False)
    client.with_services(events=None)
    embedder = client.embedder
    settle = getattr(embedder.inner, "settle", None)
    if settle is not None:
        settle(threads=1)  # each of this process's searches embeds on one core, beside the other
    try:
        embedder.embed_queries(["準備"])
    except Exception:  # a remote embedder down for now: its searches will say so, as in-process
        log.exception("the search process could not warm up its embedder")
    heap.freeze_loaded()
    return client


def _portable(exc: Exception) -> Exception:
    """``exc`` if it survives the pipe, else an error of the same kind with its message."""
    try:
        pickle.loads(pickle.dumps(exc))
        return exc
    except Exception:
        kind = TansakuError if isinstance(exc, TansakuError) else RuntimeError
        return kind(f"{type(exc).__name__}: {exc}")


def _answer(conn: Connection, client: Any) -> None:
    """Answer the searches that come on ``conn`` until ``None`` or the pipe closes."""
    while True:
        try:
            request = conn.recv()
        except (EOFError, OSError):
            return  # the server is gone
        if request is None:
            return
        try:
            answer: tuple[str, Any] = ("ok", client.run(request))
        except Exception as exc:
            if not isinstance(exc, TansakuError):
                log.exception("search failed in a search process")
            answer = ("error", _portable(exc))
        try:
            conn.send(answer)
        except (BrokenPipeError, OSError):
            return
        except Exception as exc:  # the result could not be pickled: nothing was sent
            log.exception("a search result could not be sent to the server")
            conn.send(("error", RuntimeError(f"{type(exc).__name__}: {exc}")))


def serve_searches(conns: list[Connection], home: str) -> None:
    """A search process's main: open the workspace, say ``("ready", model)`` (or
    ``("failed", reason)``) on each of ``conns``, then answer each request with ``("ok",
    result)`` or ``("error", exception)`` — one thread a connection, all on the one client —
    until ``None`` or the pipe closes."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        client = _open(home)
    except Exception as exc:
        with contextlib.suppress(BrokenPipeError, OSError):
            conns[0].send(("failed", f"{type(exc).__name__}: {exc}"))
        return
    try:
        for conn in conns:
            conn.send(("ready", str(client.embedder.name)))
    except (BrokenPipeError, OSError):
        client.close()
        return  # the server stopped while this process started
    others = [
        threading.Thread(target=_answer, args=(conn, client), name="search", daemon=True)
        for conn in conns[1:]
    ]
    try:
        for thread in others:
            thread.start()
        _answer(conns[0], client)
        for thread in others:
            thread.join()
    finally:
        client.close()


# -- the server's side ------------------------------------------------------------------
@dataclass(eq=False)
class _Child:
    process: subprocess.Popen[bytes]
    conns: list[Connection]
    """One socket a search it runs at once (:data:`SEARCHES_PER_PROCESS`)."""

    def close_conns(self) -> None:
        for conn in self.conns:
            conn.close()

    def join(self, timeout: float) -> None:
        try:
            self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            self.process.terminate()
            try:
                self.process.wait(STOP_GRACE_S)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


class SearchProcesses:
    """``count`` search processes over the workspace at ``home`` (module docstring).

    :meth:`start` starts them and waits until each has loaded its model; :meth:`run` is the
    client's search runner; :meth:`close` stops them."""

    def __init__(self, home: str | Path, count: int) -> None:
        self.home = str(home)
        self.count = count
        self.model: str | None = None
        """The children's embedder once one is ready."""
        self.error: str | None = None
        """Why the last child that failed could not start."""
        self._idle: queue.SimpleQueue[tuple[_Child, Connection]] = queue.SimpleQueue()
        self._children: set[_Child] = set()
        self._starting = 0
        self._lock = threading.Lock()
        self._closed = False

    @property
    def ready(self) -> int:
        """Children that have loaded their model and answer searches."""
        with self._lock:
            return len(self._children)

    def start(self) -> bool:
        """Start the children and wait until each is ready or failed; whether any is ready."""
        starting = [self._spawn() for _ in range(self.count)]
        for child in starting:
            if child is not None:
                self._await_ready(child)
        with self._lock:
            return bool(self._children)

    def run(self, request: SearchRequest) -> SearchResult:
        """``request`` searched on an idle socket of a child (waiting for one); raises what
        the search raised. A child lost mid-search is replaced and the search sent once more."""
        for attempt in range(2):
            child, conn = self._take()
            try:
                conn.send(request)
                status, payload = conn.recv()
            except (EOFError, OSError):
                conn.close()
                self._lost(child)
                if attempt == 0:
                    continue
                raise SearchProcessesFailed(
                    "検索プロセスが応答の途中で停止しました。もう一度実行してください"
                ) from None
            self._idle.put((child, conn))
            if status == "ok":
                result: SearchResult = payload
                return result
            raise payload
        raise AssertionError("unreachable")  # pragma: no cover

    def close(self) -> None:
        """Stop every child: asked to end, then terminated after :data:`STOP_GRACE_S`."""
        with self._lock:
            self._closed = True
            children = list(self._children)
            self._children.clear()
        for child in children:
            for conn in child.conns:
                with contextlib.suppress(BrokenPipeError, OSError):
                    conn.send(None)
        deadline = time.monotonic() + STOP_GRACE_S
        for child in children:
            child.join(max(0.0, deadline - time.monotonic()))
            child.close_conns()

    # -- children coming and going ---------------------------------------------------------
    def _spawn(self) -> _Child | None:
        with self._lock:
            if self._closed:
                return None
            self._starting += 1
        pairs = [socket.socketpair() for _ in range(SEARCHES_PER_PROCESS)]
        fds = [theirs.fileno() for _, theirs in pairs]
        try:
            process = subprocess.Popen(
                [sys.executable, "-P", "-m", __name__, ",".join(map(str, fds)), self.home],
                pass_fds=fds,
            )
        except OSError as exc:  # no process could be made (out of memory, of pids): say so
            for ours, _ in pairs:
                ours.close()
            with self._lock:
                self._starting -= 1
                self.error = f"{type(exc).__name__}: {exc}"
            log.error("a search process could not start: %s", self.error)
            return None
        finally:
            for _, theirs in pairs:
                theirs.close()
        return _Child(process, [Connection(ours.detach()) for ours, _ in pairs])

    def _await_ready(self, child: _Child) -> None:
        status, detail = "failed", ""
        try:
            for conn in child.conns:  # "ready" on each, or "failed" on the first
                status, detail = conn.recv()
                if status != "ready":
                    break
        except (EOFError, OSError):
            status, detail = "failed", f"exit code {child.process.wait()}"
        with self._lock:
            self._starting -= 1
            ready = status == "ready" and not self._closed
            if ready:
                self._children.add(child)
                self.model = detail
            elif status != "ready":
                self.error = str(detail)
        if ready:
            for conn in child.conns:
                self._idle.put((child, conn))
            return
        if status != "ready":
            log.error("a search process could not start: %s", detail)
        child.close_conns()
        child.join(STOP_GRACE_S)

    def _lost(self, child: _Child) -> None:
        """``child`` died: forget it and start another in the background (once, whichever of
        its searches found it gone first)."""
        with self._lock:
            if child not in self._children:
                return
            self._children.discard(child)
        child.join(STOP_GRACE_S)
        log.warning(
            "a search process stopped (exit code %s); starting another", child.process.returncode
        )
        replacement = self._spawn()
        if replacement is not None:
            threading.Thread(
                target=self._await_ready, args=(replacement,), name="search-start", daemon=True
            ).start()

    def _take(self) -> tuple[_Child, Connection]:
        while True:
            try:
                child, conn = self._idle.get(timeout=WAIT_STEP_S)
            except queue.Empty:
                with self._lock:
                    if self._closed:
                        raise SearchProcessesFailed("サーバーが停止中です") from None
                    if not self._children and not self._starting:
                        raise SearchProcessesFailed(
                            f"検索プロセスを起動できません({self.error})"
                        ) from None
                continue
            with self._lock:
                if child in self._children:
                    return child, conn
            conn.close()  # a socket of a child found gone meanwhile


def main(argv: list[str] | None = None) -> None:
    """``python -m tansaku.server.search_processes FD[,FD…] HOME``: a search process answering
    on the sockets ``FD`` (started by :class:`SearchProcesses`)."""
    fds, home = (argv or sys.argv[1:])[:2]
    serve_searches([Connection(int(fd)) for fd in fds.split(",")], home)


if __name__ == "__main__":
    main()

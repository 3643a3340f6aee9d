"""The heavy part of a job (an upload's ingest, a Q/A generation) in a worker process.

A job's task is plain data (:class:`IngestTask`, :class:`QATask`): the workspace, the team,
the files or the Q/A request, the embedder (pickled when it can be, else the workspace's
configured one) and, for Q/A, the chat-model settings the server resolved — the worker reads
no configuration of its own. :func:`start` runs it in a ``spawn`` child (its own interpreter,
so its CPU work never holds the server's GIL); the child sends its progress and its result back
over a pipe (:class:`Message`). :func:`run_task` is the same work in the caller's process (the
runner's thread mode, for comparison and for embedders that cannot leave the process).

The child runs at a lower CPU priority (``nice`` 10, ``TANSAKU_JOB_NICE``; 0 keeps the
server's): when the cores are busy the searches go first. It stops cleanly on ``SIGTERM``
(the collection's writer discards what it had not committed; the lock is released) and exits
by itself when the server is gone. Killed any other
way (``kill -9``, out of memory) it leaves the collection at its last commit: writers publish
whole generations only (``tansaku.backends.embedded.generations``).
"""

from __future__ import annotations

import logging
import multiprocessing
import os
import pickle
import signal
import threading
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

from tansaku.errors import TansakuError
from tansaku.server.job_limits import limit_memory

log = logging.getLogger("tansaku.server.worker")
Message = tuple[str, Any]
"""``("progress", (stage, done, total))``, ``("counts", {...})`` (a bulk ingest's files,
chunks, embedded, rates and time left), ``("result", {...})``, ``("error", message)``,
``("stopped", None)``."""
Emit = Callable[[Message], None]
PARENT_CHECK_S = 1.0
ENV_NICE = "TANSAKU_JOB_NICE"
DEFAULT_NICE = 10
"""Workers run at a lower CPU priority than the server: when the cores are busy, searches go
first and the job takes what is left; on an idle machine the job runs at full speed."""


class Stopped(BaseException):
    """Raised in the worker's main thread by ``SIGTERM``: unwinds the writer (nothing half
    committed) and ends the job as stopped."""


@dataclass(frozen=True, kw_only=True)
class IngestTask:
    home: str
    collection: str
    team: str
    paths: tuple[str, ...]
    mapping: dict[str, Any] | None = None
    """A validated upload mapping (``tansaku.ingest.preview``) and the formats it is for;
    merged into the collection's config when the job runs, saved with its commit."""
    embedder: bytes | None = field(default=None, repr=False)


@dataclass(frozen=True, kw_only=True)
class QATask:
    home: str
    team: str
    source: str
    target: str
    per_chunk: int
    limit: int | None
    model: Any = field(repr=False)
    """The server's resolved ``ModelSettings`` (its key included): the worker builds the chat
    model from it and reads no configuration itself."""
    embedder: bytes | None = field(default=None, repr=False)


Task = IngestTask | QATask


def portable_embedder(embedder: Any) -> bytes | None:
    """``embedder`` pickled for a worker, or None when it cannot be (a loaded ONNX session, an
    HTTP client): the worker then loads the workspace's configured embedder, as the server
    did when it started."""
    if embedder is None:
        return None
    try:
        return pickle.dumps(embedder)
    except Exception:
        return None


def _unmappable(exc: ImportError) -> bool:
    """Whether the dynamic loader could not map a compiled module (glibc's message when the
    address-space limit refuses the mapping), here or in what caused it."""
    seen: BaseException | None = exc
    while seen is not None:
        if "failed to map segment" in str(seen):
            return True
        seen = seen.__cause__
    return False


def _load_library() -> None:
    """Import what every job runs on (the client, the engine, numpy) before the memory limit:
    the limit bounds the job's work, not the interpreter's start."""
    import tansaku.client
    import tansaku.embed  # noqa: F401


def open_client(task: Task) -> Any:
    import tansaku
    from tansaku.embed import load_embedder

    inner = pickle.loads(task.embedder) if task.embedder else load_embedder(task.home)
    return tansaku.connect(task.home, embedder=inner)


def _ingest(task: IngestTask, client: Any, emit: Emit) -> dict[str, Any]:
    from tansaku.ingest.bulk import bulk_ingest
    from tansaku.ingest.mapping import config_with_mapping

    config = None
    if task.mapping is not None:
        current = (
            client.collection(task.collection).config
            if client.has_collection(task.collection)
            else None
        )
        config = config_with_mapping(task.collection, current, task.mapping)
    report = bulk_ingest(
        client,
        [Path(p) for p in task.paths],
        collection=task.collection,
        team=task.team,
        config=config,
        progress=lambda stage, done, total: emit(("progress", (stage, done, total))),
        on_progress=lambda p: emit(("counts", p.to_dict())),
    )
    data: dict[str, Any] = report.to_dict()
    return data


def _qa(task: QATask, client: Any, emit: Emit) -> dict[str, Any]:
    from tansaku.agent.models.config import build_model
    from tansaku.agent.qa import generate_qa

    model = build_model(task.model, task.home)
    report = generate_qa(
        client,
        model,
        source=task.source,
        target=task.target,
        team=task.team,
        per_chunk=task.per_chunk,
        limit=task.limit,
        progress=lambda done, total: emit(("progress", ("generate", done, total))),
    )
    data = report.to_dict()
    data["model"] = model.name
    return data


def run_task(task: Task, client: Any, emit: Emit) -> dict[str, Any]:
    """The task's work with ``client`` (a ``Tansaku`` over ``task.home``); its progress goes to
    ``emit``. Raises what the library raises."""
    if isinstance(task, IngestTask):
        return _ingest(task, client, emit)
    return _qa(task, client, emit)


def _on_sigterm(signum: int, frame: Any) -> None:
    raise Stopped()


def _watch_parent(parent: int) -> None:
    """Exit when the server is gone (its pipe is then read by nobody)."""
    while True:
        time.sleep(PARENT_CHECK_S)
        if os.getppid() != parent:
            os._exit(3)


def _lower_priority() -> None:
    raw = os.environ.get(ENV_NICE, "").strip()
    try:
        increment = int(raw) if raw else DEFAULT_NICE
        if increment > 0:
            os.nice(min(increment, 19))
    except (ValueError, OSError):  # a bad value or no permission: run at the server's
        pass


def _failed(exc: BaseException) -> str:
    traceback.print_exc()  # the traceback in the log, the type on the job
    return f"ジョブが失敗しました({type(exc).__name__})"


def _child(task: Task, conn: Connection, parent: int, memory_mb: int = 0) -> None:
    """The worker process's entry point (``memory_mb``: its address-space limit, 0 none)."""
    _lower_priority()
    signal.signal(signal.SIGTERM, _on_sigterm)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C reaches the server, which stops us
    threading.Thread(target=_watch_parent, args=(parent,), daemon=True).start()
    _load_library()
    limit_memory(memory_mb)  # after the watcher: it must run whatever the job allocates
    lock = threading.Lock()  # the bulk pipeline reports from more than one thread

    def emit(message: Message) -> None:
        with lock:
            conn.send(message)

    client = None
    outcome: Message
    try:
        client = open_client(task)
        outcome = ("result", run_task(task, client, emit))
    except Stopped:
        outcome = ("stopped", None)
    except TansakuError as exc:
        outcome = ("error", str(exc))
    except MemoryError:
        outcome = ("memory", None)
    except ImportError as exc:  # a module the job loads late could not be mapped: memory too
        outcome = ("memory", None) if _unmappable(exc) else ("error", _failed(exc))
    except RuntimeError as exc:  # a thread's stack is memory too
        outcome = ("memory", None) if "new thread" in str(exc) else ("error", _failed(exc))
    except BaseException as exc:  # reported on the job, with the traceback in the log
        outcome = ("error", _failed(exc))
    try:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)  # the outcome is sent whole
        if client is not None:
            client.close()
        emit(outcome)
        conn.close()
    finally:
        os._exit(0)  # stray pipeline threads must not keep a finished worker alive


@dataclass
class Worker:
    """A running worker process and the server's end of its pipe."""

    process: Any
    conn: Connection

    @property
    def pid(self) -> int | None:
        pid: int | None = self.process.pid
        return pid

    def messages(self) -> Any:
        """The worker's messages until it ends (its last one is its outcome, if it got that
        far); then the process is joined."""
        try:
            while True:
                try:
                    yield self.conn.recv()
                except (EOFError, OSError):
                    return
        finally:
            self.conn.close()
            self.process.join()

    def outcome(self, emit: Emit) -> Message | None:
        """Forward the worker's progress to ``emit`` until it ends; its outcome
        (``result``, ``error`` or ``stopped``), or None when it died without one."""
        last: Message | None = None
        for message in self.messages():
            if message[0] in ("result", "error", "stopped", "memory"):
                last = message
            else:
                emit(message)
        return last

    def stop(self, grace_s: float = 20.0) -> None:
        """Ask the worker to stop (``SIGTERM``: it discards what it had not committed), then
        kill it if it has not stopped within ``grace_s``."""
        if self.process.exitcode is not None:
            return
        try:
            self.process.terminate()
        except (OSError, ValueError):
            return
        self.process.join(grace_s)
        if self.process.exitcode is None:
            self.process.kill()

    def exit_reason(self) -> str:
        code = self.process.exitcode
        if code is None:
            return "終了状態は不明"
        if code < 0:
            try:
                name = signal.Signals(-code).name
            except ValueError:
                name = str(-code)
            return f"シグナル {-code}({name})"
        return f"終了コード {code}"


def start(task: Task, *, memory_mb: int = 0) -> Worker:
    """``task`` in a new ``spawn`` process (its address space capped at ``memory_mb`` MiB,
    0: no cap); read its :meth:`Worker.messages`."""
    ctx = multiprocessing.get_context("spawn")
    ours, theirs = ctx.Pipe(duplex=False)
    process = ctx.Process(
        target=_child,
        args=(task, theirs, os.getpid(), memory_mb),
        name="tansaku-job",
        daemon=True,
    )
    process.start()
    theirs.close()
    return Worker(process, ours)


__all__ = [
    "IngestTask",
    "QATask",
    "Task",
    "Worker",
    "open_client",
    "portable_embedder",
    "run_task",
    "start",
]

"""File locks between processes: one writer per collection, and readers that pin a generation.

Both are ``flock`` locks on small files (released by the kernel when a process dies, however it
dies: a killed ingest never leaves a stale lock behind).

- :class:`WriterLock` — exclusive, one per collection (``<collection>/write.lock``). A second
  writer waits up to a bounded time, telling the user who holds the lock, then gives up with
  :class:`~tansaku.errors.CollectionBusy`. Readers never take it.
- :class:`ReaderPin` — shared, one per open generation (``<generation>/.readers``). The writer
  removes an old generation only when it can take the exclusive lock on it, i.e. when no process
  has it open.
"""

from __future__ import annotations

import fcntl
import json
import os
import socket
import sys
import time
from collections.abc import Callable
from datetime import datetime
from pathlib import Path

from tansaku.errors import CollectionBusy

DEFAULT_WAIT_S = 600.0  # a second writer waits this long for the first (an ingest of minutes)
ENV_WAIT = "TANSAKU_WRITE_WAIT"
_POLL_S = 0.2

WaitFn = Callable[[str], None]  # told once, with a Japanese message, that the writer waits


def _holder(path: Path) -> dict[str, object]:
    try:
        data = json.loads(path.read_text(encoding="utf-8") or "{}")
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def describe_holder(info: dict[str, object]) -> str:
    """「プロセス 1234(tansaku ingest …、07:12 から)」 — who holds a writer lock."""
    if not info:
        return "別のプロセス"
    cmd = str(info.get("command", "")).strip()
    since = str(info.get("since", ""))[11:19]
    parts = [p for p in (cmd[:80], f"{since} から" if since else "") if p]
    host = info.get("host")
    where = f"{host} の" if host and host != socket.gethostname() else ""
    detail = f"({'、'.join(parts)})" if parts else ""
    return f"{where}プロセス {info.get('pid', '?')}{detail}"


def wait_seconds() -> float:
    raw = os.environ.get(ENV_WAIT)
    try:
        return float(raw) if raw else DEFAULT_WAIT_S
    except ValueError:
        return DEFAULT_WAIT_S


class WriterLock:
    """The exclusive writer lock of one collection (a context manager)."""

    def __init__(
        self,
        path: Path,
        what: str,
        *,
        wait_s: float | None = None,
        on_wait: WaitFn | None = None,
    ) -> None:
        self.path = path
        self.what = what
        self.wait_s = wait_seconds() if wait_s is None else wait_s
        self.on_wait = on_wait
        self._fd: int | None = None

    def acquire(self) -> None:
        deadline = time.monotonic() + self.wait_s
        told = False
        while True:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                os.close(fd)
                holder = describe_holder(_holder(self.path))
                if time.monotonic() >= deadline:
                    raise CollectionBusy(
                        f"{self.what}は{holder}が書き込み中です。"
                        f"{self.wait_s:.0f} 秒待ちましたが終わりませんでした。"
                        "終わってからもう一度実行してください"
                    ) from None
                if not told and self.on_wait is not None:
                    self.on_wait(f"{self.what}は{holder}が書き込み中です。終わるまで待ちます…")
                    told = True
                time.sleep(_POLL_S)
                continue
            if _same_file(fd, self.path):
                break
            os.close(fd)  # the folder was removed or replaced while we waited: lock the new one
        info = {
            "pid": os.getpid(),
            "host": socket.gethostname(),
            "command": " ".join(Path(a).name if i == 0 else a for i, a in enumerate(sys.argv)),
            "since": datetime.now().astimezone().isoformat(timespec="seconds"),
        }
        os.ftruncate(fd, 0)
        os.pwrite(fd, json.dumps(info, ensure_ascii=False).encode("utf-8"), 0)
        self._fd = fd

    def release(self) -> None:
        if self._fd is not None:
            try:
                os.ftruncate(self._fd, 0)
                fcntl.flock(self._fd, fcntl.LOCK_UN)
            finally:
                os.close(self._fd)
                self._fd = None

    def __enter__(self) -> WriterLock:
        self.acquire()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


def _same_file(fd: int, path: Path) -> bool:
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return False
    own = os.fstat(fd)
    return (st.st_dev, st.st_ino) == (own.st_dev, own.st_ino)


class ReaderPin:
    """A shared lock on a generation's ``.readers`` file while this process has it open."""

    def __init__(self, path: Path) -> None:
        """Raises ``FileNotFoundError`` when the generation is gone (never created here: a
        writer may be removing the folder)."""
        self.path = path
        self._fd: int | None = os.open(path, os.O_RDONLY)
        fcntl.flock(self._fd, fcntl.LOCK_SH)

    def release(self) -> None:
        if self._fd is not None:
            os.close(self._fd)  # closing the last descriptor releases the lock
            self._fd = None


def try_exclusive(path: Path) -> int | None:
    """An exclusive lock on ``path`` if nobody holds a shared one (the descriptor to close
    after removing what it guards), else ``None``."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        return None
    return fd

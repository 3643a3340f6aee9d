"""The server's search-event rows, written to appdb by one thread in batches.

A search hands its row to :meth:`EventWriter.put` and answers at once; the writer stores what
arrived within ``interval`` seconds (half a second by default, at most ``max_batch`` rows) in
one transaction (split in parts of ``max_batch`` rows) — under load one commit for many
searches instead of one each. Nothing is
dropped on a clean stop: :meth:`close` (the app's shutdown, also on SIGTERM) writes every row
still waiting, and a row put after it is written at once. Whoever reads rows back in the same
server (``POST /api/feedback`` finds its search by ``query_id``) calls :meth:`flush` first. A
batch that fails is retried row by row, so one bad row costs only itself; a row that cannot be
written is logged, never raised into a search. Up to ``max_pending`` rows wait; past that a
search waits for the writer (no row is dropped to keep up).
"""

from __future__ import annotations

import logging
import os
import queue
import threading
from typing import Any

from tansaku.appdb.events import EventRow

log = logging.getLogger("tansaku.server")
INTERVAL_S = 0.5
ENV_INTERVAL = "TANSAKU_EVENT_FLUSH_S"
_FLUSH = object()
_STOP = object()


def flush_interval(setting: float | None = None) -> float:
    """``setting``, else ``$TANSAKU_EVENT_FLUSH_S``, else half a second (0: no batching)."""
    if setting is None:
        raw = os.environ.get(ENV_INTERVAL, "").strip()
        try:
            setting = float(raw) if raw else INTERVAL_S
        except ValueError:
            setting = INTERVAL_S
    return max(0.0, setting)


class EventWriter:
    """Batched writes of :class:`~tansaku.appdb.events.EventRow` into ``repo``
    (``appdb.events``); see the module docstring."""

    def __init__(
        self,
        repo: Any,
        *,
        interval: float = INTERVAL_S,
        max_batch: int = 500,
        max_pending: int = 20_000,
    ) -> None:
        self.repo = repo
        self.interval = interval
        self.max_batch = max_batch
        self._queue: queue.Queue[Any] = queue.Queue(maxsize=max_pending)
        self._done = threading.Condition()
        self._put = 0  # rows handed over so far
        self._handled = 0  # rows written (or given up) so far
        self._closed = False
        self._gate = threading.Lock()  # a row is queued before the stop marker, or written now
        self._wake = threading.Event()  # ends the writer's wait for more rows: flush, close
        self._thread = threading.Thread(target=self._run, name="search-events", daemon=True)
        self._thread.start()

    def put(self, row: EventRow) -> None:
        """Queue ``row`` (written within ``interval``); after :meth:`close`, write it now."""
        with self._gate:
            if not self._closed:
                with self._done:
                    self._put += 1
                self._queue.put(row)
                return
        self._write([row])

    def flush(self, timeout: float = 30.0) -> bool:
        """Wait until every row put before this call is stored; False on ``timeout``."""
        with self._done:
            target = self._put
            if self._handled >= target:
                return True
        if self._closed:
            return True
        self._queue.put(_FLUSH)
        self._wake.set()
        with self._done:
            return self._done.wait_for(lambda: self._handled >= target, timeout)

    def close(self, timeout: float = 60.0) -> None:
        """Write every waiting row and stop the thread (idempotent)."""
        with self._gate:
            if self._closed:
                return
            self._closed = True
            self._queue.put(_STOP)
            self._wake.set()
        self._thread.join(timeout)
        if self._thread.is_alive():
            log.error("search events: the writer did not finish in %.0f s", timeout)

    @property
    def pending(self) -> int:
        """Rows handed over and not yet stored."""
        with self._done:
            return self._put - self._handled

    def _run(self) -> None:
        stop = False
        while not stop:
            batch, stop = self._collect()
            if batch:
                self._write(batch)
                with self._done:
                    self._handled += len(batch)
                    self._done.notify_all()

    def _collect(self) -> tuple[list[EventRow], bool]:
        """The next batch: what arrives within ``interval`` of its first row, cut short by a
        flush or the stop marker. The thread sleeps through the interval and then takes what
        the queue holds at once: a search's put never wakes it (that was a thread switch per
        search under load)."""
        first = self._queue.get()
        if first is _STOP:
            return self._drain(), True
        if first is _FLUSH:
            return [], False
        self._wake.wait(self.interval)  # set by flush and close
        self._wake.clear()  # whatever set it queued its marker before: the drain below takes it
        batch = [first]
        while True:
            try:
                item = self._queue.get_nowait()
            except queue.Empty:
                return batch, False
            if item is _STOP:
                return batch + self._drain(), True
            if item is not _FLUSH:
                batch.append(item)

    def _drain(self) -> list[EventRow]:
        rows: list[EventRow] = []
        while True:
            try:
                item = self._queue.get_nowait()
            except queue.Empty:
                return rows
            if item is not _FLUSH and item is not _STOP:
                rows.append(item)

    def _write(self, rows: list[EventRow]) -> None:
        for start in range(0, len(rows), self.max_batch):
            part = rows[start : start + self.max_batch]
            try:
                self.repo.record_many(part)
            except Exception:
                log.warning("search events: a batch of %d failed, writing one by one", len(part))
                for row in part:
                    self._write_one(row)

    def _write_one(self, row: EventRow) -> None:
        try:
            self.repo.record_many([row])
        except Exception:  # the search answered; a lost row must not fail it
            log.exception("search event %s not recorded in appdb", row.event.get("query_id"))

"""How far a bulk ingest is: counts, rates over the last seconds, and the time left.

A bulk ingest (:mod:`tansaku.ingest.bulk`) reports a :class:`BulkProgress` after every batch it
writes. The time left comes from the source bytes handled so far (known from the first second:
the walk measures every file), at the rate of the last ``window`` seconds, so a resumed run —
fast through what is already stored, then at embedding speed — settles on the right estimate.
"""

from __future__ import annotations

import time
from collections import deque
from dataclasses import asdict, dataclass
from typing import Any

WINDOW_S = 30.0


@dataclass(frozen=True, kw_only=True)
class BulkProgress:
    """One report of a bulk ingest (also :meth:`to_dict` for the server's job API)."""

    stage: str
    """``load`` (walking and reading the first files), ``write`` (batches being written),
    ``sync`` (removing documents gone from the sources), ``index``, ``done``."""
    files_done: int = 0
    files_total: int = 0
    bytes_done: int = 0
    """Source bytes whose records are written (or found unchanged)."""
    bytes_total: int = 0
    documents: int = 0
    """Documents handled: written, or found unchanged."""
    chunks: int = 0
    """Records handled (inserted, updated, unchanged or skipped)."""
    written: int = 0
    """Records inserted or updated."""
    embedded: int = 0
    """Texts the embedding model embedded in this run (the cache answered the others)."""
    elapsed_s: float = 0.0
    docs_per_s: float = 0.0
    chunks_per_s: float = 0.0
    """Rates over the last :data:`WINDOW_S` seconds."""
    eta_s: float | None = None
    """Seconds left at the current rate; ``None`` until it can be estimated."""

    @property
    def fraction(self) -> float:
        return self.bytes_done / self.bytes_total if self.bytes_total else 0.0

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        for key in ("elapsed_s", "docs_per_s", "chunks_per_s", "eta_s"):
            if data[key] is not None:
                data[key] = round(data[key], 2)
        return data


class Meter:
    """Turns cumulative counts into :class:`BulkProgress` with windowed rates and an ETA."""

    def __init__(self, *, window: float = WINDOW_S, clock: Any = time.monotonic) -> None:
        self.window = window
        self.clock = clock
        self.start = clock()
        self.samples: deque[tuple[float, int, int, int]] = deque()  # t, bytes, docs, chunks

    def report(self, **counts: Any) -> BulkProgress:
        now = self.clock()
        bytes_done = int(counts.get("bytes_done", 0))
        docs, chunks = int(counts.get("documents", 0)), int(counts.get("chunks", 0))
        self.samples.append((now, bytes_done, docs, chunks))
        while len(self.samples) > 2 and now - self.samples[1][0] >= self.window:
            self.samples.popleft()  # keep one sample at least a window old
        t0, b0, d0, c0 = self.samples[0]
        span = now - t0
        docs_rate = (docs - d0) / span if span > 0 else 0.0
        chunks_rate = (chunks - c0) / span if span > 0 else 0.0
        bytes_rate = (bytes_done - b0) / span if span > 0 else 0.0
        total = int(counts.get("bytes_total", 0))
        eta = None
        if total and bytes_done >= total:
            eta = 0.0
        elif bytes_rate > 0 and total:
            eta = (total - bytes_done) / bytes_rate
        return BulkProgress(
            elapsed_s=now - self.start,
            docs_per_s=docs_rate,
            chunks_per_s=chunks_rate,
            eta_s=eta,
            **counts,
        )


__all__ = ["WINDOW_S", "BulkProgress", "Meter"]

"""Learning a large read-only shard's candidates in the background, right after it loads.

A search asks the engine for ids and scores and names each candidate from the
:class:`~tansaku.store.candidates.CandidateIndex`; an id the index has not seen costs a payload
read, and the engine decodes the whole payload for it, text included. A large collection's first
questions after a load paid that for most of their candidates: at 100k records and their ~300k
sentence units the retrieval's p50 was ~19.5 ms for the first 200 new questions and ~13.5 ms
for the next 200, against 10.5 and 8.5 ms with the index filled from one scroll of both shards
(402,363 points in 6.5 s; docs/benchmarks.md).

:func:`start` runs that scroll on a daemon thread for a shard of at least :data:`MIN_POINTS`
points: a page at a time under the holder's lock (searches go between pages), until the shard is
read, the index is full, or the holder's engine shard is closed (a close, or a close while idle:
the thread never loads a shard again). A smaller shard learns its candidates from its first
searches, as before. A failure only logs: the index then fills by use.
"""

from __future__ import annotations

import logging
import threading
from typing import Any, Protocol

import qdrant_edge as qe

from tansaku.store.candidates import CandidateIndex, payload_keys

log = logging.getLogger(__name__)

MIN_POINTS = 20_000
"""Shards with fewer points are left to fill their index by use."""
PAGE = 2_000
"""Points read per scroll, the lock held for one page at a time."""


class Holder(Protocol):
    """What :func:`start` needs of a store: its lock, its engine shard (``None`` once closed)
    and its candidate index."""

    _lock: threading.RLock
    _engine: qe.EdgeShard | None
    _candidates: CandidateIndex


def start(holder: Holder, *, bare: bool, min_points: int = MIN_POINTS) -> threading.Thread:
    """Start filling ``holder``'s candidate index (``bare``: a unit shard's); returns the
    thread (it ends at once when the shard has fewer than ``min_points`` points)."""
    thread = threading.Thread(
        target=_fill, args=(holder, bare, min_points), name="tansaku-prefill", daemon=True
    )
    thread.start()
    return thread


def _fill(holder: Holder, bare: bool, min_points: int) -> None:
    try:
        with holder._lock:
            shard = holder._engine
            if shard is None or int(shard.count(qe.CountRequest(exact=True))) < min_points:
                return
        selector = qe.PayloadSelector.Include(payload_keys(bare))
        offset: Any = None
        while True:
            with holder._lock:
                shard = holder._engine
                if shard is None:  # closed meanwhile
                    return
                points, offset = shard.scroll(
                    qe.ScrollRequest(
                        limit=PAGE, offset=offset, with_payload=selector, with_vector=False
                    )
                )
                if not holder._candidates.learn(points):
                    return  # the index is full
            if offset is None or not points:
                return
    except Exception:  # an optimisation: the index fills by use instead
        log.warning("could not pre-read the candidates of a shard", exc_info=True)

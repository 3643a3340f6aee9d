"""The threads an expanded search runs its query variants on: one pool per process, made on
first use, so a search does not start (and join) threads of its own — starting them was a
tenth of a cached search's CPU."""

from __future__ import annotations

import os
import threading
from concurrent.futures import ThreadPoolExecutor

VARIANT_THREADS = 4
"""At most this many variants of all searches run at once; more wait their turn (within the
search's ``budget_ms``)."""

_lock = threading.Lock()
_pool: tuple[int, ThreadPoolExecutor] | None = None


def variant_pool() -> ThreadPoolExecutor:
    """This process's pool (a forked child makes its own: threads do not survive a fork)."""
    global _pool
    current = _pool
    if current is not None and current[0] == os.getpid():
        return current[1]
    with _lock:
        if _pool is None or _pool[0] != os.getpid():
            pool = ThreadPoolExecutor(VARIANT_THREADS, thread_name_prefix="tansaku-variant")
            _pool = (os.getpid(), pool)
        return _pool[1]

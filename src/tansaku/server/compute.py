"""Where the server's searches run: a pool of as many threads as the process has cores.

``POST /api/search`` is an ``async`` route that hands the search — embedding the query, the
engine, the response's JSON — to this pool and waits for it without holding a thread of the
event loop's own pool. At most ``workers`` searches compute at once; more requests wait in the
pool's queue (not in forty threads contending for two cores and the interpreter lock), while
the event loop keeps reading requests and sending finished answers.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from typing import Any, TypeVar

T = TypeVar("T")
ENV_WORKERS = "TANSAKU_SEARCH_WORKERS"
PER_PROCESS = 3


def cores() -> int:
    """The cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        return os.cpu_count() or 1


def pool_size(setting: int | None = None, *, processes: int = 0) -> int:
    """``setting``, else ``$TANSAKU_SEARCH_WORKERS``, else the cores — or, with ``processes``
    search processes (``tansaku.server.search_processes``), PER_PROCESS threads for each:
    one waits on each of the child's two searches while a third turns a result into JSON; 0: no
    pool (each search in its request's thread, as every other route)."""
    if setting is None:
        raw = os.environ.get(ENV_WORKERS, "").strip()
        setting = int(raw) if raw.isdigit() else None
    if setting is None:
        return PER_PROCESS * processes if processes > 0 else cores()
    return max(0, setting)


class ComputePool:
    """``workers`` threads for searches (see the module docstring)."""

    def __init__(self, workers: int) -> None:
        self.workers = workers
        self._executor = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="search")

    async def run(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """``fn(*args, **kwargs)`` in the pool, awaited from the event loop."""
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._executor, partial(fn, *args, **kwargs))

    def shutdown(self) -> None:
        self._executor.shutdown(wait=True, cancel_futures=True)

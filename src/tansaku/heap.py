"""The heap of a long-lived process (a server, its search processes) once it is loaded.

* :func:`freeze_loaded` — after loading, a server holds ~150,000 objects that live as long as
  it does (modules, the web application and its schemas, the tokenizer, the engine's handles);
  a search process ~45,000. CPython's cyclic collector walks all of them at every full
  collection: measured on the demo workspace under 50 clients of new questions, a pause of
  ~90–105 ms every ~16 s in the server (every request in flight waits) and ~20 ms every ~4 s in
  a search process. ``gc.freeze()`` moves the objects alive now to a generation the collector
  never walks; objects made afterwards are collected as before, and a frozen object whose last
  reference goes is still freed (reference counting). Only a reference cycle among frozen
  objects would stay: what is alive once a process has loaded is meant to stay alive.
* :func:`trim` — hand the C heap's free memory back to the system (glibc ``malloc_trim``).
"""

from __future__ import annotations

import contextlib
import ctypes
import gc
import logging
import sys
import time

log = logging.getLogger("tansaku.heap")


def freeze_loaded() -> int:
    """Collect once, then freeze every object that survived (see the module docstring);
    returns how many objects are frozen now."""
    t0 = time.perf_counter()
    gc.collect()
    gc.freeze()
    frozen = gc.get_freeze_count()
    log.info("froze %d loaded objects in %.0f ms", frozen, (time.perf_counter() - t0) * 1000)
    return frozen


def trim() -> None:
    """Give the C heap's free memory back to the system (glibc ``malloc_trim``): opening the
    model and the tokenizer's vocabulary leaves ~25 MiB of freed scratch in a long-lived
    process. Elsewhere nothing happens."""
    if not sys.platform.startswith("linux"):
        return
    with contextlib.suppress(OSError, AttributeError):  # not glibc: musl has no malloc_trim
        ctypes.CDLL("libc.so.6").malloc_trim(0)

"""Crash points for the kill -9 tests: ``TANSAKU_CRASH_AT=records:3`` makes the process kill
itself (SIGKILL, as ``kill -9`` would) the 3rd time it passes ``crashpoint("records")``. Unset —
always, outside those tests — a crash point costs one dictionary lookup."""

from __future__ import annotations

import os
import signal
from collections import Counter

ENV = "TANSAKU_CRASH_AT"
_passed: Counter[str] = Counter()


def crashpoint(name: str) -> None:
    spec = os.environ.get(ENV)
    if not spec:
        return
    stage, _, nth = spec.partition(":")
    if stage != name:
        return
    _passed[name] += 1
    if _passed[name] >= int(nth or 1):
        os.kill(os.getpid(), signal.SIGKILL)

"""A fake sandbox worker for the recycling tests: it speaks ``worker.py``'s protocol, answers
every query with its own pid, and fails on cue — the way a real worker fails only after heavy
queries, which a test cannot stage quickly or deterministically.

    … INTERNAL …   failed: a DuckDB internal error (message only, not marked degraded)
    … BREAK …      failed: an ordinary binder error, and from then on the health probe is wrong
    the probe      the right answer, or a wrong one once broken

Started by ``WorkerClient(config, command=[sys.executable, this file])``.
"""

from __future__ import annotations

import json
import os
import sys

from tansaku.tables.worker import PROBE_ANSWER, PROBE_SQL


def _send(message: dict) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def main() -> int:
    sys.stdin.readline()  # the config: not needed
    _send({"ready": True})
    broken = False
    for line in sys.stdin:
        request = json.loads(line)
        if "prepare" in request:
            _send({"ready": True})
            continue
        sql = request["sql"]
        if sql == PROBE_SQL:
            rows = [[0]] if broken else PROBE_ANSWER
            _send({"ok": {"columns": ["sum(i)"], "rows": rows, "truncated": False}})
        elif "INTERNAL" in sql:
            message = "INTERNAL Error: Attempted to access index 3 within vector of size 3"
            _send({"failed": {"message": message, "timed_out": False, "degraded": False}})
        elif "BREAK" in sql:
            broken = True
            message = 'Binder Error: Referenced column "BREAK" not found in FROM clause!'
            _send({"failed": {"message": message, "timed_out": False, "degraded": False}})
        else:
            _send({"ok": {"columns": ["pid"], "rows": [[os.getpid()]], "truncated": False}})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

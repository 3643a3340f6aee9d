"""The sandbox worker process: ``python -m tansaku.tables._worker_main LIMIT``.

The child's side of the protocol in ``worker.py``: cap the address space, load the tables into
the locked engine, then answer one JSON line per request until stdin closes. A module of its own
so that ``runpy`` never re-executes a module the package already imported.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import IO, Any

from tansaku.errors import ConfigError, LoadError
from tansaku.tables.engine import QueryFailed, TableLoadError
from tansaku.tables.validate import QueryRejected
from tansaku.tables.worker import SCOPE_ADDRESS_SPACE


def _send(out: IO[str], message: dict[str, Any]) -> None:
    out.write(json.dumps(message, ensure_ascii=True) + "\n")
    out.flush()


def _cap_address_space(limit: int) -> None:
    """Set the soft ``RLIMIT_AS`` (raised again for each scope's database; SQL cannot)."""
    try:
        import resource

        _, hard = resource.getrlimit(resource.RLIMIT_AS)
        if hard != resource.RLIM_INFINITY:
            limit = min(limit, hard)
        resource.setrlimit(resource.RLIMIT_AS, (limit, hard))
    except (ImportError, ValueError, OSError):  # not POSIX
        pass


def serve(limit: int) -> int:
    """The child's main loop (see the module docstring); returns the exit code."""
    out = os.fdopen(os.dup(1), "w", encoding="ascii", buffering=1)
    os.dup2(2, 1)  # stray prints (progress bars, warnings) must not corrupt the protocol
    _cap_address_space(limit)
    import tomllib

    from tansaku.tables.engine import Engine
    from tansaku.tables.registry import parse_tables_config

    stdin = sys.stdin.buffer
    try:
        first = json.loads(stdin.readline())
        config = parse_tables_config(tomllib.loads(first["config"]), Path(first["base_dir"]))
        scopes = first.get("scopes") or []
        _cap_address_space(limit + SCOPE_ADDRESS_SPACE * len(scopes))
        engine = Engine(config, scopes, first.get("files") or {})
    except Exception as e:  # report, do not crash silently
        _send(out, {"error": _error(e)})
        return 1
    _send(out, {"ready": True})
    for line in stdin:
        try:
            request = json.loads(line)
            if "prepare" in request:
                _cap_address_space(limit + SCOPE_ADDRESS_SPACE * (len(engine.scopes) + 1))
                engine.prepare(request["prepare"])
                _send(out, {"ready": True})
                continue
            # room for one more scope's database, should this query's be loaded now
            _cap_address_space(limit + SCOPE_ADDRESS_SPACE * (len(engine.scopes) + 1))
            result = engine.execute(
                request["sql"],
                request.get("params") or [],
                request.get("max_rows"),
                request.get("allowed"),
            )
            ok = {
                "columns": list(result.columns),
                "rows": [list(r) for r in result.rows],
                "truncated": result.truncated,
            }
            _send(out, {"ok": ok})
        except QueryRejected as e:
            _send(out, {"rejected": {"reason": e.reason}})
        except QueryFailed as e:
            failed = {"message": str(e), "timed_out": e.timed_out, "degraded": e.degraded}
            _send(out, {"failed": failed})
        except (LoadError, ConfigError) as e:  # a scope that could not be prepared
            _send(out, {"error": _error(e)})
        except Exception as e:  # unknown state: the parent replaces this process
            message = f"{type(e).__name__}: {e}"
            _send(out, {"failed": {"message": message, "timed_out": False, "degraded": True}})
    engine.close()
    return 0


def _error(e: Exception) -> dict[str, Any]:
    if isinstance(e, TableLoadError):
        return {"type": "load", "path": e.path, "reason": e.reason, "table": e.table}
    if isinstance(e, LoadError):
        return {"type": "load", "path": e.path, "reason": e.reason}
    if isinstance(e, ConfigError):
        return {"type": "config", "message": str(e)}
    return {"type": type(e).__name__, "message": str(e)}


if __name__ == "__main__":
    raise SystemExit(serve(int(sys.argv[1]) if len(sys.argv) > 1 else 2 * 2**30))

"""Entry point of the sandbox worker process: ``python -m tansaku.tables._worker_main LIMIT``.

A module of its own so that ``runpy`` never re-executes a module the package already imported.
"""

import sys

from tansaku.tables.worker import serve

if __name__ == "__main__":
    raise SystemExit(serve(int(sys.argv[1]) if len(sys.argv) > 1 else 2 * 2**30))

"""Old/new speed in alternating pairs: ``bench/scale.py``'s latency loop against two checkouts.

The machine is shared, so one run of each side means little; this builds one 100k collection
per checkout (kept), then runs the latency loop of each in turn, in fresh processes, so that
drift in the machine's load hits both sides alike.

    git worktree add /tmp/tansaku-old <commit>            # the code before the change
    python bench/pairs.py build  /tmp/tansaku-old /tmp/pairs/old [--size 100000]
    python bench/pairs.py build  .                 /tmp/pairs/new
    python bench/pairs.py pairs  /tmp/tansaku-old /tmp/pairs/old . /tmp/pairs/new [--pairs 2]

Each side's code is imported from its own ``src/`` (``PYTHONPATH``); vectors are
``scale.RandomEmbedder``'s, chunks ``scale.synthetic``'s, as in ``bench/scale.py``. Prints one
JSON line per run: p50 ms per mode (bm25, dense, hybrid, each ±filter).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve()


def _child(root: Path, home: Path, action: str, arg: int) -> dict:
    env = {**os.environ, "PYTHONPATH": str(root.resolve() / "src")}
    cmd = [sys.executable, str(HERE), "_" + action, str(root), str(home), str(arg)]
    out = subprocess.run(cmd, env=env, check=True, capture_output=True, text=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def _inner(action: str, root: Path, home: Path, arg: int) -> None:
    sys.path.insert(0, str(root / "bench"))
    import scale  # the checkout's own bench/scale.py
    import tansaku

    scale.DATA = HERE.parents[2] / "shared" / "data" / "jsquad-ir"
    assert Path(tansaku.__file__).resolve().is_relative_to(root.resolve()), tansaku.__file__

    class NoTimer:
        ms = store_ms = 0.0

        def reset(self) -> None:
            pass

    with tansaku.connect(home, embedder=scale.RandomEmbedder()) as ts:
        if action == "_build":
            t0 = time.perf_counter()
            ts.ingest_records(scale.synthetic(arg, scale.sentences()), collection="scale")
            with ts.writing("scale") as w:
                w.store.optimize()
                if w.needs_units:
                    w.units.optimize()
            print(json.dumps({"build_s": time.perf_counter() - t0}))
            return
        qs = scale.questions(200)
        ts.search(qs[0], collection="scale")
        res = scale.latency(ts, "scale", qs, arg, NoTimer())
        print(json.dumps({k: round(v["p50"], 3) for k, v in res.items()}))


def main() -> int:
    if len(sys.argv) > 1 and sys.argv[1].startswith("_"):
        _inner(sys.argv[1], Path(sys.argv[2]), Path(sys.argv[3]), int(sys.argv[4]))
        return 0
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("action", choices=["build", "pairs"])
    ap.add_argument("paths", nargs="+", type=Path)
    ap.add_argument("--size", type=int, default=100_000)
    ap.add_argument("--pairs", type=int, default=2)
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    if args.action == "build":
        root, home = args.paths
        print(json.dumps(_child(root, home, "build", args.size)))
        return 0
    old_root, old_home, new_root, new_home = args.paths
    for i in range(args.pairs):
        for side, root, home in (("old", old_root, old_home), ("new", new_root, new_home)):
            print(
                json.dumps(
                    {"pair": i + 1, "side": side, **_child(root, home, "latency", args.runs)}
                )
            )
            sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())

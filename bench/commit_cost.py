"""What a write costs with generations: a small ingest and a no-op re-ingest into a built
collection, split into the commit's steps.

    python bench/commit_cost.py [--sizes 10000 100000] [--runs 5] [--out bench/results]

Each size is a fresh workspace under /tmp, built with the synthetic records and random vectors
of ``bench/scale.py`` (no model) and optimized. Then, ``--runs`` times: an ingest of 10 new
records (embedded by the same random embedder), and a re-ingest of those 10 (nothing changes:
no copy, no commit). The steps of each commit are timed by wrapping the functions that do them:
``start`` (copying the committed generation, sparse), ``settle`` (loading each closed shard once),
``publish`` (fsync of the generation and the rename of ``CURRENT``) and ``collect`` (removing
old generations). Medians over the runs; writes ``commit-cost.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import scale
import tansaku
from tansaku.backends.embedded import generations, writer

ROOT = Path(__file__).resolve().parents[1]
STEPS: dict[str, list[float]] = {}


def _timed(module: Any, name: str) -> None:
    inner: Callable[..., Any] = getattr(module, name)

    def call(*args: Any, **kwargs: Any) -> Any:
        t0 = time.perf_counter()
        try:
            return inner(*args, **kwargs)
        finally:
            STEPS.setdefault(name, []).append(time.perf_counter() - t0)

    setattr(module, name, call)


for _module, _name in (
    (generations, "start"),
    (generations, "publish"),
    (generations, "collect"),
    (writer, "settle"),
):
    _timed(_module, _name)


def one_size(n: int, runs: int, sents: list[str]) -> dict[str, Any]:
    home = Path(tempfile.mkdtemp(prefix=f"tansaku-commit-{n}-"))
    out: dict[str, Any] = {"size": n}
    try:
        emb = scale.RandomEmbedder()
        with tansaku.connect(home, embedder=emb) as ts:
            t0 = time.perf_counter()
            ts.ingest_records(scale.synthetic(n, sents), collection="c")
            with ts.writing("c") as w:
                w.store.optimize()
                w.units.optimize()
            out["build_s"] = time.perf_counter() - t0
            out["disk_mb"] = scale.du_mb(ts.collection("c").gen)
            small, noop = [], []
            STEPS.clear()
            for k in range(runs):
                recs = [
                    replace(r, id=f"s{k}-{r.id}", doc_id=f"s{k}-{r.doc_id}")
                    for r in scale.synthetic(10, sents, seed=500 + k)
                ]
                t0 = time.perf_counter()
                ts.ingest_records(recs, collection="c")
                small.append(time.perf_counter() - t0)
                t0 = time.perf_counter()
                again = ts.ingest_records(recs, collection="c")
                noop.append(time.perf_counter() - t0)
                assert again.unchanged == 10, again
            out["small_ingest_s"] = statistics.median(small)
            out["noop_reingest_s"] = statistics.median(noop)
            # settle runs twice a commit (records and units): report it per commit
            out["steps_s"] = {
                k: statistics.median(v) * (2 if k == "settle" else 1) for k, v in STEPS.items()
            }
            out["commits"] = len(STEPS.get("publish", []))
    finally:
        shutil.rmtree(home, ignore_errors=True)
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--out", type=Path, default=ROOT / "bench" / "results")
    args = ap.parse_args()
    sents = scale.sentences()
    results = []
    for n in args.sizes:
        r = one_size(n, args.runs, sents)
        results.append(r)
        steps = ", ".join(f"{k} {v:.2f}" for k, v in r["steps_s"].items())
        print(
            f"{n}: disk {r['disk_mb']:.0f} MB, small ingest {r['small_ingest_s']:.2f} s "
            f"({steps}), no-op re-ingest {r['noop_reingest_s']:.2f} s",
            file=sys.stderr,
        )
    args.out.mkdir(parents=True, exist_ok=True)
    meta = {
        "date": datetime.now(UTC).strftime("%Y-%m-%d"),
        "machine": f"{platform.machine()}, {os.cpu_count()} CPUs, "
        f"Python {platform.python_version()}",
        "command": "python bench/commit_cost.py " + " ".join(sys.argv[1:]),
    }
    path = args.out / "commit-cost.json"
    path.write_text(
        json.dumps({"meta": meta, "sizes": results}, ensure_ascii=False, indent=1),
        encoding="utf-8",
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""The 1M-chunk point: ingest in batches (bounded memory), one optimize, then query latency.

    python bench/scale_stream.py --size 1000000 --batch 100000 --queries 100

``bench/scale.py`` ingests a size in one ``ingest_records`` call, which holds every record, its
analysed terms and its vector at once (RSS passed 21 GB at 1M on this machine, so that run was
stopped). Here the same synthetic chunks (``scale.synthetic``, same seed) go in batches of
``--batch``: what a user does with a large corpus (one ``tansaku ingest`` per folder). The
automatic ``optimize()`` after each large batch is switched off for the build (one HNSW build at
the end instead of ten growing ones) — the only thing this script changes in the library's
behaviour — and timed on its own. Then, for bm25, dense and the default hybrid, with and without
a 10% filter, ``--queries`` jsquad questions (query vectors cached, as in ``scale.py``), and the
RSS of a fresh process that reopens the workspace and runs the same queries. Writes
``bench/results/scale-<size>-stream.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import tansaku
from tansaku.store.edge import EdgeStore

sys.path.insert(0, str(Path(__file__).resolve().parent))
from scale import (
    ROOT,
    EngineTimer,
    RandomEmbedder,
    du_mb,
    latency,
    questions,
    rss_mb,
    sentences,
    synthetic,
)


def build(home: Path, n: int, batch: int) -> dict[str, Any]:
    sents = sentences()
    out: dict[str, Any] = {"size": n, "batch": batch, "batches": []}
    needs_index = EdgeStore.needs_index
    EdgeStore.needs_index = lambda self, changed: False  # type: ignore[method-assign]
    try:
        with tansaku.connect(home, embedder=RandomEmbedder()) as ts:
            all_records = synthetic(n, sents)  # ~1.5 GB at 1M: small beside one big ingest
            t_all = time.perf_counter()
            for start in range(0, n, batch):
                recs = all_records[start : start + batch]
                t0 = time.perf_counter()
                rep = ts.ingest_records(recs, collection="scale")
                dt = time.perf_counter() - t0
                assert rep.inserted == len(recs), rep
                row = {
                    "upto": start + len(recs),
                    "s": dt,
                    "per_s": len(recs) / dt,
                    "rss_mb": rss_mb(),
                }
                out["batches"].append(row)
                print(f"  {row}", file=sys.stderr, flush=True)
            del all_records
            out["ingest_s"] = time.perf_counter() - t_all
            out["ingest_per_s"] = n / out["ingest_s"]
            col = ts.collection("scale")
            out["disk_mb_as_ingested"] = du_mb(col.path)
            t0 = time.perf_counter()
            col.store.optimize()
            out["optimize_records_s"] = time.perf_counter() - t0
            t0 = time.perf_counter()
            col.units.optimize()
            out["optimize_units_s"] = time.perf_counter() - t0
            out["disk_mb"] = du_mb(col.path)
            out["disk_mb_records"] = du_mb(col.path / "shard")
            out["disk_mb_units"] = du_mb(col.path / "units")
            out["units"] = col.units.count("default")
            out["build_peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
            print(f"  built: {json.dumps(out)}", file=sys.stderr, flush=True)
    finally:
        EdgeStore.needs_index = needs_index  # type: ignore[method-assign]
    return out


def query(home: Path, n_queries: int) -> dict[str, Any]:
    """Runs in a fresh process: reopen, query, report latency and RSS."""
    qs = questions(n_queries)
    rss0 = rss_mb()
    t0 = time.perf_counter()
    with tansaku.connect(home, embedder=RandomEmbedder()) as ts:
        ts.search(qs[0], collection="scale")
        first = time.perf_counter() - t0
        col = ts.collection("scale")
        timer = EngineTimer(col.store, col.units)
        lat = latency(ts, "scale", qs, 1, timer)
        return {
            "reopen_first_query_s": first,
            "rss_mb_before_open": rss0,
            "rss_mb_after_queries": rss_mb(),
            "latency": lat,
        }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--size", type=int, default=1_000_000)
    ap.add_argument("--batch", type=int, default=100_000)
    ap.add_argument("--queries", type=int, default=100)
    ap.add_argument("--out", type=Path, default=ROOT / "bench" / "results")
    ap.add_argument("--keep", action="store_true")
    ap.add_argument("--query-only", type=Path, help=argparse.SUPPRESS)  # the child process
    args = ap.parse_args()
    if args.query_only:
        print(json.dumps(query(args.query_only, args.queries)))
        return 0
    home = Path(tempfile.mkdtemp(prefix=f"tansaku-stream-{args.size}-"))
    try:
        built = build(home, args.size, args.batch)
        child = subprocess.run(
            [sys.executable, __file__, "--query-only", str(home), "--queries", str(args.queries)],
            check=True,
            capture_output=True,
            text=True,
        )
        sys.stderr.write(child.stderr)
        queried = json.loads(child.stdout)
    finally:
        if not args.keep:
            shutil.rmtree(home, ignore_errors=True)
    result = {
        "meta": {
            "date": datetime.now(UTC).strftime("%Y-%m-%d"),
            "machine": f"{platform.machine()}, {os.cpu_count()} cores, {platform.system()} "
            f"{platform.release()}, Python {platform.python_version()}",
            "command": " ".join(sys.argv),
        },
        "build": built,
        "query": queried,
    }
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / f"scale-{args.size}-stream.json").write_text(json.dumps(result, indent=2), "utf-8")
    print(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())

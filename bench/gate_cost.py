"""What the lexical-coverage gate (``[fusion] dense_gate``) costs a search: the same queries
searched with the gate and without it (zscore both), alternating query by query, query vectors
cached (each query searched once before timing), in one process.

    python bench/gate_cost.py                       # eval-nta-qa of .tansaku-bench, 300 queries
    python bench/gate_cost.py --set jsquad-ir --queries 500 --rounds 5

Prints p50 / p95 per variant (median over rounds) and the median of the per-query paired
differences; the collection must exist (``make bench`` builds the ``eval-<set>`` ones).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.retrieval_basket import HOME, datasets

import tansaku
from tansaku.config import FusionConfig

VARIANTS = {
    "zscore": FusionConfig(normalization="zscore", dense_gate=0.0),
    "zscore + gate 3": FusionConfig(normalization="zscore", dense_gate=3.0),
}


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def main(argv: list[str]) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--set", default="nta-qa")
    p.add_argument("--queries", type=int, default=300)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--home", type=Path, default=HOME)
    args = p.parse_args(argv)
    ds = datasets([args.set], None)[0]
    queries = list(ds.queries.values())[: args.queries]
    name = f"eval-{args.set}"
    kw = {"collection": name, "expand": False, "retry": False, "rerank": False, "top_k": 10}
    with tansaku.connect(args.home) as ts:
        for q in queries:  # warm: every query vector cached, every page read once
            for f in VARIANTS.values():
                ts.search(q, fusion=f, **kw)
        p50s: dict[str, list[float]] = {v: [] for v in VARIANTS}
        p95s: dict[str, list[float]] = {v: [] for v in VARIANTS}
        diffs: list[float] = []
        for r in range(args.rounds):
            times: dict[str, list[float]] = {v: [] for v in VARIANTS}
            order = list(VARIANTS) if r % 2 == 0 else list(reversed(VARIANTS))
            for q in queries:
                got = {}
                for v in order:
                    t0 = time.perf_counter()
                    ts.search(q, fusion=VARIANTS[v], **kw)
                    got[v] = (time.perf_counter() - t0) * 1000
                    times[v].append(got[v])
                diffs.append(got["zscore + gate 3"] - got["zscore"])
            for v in VARIANTS:
                p50s[v].append(statistics.median(times[v]))
                p95s[v].append(_pct(times[v], 0.95))
    base = statistics.median(p50s["zscore"])
    print(f"{name}: {len(queries)} queries × {args.rounds} rounds, query vectors cached")
    print("| variant | p50 ms | p95 ms | p50 vs zscore |")
    print("|---|---:|---:|---:|")
    for v in VARIANTS:
        m = statistics.median(p50s[v])
        print(f"| {v} | {m:.2f} | {statistics.median(p95s[v]):.2f} | {m / base:.3f}× |")
    print(f"median paired difference (gate − no gate): {statistics.median(diffs):+.3f} ms")


if __name__ == "__main__":
    main(sys.argv[1:])

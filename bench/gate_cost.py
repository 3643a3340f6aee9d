"""What a ranking setting costs a search: the same queries searched under two settings,
alternating query by query, query vectors cached (each query searched once under each before
timing), in one process.

    python bench/gate_cost.py                       # eval-nta-qa of .tansaku-bench, 300 queries
    python bench/gate_cost.py --set jsquad-ir --queries 500 --rounds 5
    python bench/gate_cost.py --compare default --home WS --collection scale \\
        --questions ../shared/data/jsquad-ir/queries.jsonl --queries 200 --rounds 5

``--compare gate`` (the default): zscore with and without the lexical-coverage gate
(``[fusion] dense_gate``). ``--compare length``: zscore and the gate with and without the
length weight (``[fusion] dense_length``). ``--compare default``: the ranking default (zscore,
the gate, the length weight, question phrasing weighed down; the collection's own config)
against max normalisation with none of them, every query term weighed alike. Prints p50 /
p95 per variant (median over rounds) and the median of the per-query paired differences; the
collection must exist (``make bench`` builds the ``eval-<set>`` ones; ``--collection`` and
``--questions`` name another collection and a BEIR queries.jsonl).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.retrieval_basket import HOME, datasets

import tansaku
from tansaku.config import FusionConfig

COMPARISONS: dict[str, dict[str, dict[str, Any]]] = {
    "gate": {
        "zscore": {"fusion": FusionConfig(dense_gate=0.0, dense_length=0.0)},
        "zscore + gate 3": {"fusion": FusionConfig(dense_gate=3.0, dense_length=0.0)},
    },
    "length": {
        "zscore + gate": {"fusion": FusionConfig(dense_length=0.0)},
        "zscore + gate + length": {"fusion": FusionConfig()},
    },
    "default": {
        "max, no gate": {
            "fusion": FusionConfig(normalization="max", dense_gate=0.0, dense_length=0.0),
            "functional_weight": 1.0,
        },
        "current default": {},  # the collection's own config
    },
}


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def _questions(args: argparse.Namespace) -> list[str]:
    if args.questions is None:
        return list(datasets([args.set], None)[0].queries.values())[: args.queries]
    with args.questions.open(encoding="utf-8") as f:
        return [json.loads(line)["text"] for line in f if line.strip()][: args.queries]


def main(argv: list[str]) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--compare", choices=sorted(COMPARISONS), default="gate")
    p.add_argument("--set", default="nta-qa")
    p.add_argument("--queries", type=int, default=300)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--home", type=Path, default=HOME)
    p.add_argument("--collection", default=None, help="default: eval-<set>")
    p.add_argument("--questions", type=Path, default=None, help="a BEIR queries.jsonl")
    args = p.parse_args(argv)
    variants = COMPARISONS[args.compare]
    first, second = variants
    queries = _questions(args)
    name = args.collection or f"eval-{args.set}"
    kw = {"collection": name, "expand": False, "retry": False, "rerank": False, "top_k": 10}
    with tansaku.connect(args.home) as ts:
        for q in queries:  # warm: every query vector cached, every page read once
            for options in variants.values():
                ts.search(q, **options, **kw)
        p50s: dict[str, list[float]] = {v: [] for v in variants}
        p95s: dict[str, list[float]] = {v: [] for v in variants}
        diffs: list[float] = []
        for r in range(args.rounds):
            times: dict[str, list[float]] = {v: [] for v in variants}
            order = list(variants) if r % 2 == 0 else list(reversed(variants))
            for q in queries:
                got = {}
                for v in order:
                    t0 = time.perf_counter()
                    ts.search(q, **variants[v], **kw)
                    got[v] = (time.perf_counter() - t0) * 1000
                    times[v].append(got[v])
                diffs.append(got[second] - got[first])
            for v in variants:
                p50s[v].append(statistics.median(times[v]))
                p95s[v].append(_pct(times[v], 0.95))
    base = statistics.median(p50s[first])
    print(f"{name}: {len(queries)} queries × {args.rounds} rounds, query vectors cached")
    print(f"| variant | p50 ms | p95 ms | p50 vs {first} |")
    print("|---|---:|---:|---:|")
    for v in variants:
        m = statistics.median(p50s[v])
        print(f"| {v} | {m:.2f} | {statistics.median(p95s[v]):.2f} | {m / base:.3f}× |")
    print(f"median paired difference ({second} − {first}): {statistics.median(diffs):+.3f} ms")


if __name__ == "__main__":
    main(sys.argv[1:])

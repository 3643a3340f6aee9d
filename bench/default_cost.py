"""What the ranking default costs in latency: the current default (zscore normalisation, the
lexical-coverage gate, question phrasing weighed down) against the previous one (max
normalisation, no gate, every query term weighed alike), on one collection, in one process.

    python bench/default_cost.py --home WORKSPACE --collection scale \\
        --queries ../shared/data/jsquad-ir/queries.jsonl --limit 200 --rounds 5

Each question is searched once under each setting first (its query vector is then cached, so
the model is out of the measure); then every round sends each question under both settings in
turn (interleaved, so a busy machine slows them alike). Per round the p50 of each setting's
``total`` timing (the plan's: analysis, retrieval, fusion; no embedding); the figures are the
medians over rounds and the ratio of the two.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
from pathlib import Path

import tansaku
from tansaku import FusionConfig
from tansaku.search.types import SearchRequest

PREVIOUS = {"fusion": FusionConfig(normalization="max", dense_gate=0.0), "functional_weight": 1.0}


def main(argv: list[str]) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--home", type=Path, required=True)
    ap.add_argument("--collection", required=True)
    ap.add_argument("--queries", type=Path, required=True, help="a BEIR queries.jsonl")
    ap.add_argument("--limit", type=int, default=200)
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args(argv)
    with args.queries.open(encoding="utf-8") as f:
        questions = [json.loads(line)["text"] for line in f if line.strip()][: args.limit]
    load0 = os.getloadavg()
    settings = {"previous": PREVIOUS, "current": {}}
    p50: dict[str, list[float]] = {name: [] for name in settings}
    with tansaku.connect(args.home) as ts:

        def total(q: str, options: dict) -> float:
            request = SearchRequest(query=q, collection=args.collection, **options)
            return float(ts.run(request).timings_ms["total"])

        for q in questions:  # vectors cached, pages mapped
            for options in settings.values():
                total(q, options)
        for r in range(args.rounds):
            times: dict[str, list[float]] = {name: [] for name in settings}
            for q in questions:
                for name, options in settings.items():
                    times[name].append(total(q, options))
            for name, xs in times.items():
                p50[name].append(statistics.median(xs))
            print(
                f"round {r + 1}: " + ", ".join(f"{n} {p50[n][-1]:.2f} ms" for n in p50),
                file=sys.stderr,
            )
    med = {name: round(statistics.median(xs), 2) for name, xs in p50.items()}
    print(
        json.dumps(
            {
                "collection": args.collection,
                "questions": len(questions),
                "rounds": args.rounds,
                "p50_ms": med,
                "current_over_previous": round(med["current"] / med["previous"], 3),
                "rounds_p50_ms": {n: [round(x, 2) for x in xs] for n, xs in p50.items()},
                "load_before": [round(x, 2) for x in load0],
                "load_after": [round(x, 2) for x in os.getloadavg()],
            },
            ensure_ascii=False,
            indent=1,
        )
    )


if __name__ == "__main__":
    main(sys.argv[1:])

"""What weighing a query's phrasing costs per query: ``query_weights`` against the analysis
every search already runs (``Analyzer.terms``), over the questions of basket sets.

    python bench/functional_cost.py                       # jsquad-ir and nta-qa
    python bench/functional_cost.py --sets niilc-qa,lawqa-jp
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.basket import load_sets

from tansaku.config import DEFAULT_FUNCTIONAL_WEIGHT
from tansaku.text import get_analyzer
from tansaku.text.functional import query_weights


def _ms(fn: Callable[[str], object], items: list[str]) -> list[float]:
    out = []
    for text in items:
        t0 = time.perf_counter()
        fn(text)
        out.append((time.perf_counter() - t0) * 1000)
    return out


def _p95(xs: list[float]) -> float:
    return sorted(xs)[int(0.95 * (len(xs) - 1))]


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sets", default="jsquad-ir,nta-qa")
    args = parser.parse_args(argv)
    analyzer = get_analyzer()
    analyzer.warm_up()
    print("| set | queries | mean chars | query_weights p50 / p95 ms | terms p50 / p95 ms |")
    print("|---|---:|---:|---|---|")
    for s in load_sets(args.sets.split(",")):
        texts = [q["text"] for q in s.queries]
        for t in texts[:50]:  # warm the tokenizer and caches
            query_weights(t, analyzer, DEFAULT_FUNCTIONAL_WEIGHT)
        w = _ms(lambda t: query_weights(t, analyzer, DEFAULT_FUNCTIONAL_WEIGHT), texts)
        a = _ms(analyzer.terms, texts)
        print(
            f"| {s.name} | {len(texts)} | {statistics.mean(map(len, texts)):.0f} | "
            f"{statistics.median(w):.3f} / {_p95(w):.3f} | "
            f"{statistics.median(a):.3f} / {_p95(a):.3f} |"
        )


if __name__ == "__main__":
    main(sys.argv[1:])

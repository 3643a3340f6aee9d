"""Every retrieval config on every set of the basket, in one table (``make bench``).

    python bench/retrieval_basket.py                          # every built set + the cards
    python bench/retrieval_basket.py --sets nta-qa,niilc-kw --limit 300
    python bench/retrieval_basket.py --configs default,bm25 --config extra.toml
    python bench/retrieval_basket.py --out bench/results/retrieval-basket.md --json run.json

Sets: the BEIR sets of ``bench/basket.py`` that are built (a set not built is left out: build
it with its script in ``bench/datasets/``; queries-only pools are skipped) and the card
judgements ``examples/eval/cards.yaml``. Each set is evaluated by ``tansaku eval``'s
runner in the bench workspace ``.tansaku-bench`` (scratch collections ``eval-<set>`` are kept,
so a rerun ingests and embeds nothing). Configs: ``bench/configs/*.toml`` in a fixed order
(default, its three legs, the two-axis default, min-max and RRF fusion) plus any ``--config``.
The cards collection has its own axes (one BM25 and two dense axes over card fields): there
``bm25`` and ``dense`` are its own legs, configs that set other axes say ``–``, and configs that
change only fusion or query settings run over the cards' axes.

``--limit N`` keeps the first N queries of each set (file order); the table's header states it.
The table gives nDCG@10 / recall@10 per cell; ``--json`` also writes each config's per-query
nDCG@10 (for paired comparisons).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.basket import load_sets

import tansaku
from tansaku.eval import load_dataset, load_eval_config, run_eval
from tansaku.eval.configs import EvalConfig
from tansaku.eval.dataset import EvalDataset

ROOT = Path(__file__).resolve().parents[1]
HOME = ROOT / ".tansaku-bench"
CONFIGS = ROOT / "bench" / "configs"
CARDS = ROOT / "examples" / "eval" / "cards.yaml"
ORDER = (
    "default",
    "zscore-gate",
    "linear-max",
    "bm25",
    "dense",
    "bigram",
    "functional-off",
    "bm25-dense",
    "linear-minmax",
    "linear-zscore",
    "rrf-k60",
)
CARD_CONFIGS = ("default", "bm25", "dense")  # the cards' own legs (tansaku eval's defaults)


def _limit(ds: EvalDataset, n: int | None) -> EvalDataset:
    if not n or len(ds.queries) <= n:
        return ds
    keep = dict(list(ds.queries.items())[:n])
    return replace(ds, queries=keep, qrels={q: ds.qrels[q] for q in keep if q in ds.qrels})


def datasets(names: list[str] | None, limit: int | None) -> list[EvalDataset]:
    wanted = set(names) if names else None
    out = []
    for s in load_sets(retrieval=True):
        if s.has_corpus and (wanted is None or s.name in wanted):
            out.append(_limit(load_dataset(s.path), limit))
    if wanted is None or "cards" in wanted:
        out.append(_limit(load_dataset(CARDS), limit))
    return out


def configs(names: list[str], extra: list[Path]) -> list[EvalConfig]:
    return [load_eval_config(CONFIGS / f"{n}.toml") for n in names] + [
        load_eval_config(p) for p in extra
    ]


def _commit() -> str:
    out = subprocess.run(
        ["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True, text=True
    )
    return out.stdout.strip() or "unknown"


def run(
    sets: list[EvalDataset], confs: list[EvalConfig], home: Path
) -> dict[str, dict[str, dict[str, Any]]]:
    """set name -> config name -> {"ndcg@10", "recall@10", "queries", "per_query"}."""
    results: dict[str, dict[str, dict[str, Any]]] = {}
    with tansaku.connect(home) as ts:
        for ds in sets:
            t0 = time.perf_counter()
            use = _card_configs(ds, confs) if ds.name == "cards" else confs
            report = run_eval(ts, ds, use, measure_embedding=False, keep=True)
            results[ds.name] = {
                c.name: {
                    "ndcg@10": c.metrics["ndcg@10"],
                    "recall@10": c.metrics["recall@10"],
                    "queries": len(ds.queries),
                    "per_query": {q: m.get("ndcg@10", 0.0) for q, m in c.per_query.items()},
                }
                for c in report.configs
            }
            print(f"{ds.name}: {time.perf_counter() - t0:.0f} s", file=sys.stderr, flush=True)
    return results


def _card_configs(ds: EvalDataset, confs: list[EvalConfig]) -> list[EvalConfig]:
    """The cards' own legs for ``bm25``/``dense`` (their axes are card fields, not the BEIR
    body), ``default`` as configured, and every config that leaves the axes alone."""
    from tansaku.config import load_config
    from tansaku.eval.configs import default_configs

    assert ds.config is not None
    legs = {c.name: c for c in default_configs(load_config(ds.config, name="cards"))}
    out = []
    for c in confs:
        if c.name in CARD_CONFIGS:
            out.append(legs[c.name])
        elif c.axes is None:  # fusion or query settings over the cards' own axes
            out.append(c)
    return out


def table(results: dict[str, dict[str, dict[str, Any]]], names: list[str]) -> str:
    sets = list(results)
    head = "| config | " + " | ".join(
        f"{s} ({next(iter(results[s].values()))['queries']} q)" for s in sets
    )
    lines = [head + " |", "|---|" + "---|" * len(sets)]
    for name in names:
        cells = []
        for s in sets:
            r = results[s].get(name)
            cells.append(f"{r['ndcg@10']:.4f} / {r['recall@10']:.4f}" if r else "–")
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sets", help="comma-separated set names (default: all built + cards)")
    parser.add_argument("--configs", default=",".join(ORDER), help="names in bench/configs")
    parser.add_argument("--config", type=Path, action="append", default=[], help="extra TOML")
    parser.add_argument("--limit", type=int, help="first N queries of each set")
    parser.add_argument("--home", type=Path, default=HOME)
    parser.add_argument("--out", type=Path, help="also write the Markdown table here")
    parser.add_argument("--json", type=Path, help="write metrics and per-query nDCG@10 here")
    args = parser.parse_args(argv)
    sets = datasets(args.sets.split(",") if args.sets else None, args.limit)
    confs = configs([n for n in args.configs.split(",") if n], args.config)
    t0 = time.perf_counter()
    commit = _commit()  # the code the run starts with (others may commit while it runs)
    results = run(sets, confs, args.home)
    header = (
        f"nDCG@10 / recall@10 per set; {datetime.now(UTC):%Y-%m-%d}, commit {commit}, "
        f"`python bench/retrieval_basket.py {' '.join(argv)}`".rstrip()
        + f", {time.perf_counter() - t0:.0f} s"
        + (f", first {args.limit} queries per set" if args.limit else ", all queries")
        + "\n\n"
    )
    text = header + table(results, [c.name for c in confs])
    sys.stdout.write(text)
    if args.out:
        args.out.write_text(text, encoding="utf-8")
    if args.json:
        args.json.write_text(json.dumps(results, ensure_ascii=False), encoding="utf-8")


if __name__ == "__main__":
    main(sys.argv[1:])

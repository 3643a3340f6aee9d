"""Every Q&A-axes config on the FAQ sets: nDCG@10 / recall@10, and each config against today's.

    python bench/datasets/qa_axes/prepare.py nta-qa nta-topic        # the judgement files first
    python bench/datasets/qa_axes/run.py --sets nta-qa,nta-topic --out /tmp/qa-axes.md
    python bench/datasets/qa_axes/run.py --sets nta-qa --configs 01-entry-thirds,10-qa-4

Each set's ``bench/data/<set>/qa-axes/judgements.yaml`` is evaluated with the configs of
``configs/`` (file stems, in name order; all by default) by ``bench/retrieval_basket.py``'s runner
in the bench workspace ``.tansaku-bench`` (scratch collections kept: a rerun embeds nothing).
Beside the table, ``Δ`` is each config's nDCG@10 minus the baseline's (``--baseline``, default
``entry-thirds``: today's default over the whole entry) and ``p`` a paired randomisation test
over the queries (10,000 sign flips, two-sided, seed 0). ``--json`` writes every config's
per-query nDCG@10.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT))

from bench.jsquad_analysis import paired_p  # noqa: E402
from bench.retrieval_basket import HOME, _limit, run, table  # noqa: E402

from tansaku.eval import load_dataset, load_eval_config  # noqa: E402

HERE = Path(__file__).resolve().parent
DATA = ROOT / "bench" / "data"


def deltas(results: dict[str, dict[str, dict[str, Any]]], names: list[str], base: str) -> str:
    sets = list(results)
    lines = [
        "| config | " + " | ".join(f"{s}: Δ nDCG@10 vs {base} (p)" for s in sets) + " |",
        "|---|" + "---|" * len(sets),
    ]
    for name in names:
        cells = []
        for s in sets:
            ref, cur = results[s].get(base), results[s].get(name)
            if not ref or not cur or name == base:
                cells.append("–")
                continue
            qs = sorted(ref["per_query"])
            a = [ref["per_query"][q] for q in qs]
            b = [cur["per_query"].get(q, 0.0) for q in qs]
            d = cur["ndcg@10"] - ref["ndcg@10"]
            cells.append(f"{d:+.4f} ({paired_p(a, b):.3g})")
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sets", default="nta-qa,nta-topic", help="comma-separated set names")
    parser.add_argument("--configs", help="comma-separated stems of configs/ (default: all)")
    parser.add_argument("--baseline", default="entry-thirds", help="config name to compare with")
    parser.add_argument("--limit", type=int, help="first N queries of each set")
    parser.add_argument(
        "--layout",
        choices=("qa-axes", "title-axis"),
        default="qa-axes",
        help="which prepared folder of each set (prepare.py --layout qa / title)",
    )
    parser.add_argument("--home", type=Path, default=HOME)
    parser.add_argument("--out", type=Path, help="also write the Markdown tables here")
    parser.add_argument("--json", type=Path, help="write metrics and per-query nDCG@10 here")
    args = parser.parse_args(argv)
    stems = (
        [s for s in args.configs.split(",") if s]
        if args.configs
        else sorted(p.stem for p in (HERE / "configs").glob("*.toml"))
    )
    confs = [load_eval_config(HERE / "configs" / f"{s}.toml") for s in stems]
    sets = []
    for name in (s for s in args.sets.split(",") if s):
        path = DATA / name / args.layout / "judgements.yaml"
        if not path.is_file():
            layout = "qa" if args.layout == "qa-axes" else "title"
            prepare = "python bench/datasets/qa_axes/prepare.py"
            raise SystemExit(f"{path} is missing: {prepare} --layout {layout} {name}")
        sets.append(_limit(load_dataset(path), args.limit))
    t0 = time.perf_counter()
    results = run(sets, confs, args.home)
    names = [c.name for c in confs]
    header = (
        f"nDCG@10 / recall@10 per set; {datetime.now(UTC):%Y-%m-%d}, "
        f"`python bench/datasets/qa_axes/run.py {' '.join(argv)}`".rstrip()
        + f", {time.perf_counter() - t0:.0f} s\n\n"
    )
    text = header + table(results, names) + "\n" + deltas(results, names, args.baseline)
    sys.stdout.write(text)
    if args.out:
        args.out.write_text(text, encoding="utf-8")
    if args.json:
        args.json.write_text(json.dumps(results, ensure_ascii=False), encoding="utf-8")


if __name__ == "__main__":
    main(sys.argv[1:])

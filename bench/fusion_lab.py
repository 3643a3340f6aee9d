"""jsquad-ir: which extra retrieval signal is worth building? An offline lab, in NumPy.

    python bench/fusion_lab.py [--out bench/results/fusion_lab.json]

Re-implements the default's two legs exactly enough to reproduce ``tansaku eval`` (Sudachi BM25
k1 0.9 / b 0.4 with the engine's IDF, e5 cosine, linear max-norm fusion of the top 200 per
leg), checks that it does, and then scores candidate signals the engine does not have yet:

- ``bigram``: BM25 over character bigrams of the normalised text (a different tokenisation,
  robust to segmentation errors and unknown words);
- ``pairs``: BM25 over adjacent Sudachi term pairs (a proximity signal: the question's words
  *together*, which separates paragraphs of one article);
- ``sent``: e5 vectors of each sentence (title + sentence), best sentence per passage (the
  question is written against one sentence; a passage vector averages several);
- ``prf``: the dense query moved toward the top fused passages (Rocchio, 3 passages).

Every number is over all 1,000 queries. Where a setting has a free weight, it is chosen by
2-fold cross-validation (queries split by a hash of their id; the weight is picked on one half
and scored on the other) and the held-out score is what is reported; the grid is fixed below.
Vectors come from the ``.tansaku-bench`` embedding cache; sentence vectors are embedded once
(~6,000 short texts, a few minutes) and cached there too.
"""

from __future__ import annotations

import argparse
import hashlib
import itertools
import json
import re
import sys
import time
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
from ranx import Qrels, Run, evaluate
from scipy import sparse as sp

import tansaku
from tansaku.text import get_analyzer, normalize

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data" / "jsquad-ir"
HOME = ROOT / ".tansaku-bench"
DEPTH = 200  # candidates per leg, as the engine fetches at top_k 100
METRICS = ["ndcg@10", "recall@10", "mrr@10", "recall@1"]
GRID = [0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.7, 1.0]
_SENT = re.compile(r"(?<=[。！？!?])|\n")

Scores = np.ndarray  # queries x docs


def load() -> tuple[list[str], list[str], list[str], list[str], dict[str, dict[str, int]]]:
    ids, bodies = [], []
    with (DATA / "corpus.jsonl").open(encoding="utf-8") as f:
        for line in f:
            o = json.loads(line)
            title, text = (o.get("title") or "").strip(), o["text"].strip()
            ids.append(o["_id"])
            bodies.append(f"{title}\n{text}" if title else text)
    qids, qtexts = [], []
    with (DATA / "queries.jsonl").open(encoding="utf-8") as f:
        for line in f:
            o = json.loads(line)
            qids.append(o["_id"])
            qtexts.append(o["text"])
    qrels: dict[str, dict[str, int]] = {}
    for line in (DATA / "qrels" / "test.tsv").read_text(encoding="utf-8").splitlines()[1:]:
        q, d, s = line.split("\t")
        qrels.setdefault(q, {})[d] = int(s)
    keep = [i for i, q in enumerate(qids) if q in qrels]
    return ids, bodies, [qids[i] for i in keep], [qtexts[i] for i in keep], qrels


# -- BM25 over any tokenisation -----------------------------------------------------------
def bm25(
    doc_terms: Sequence[Sequence[str]],
    query_terms: Sequence[Sequence[str]],
    k1: float = 0.9,
    b: float = 0.4,
) -> Scores:
    vocab: dict[str, int] = {}
    rows, cols, vals = [], [], []
    lengths = np.array([len(t) for t in doc_terms], dtype=np.float64)
    avgdl = lengths.mean()
    for i, terms in enumerate(doc_terms):
        norm = k1 * (1 - b + b * len(terms) / avgdl)
        for t, tf in Counter(terms).items():
            rows.append(i)
            cols.append(vocab.setdefault(t, len(vocab)))
            vals.append(tf * (k1 + 1) / (tf + norm))
    n = len(doc_terms)
    mat = sp.csr_matrix((vals, (rows, cols)), shape=(n, len(vocab)))
    df = np.bincount(cols, minlength=len(vocab))
    idf = np.log(1 + (n - df + 0.5) / (df + 0.5))
    qrows, qcols = [], []
    for i, terms in enumerate(query_terms):
        for t in set(terms):
            if t in vocab:
                qrows.append(i)
                qcols.append(vocab[t])
    qm = sp.csr_matrix((idf[qcols], (qrows, qcols)), shape=(len(query_terms), len(vocab)))
    return np.asarray((qm @ mat.T).todense())


def bigrams(text: str) -> list[str]:
    s = re.sub(r"\s+", "", normalize(text))
    return [s[i : i + 2] for i in range(len(s) - 1)] or ([s] if s else [])


def trigrams(text: str) -> list[str]:
    s = re.sub(r"\s+", "", normalize(text))
    return [s[i : i + 3] for i in range(len(s) - 2)] or ([s] if s else [])


def pairs(terms: Sequence[str]) -> list[str]:
    return [f"{a}\x00{b}" for a, b in itertools.pairwise(terms)]


# -- fusion and evaluation -----------------------------------------------------------------
def top_max_norm(s: Scores, depth: int = DEPTH, positive_only: bool = True) -> Scores:
    """Keep each query's top ``depth``, divide by the query's best (the engine's max norm)."""
    out = np.zeros_like(s)
    idx = np.argpartition(-s, depth, axis=1)[:, :depth]
    rows = np.arange(s.shape[0])[:, None]
    vals = s[rows, idx]
    if positive_only:
        vals = np.where(vals > 0, vals, 0.0)
    best = vals.max(axis=1, keepdims=True)
    best[best <= 0] = 1.0
    out[rows, idx] = vals / best
    return out


def fuse(legs: Sequence[Scores], weights: Sequence[float]) -> Scores:
    return sum(w * leg for w, leg in zip(weights, legs, strict=True))  # type: ignore[return-value]


def run_of(s: Scores, qids: Sequence[str], dids: Sequence[str], rows: Sequence[int]) -> Run:
    out: dict[str, dict[str, float]] = {}
    for r in rows:
        top = np.argsort(-s[r])[:100]
        out[qids[r]] = {dids[j]: float(s[r, j]) for j in top if s[r, j] > 0}
        if not out[qids[r]]:
            out[qids[r]] = {"__none__": 0.0}
    return Run(out)


class Lab:
    def __init__(self, qids: list[str], dids: list[str], qrels: dict[str, dict[str, int]]):
        self.qids, self.dids = qids, dids
        self.qrels_all = qrels
        h = [int(hashlib.sha1(q.encode()).hexdigest(), 16) % 2 for q in qids]
        self.folds = [[i for i, f in enumerate(h) if f == k] for k in (0, 1)]

    def metrics(self, s: Scores, rows: Sequence[int] | None = None) -> dict[str, float]:
        rows = list(range(len(self.qids))) if rows is None else list(rows)
        qr = Qrels({self.qids[r]: self.qrels_all[self.qids[r]] for r in rows})
        res = evaluate(qr, run_of(s, self.qids, self.dids, rows), METRICS)
        return {k: round(float(v), 4) for k, v in res.items()}

    def cv(
        self, build: Callable[[tuple[float, ...]], Scores], grid: Sequence[tuple[float, ...]]
    ) -> tuple[dict[str, float], list[tuple[float, ...]]]:
        """2-fold CV: pick the grid point with the best nDCG@10 on one fold, score the other."""
        cache = {g: build(g) for g in grid}
        chosen: list[tuple[float, ...]] = []
        held: dict[int, Scores] = {}
        for k in (0, 1):
            train = self.folds[k]
            best = max(grid, key=lambda g: self.metrics(cache[g], train)["ndcg@10"])
            chosen.append(best)
            held[1 - k] = cache[best]
        combined = np.zeros_like(next(iter(cache.values())))
        for k in (0, 1):
            combined[self.folds[k]] = held[k][self.folds[k]]
        return self.metrics(combined), chosen


def sentence_units(bodies: Sequence[str]) -> tuple[np.ndarray, list[str]]:
    """Every sentence of every passage as "title + sentence", with the passage it belongs to."""
    owners, texts = [], []
    for i, body in enumerate(bodies):
        title, _, text = body.partition("\n")
        sents = [s.strip() for s in _SENT.split(text) if s and s.strip()]
        for s in sents or [text]:
            owners.append(i)
            texts.append(f"{title}\n{s}")
    return np.asarray(owners), texts


def best_per_passage(unit_scores: Scores, owners: np.ndarray, n_docs: int) -> Scores:
    """Max over each passage's sentences."""
    out = np.full((unit_scores.shape[0], n_docs), -1.0)
    order = np.argsort(owners, kind="stable")
    starts = np.searchsorted(owners[order], np.arange(n_docs))
    return np.maximum.reduceat(unit_scores[:, order], starts, axis=1) if len(order) else out


def sentence_vectors(ts: tansaku.Tansaku, owners: np.ndarray, texts: list[str]) -> Scores:
    t0 = time.perf_counter()
    before = ts.embedder.embedded
    vecs = ts.embedder.embed_passages(texts)
    print(
        f"sentence vectors: {len(texts)} texts, {ts.embedder.embedded - before} embedded, "
        f"{time.perf_counter() - t0:.0f} s",
        file=sys.stderr,
    )
    return vecs


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, default=ROOT / "bench" / "results" / "fusion_lab.json")
    args = ap.parse_args()
    dids, bodies, qids, qtexts, qrels = load()
    lab = Lab(qids, dids, qrels)
    ts = tansaku.connect(HOME)
    an = get_analyzer("A")
    dterms = [an.terms(b) for b in bodies]
    qterms = [an.terms(q) for q in qtexts]

    P = ts.embedder.embed_passages(bodies)
    Q = ts.embedder.embed_queries([normalize(q) or q for q in qtexts])
    print(f"passage/query vectors: {ts.embedder.embedded} embedded", file=sys.stderr)
    raw = {
        "bm25": bm25(dterms, qterms),
        "dense": Q @ P.T,
        "bigram": bm25([bigrams(b) for b in bodies], [bigrams(q) for q in qtexts]),
        "pairs": bm25([pairs(t) for t in dterms], [pairs(t) for t in qterms]),
    }
    owners, units = sentence_units(bodies)
    S = sentence_vectors(ts, owners, units)
    raw["sent"] = best_per_passage(Q @ S.T, owners, len(dids))
    uterms = [an.terms(u) for u in units]
    raw["sbm25"] = best_per_passage(bm25(uterms, qterms), owners, len(dids))
    raw["sbigram"] = best_per_passage(
        bm25([bigrams(u) for u in units], [bigrams(q) for q in qtexts]), owners, len(dids)
    )
    raw["strigram"] = best_per_passage(
        bm25([trigrams(u) for u in units], [trigrams(q) for q in qtexts]), owners, len(dids)
    )
    legs = {k: top_max_norm(v) for k, v in raw.items()}
    base = fuse([legs["bm25"], legs["dense"]], [0.5, 0.5])

    # Rocchio on the dense query: move toward the top 3 fused passages of the default.
    top3 = np.argsort(-base, axis=1)[:, :3]
    Q2 = Q + 0.5 * P[top3].mean(axis=1)
    Q2 /= np.linalg.norm(Q2, axis=1, keepdims=True)
    legs["prf"] = top_max_norm(Q2 @ P.T)

    results: dict[str, object] = {"legs": {}, "fusions": {}}
    for name, leg in legs.items():
        results["legs"][name] = lab.metrics(leg)  # type: ignore[index]
        print(name, results["legs"][name], file=sys.stderr)  # type: ignore[index]

    def add(name: str, m: dict[str, float], chosen: object = None) -> None:
        results["fusions"][name] = {"metrics": m, "chosen": chosen}  # type: ignore[index]
        print(f"{name:45s} {m} {chosen or ''}", file=sys.stderr)

    add("default bm25+dense 0.5/0.5", lab.metrics(base))
    for extra in ("bigram", "pairs", "sent", "prf", "sbm25", "sbigram", "strigram"):
        add(
            f"bm25+dense 0.5/0.5 + {extra} (equal third)",
            lab.metrics(fuse([legs["bm25"], legs["dense"], legs[extra]], [1, 1, 1])),
        )
        m, chosen = lab.cv(
            lambda g, e=extra: fuse([legs["bm25"], legs["dense"], legs[e]], [0.5, 0.5, g[0]]),
            [(w,) for w in GRID],
        )
        add(f"bm25+dense 0.5/0.5 + {extra} (weight by 2-fold CV)", m, chosen)
    dense_max = np.maximum(legs["dense"], legs["sent"])
    add("bm25 + max(dense, sent) 0.5/0.5", lab.metrics(fuse([legs["bm25"], dense_max], [1, 1])))
    for combo in (
        ["bm25", "dense", "bigram", "pairs", "sent"],
        ["bm25", "dense", "bigram", "sent"],
        ["bm25", "dense", "sbm25", "sent"],
        ["bm25", "dense", "bigram", "sbm25", "sent"],
        ["bm25", "dense", "bigram", "sbm25", "sbigram", "sent", "pairs"],
        ["bm25", "dense", "sbigram", "sent"],
        ["bm25", "dense", "sbigram", "bigram"],
        ["bm25", "dense", "sbigram", "pairs"],
        ["bm25", "dense", "sbigram", "strigram"],
        ["bm25", "dense", "sbigram", "sent", "bigram"],
    ):
        equal = fuse([legs[k] for k in combo], [1] * len(combo))
        add(f"{'+'.join(combo)} equal", lab.metrics(equal))
        grid = list(itertools.product([0.5], [0.5], *([[0, 0.25, 0.5]] * (len(combo) - 2))))
        if len(grid) <= 81:
            m, chosen = lab.cv(lambda g, c=combo: fuse([legs[k] for k in c], list(g)), grid)
            add(f"{'+'.join(combo)} (weights by 2-fold CV)", m, chosen)

    # Ceiling: the best single leg per query (an oracle, not a method).
    r1 = {}
    for name, leg in legs.items():
        r1[name] = np.array(
            [qrels[qids[r]].get(dids[int(np.argmax(leg[r]))], 0) > 0 for r in range(len(qids))]
        )
    results["oracle_r1"] = {
        "bm25|dense": float(np.mean(r1["bm25"] | r1["dense"])),
        "all legs": float(np.mean(np.any(np.stack(list(r1.values())), axis=0))),
    }
    print("oracle R@1", results["oracle_r1"], file=sys.stderr)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(results, ensure_ascii=False, indent=2), encoding="utf-8")
    ts.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())

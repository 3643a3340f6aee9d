"""BM25 quality and analyzer speed for each analyzer variant on a BEIR-layout dataset.

    .venv/bin/python bench/analyzer_modes.py [--data ../shared/data/jsquad-ir] [--runs 3]

Indexes ``title + "\\n" + text`` of every passage, scores every query exactly with BM25
(k1=0.9, b=0.4, Lucene idf ``log(1 + (N - df + 0.5) / (df + 0.5))``, each distinct query term
counted once), evaluates with ranx and prints a Markdown table. ``p`` is a two-sided paired
randomisation test (sign flips of the per-query nDCG@10 differences, 10,000 rounds, fixed seed)
against the first row, ``Analyzer()`` with its defaults. Throughput is the analyzer alone
over the corpus (UTF-8 MB of input per second, median of ``--runs`` runs, one thread).
"""

from __future__ import annotations

import argparse
import json
import math
import re
import statistics
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from ranx import Qrels, Run, evaluate

from tansaku.text import DEFAULT_STOP_POS, Analyzer

K1 = 0.9
B = 0.4
DEPTH = 100
METRICS = ["ndcg@10", "recall@10", "mrr@10", "recall@1"]
REPO = Path(__file__).resolve().parents[1]


@dataclass(frozen=True)
class Variant:
    name: str
    tokenize: Callable[[str], list[str]]


def _variants() -> list[Variant]:
    def sudachi(mode: str, **options: object) -> Callable[[str], list[str]]:
        return Analyzer(mode, **options).terms  # type: ignore[arg-type]

    regex = re.compile(r"(?u)\b\w\w+\b")  # bm25s' default splitter, for reference
    variants = [Variant("`Analyzer()` defaults", Analyzer().terms)]
    for mode in "ABC":
        variants.append(Variant(f"{mode}", sudachi(mode, drop_single_hiragana=False)))
        variants.append(
            Variant(f"{mode} + drop 1-char hiragana", sudachi(mode, drop_single_hiragana=True))
        )
    variants += [
        Variant("A, surface form", sudachi("A", form="surface")),
        Variant("A, dictionary form", sudachi("A", form="dictionary")),
        Variant("A, no code protection", sudachi("A", protect_codes=False)),
        Variant("A, no POS stop filter", sudachi("A", stop_pos=())),
        Variant(
            "A, stop POS + 接頭辞/接尾辞",
            sudachi("A", stop_pos=(*DEFAULT_STOP_POS, ("接頭辞",), ("接尾辞",))),
        ),
        Variant("C, no code protection", sudachi("C", protect_codes=False)),
        Variant("regex `\\w\\w+` (bm25s default), lowercased", lambda t: regex.findall(t.lower())),
    ]
    return variants


def _load(data: Path) -> tuple[dict[str, str], dict[str, str], dict[str, dict[str, int]]]:
    corpus: dict[str, str] = {}
    with (data / "corpus.jsonl").open(encoding="utf-8") as f:
        for line in f:
            doc = json.loads(line)
            corpus[doc["_id"]] = f"{doc.get('title', '')}\n{doc['text']}"
    queries: dict[str, str] = {}
    with (data / "queries.jsonl").open(encoding="utf-8") as f:
        for line in f:
            q = json.loads(line)
            queries[q["_id"]] = q["text"]
    qrels: dict[str, dict[str, int]] = {}
    with (data / "qrels" / "test.tsv").open(encoding="utf-8") as f:
        next(f)  # header
        for line in f:
            qid, did, score = line.rstrip("\n").split("\t")
            qrels.setdefault(qid, {})[did] = int(score)
    queries = {qid: text for qid, text in queries.items() if qid in qrels}
    return corpus, queries, qrels


class _BM25:
    """Exact BM25 over an in-memory inverted index: term → (doc indices, weights)."""

    def __init__(self, docs: list[list[str]]) -> None:
        n = len(docs)
        lengths = np.array([len(d) for d in docs], dtype=np.float64)
        avgdl = float(lengths.mean()) if n else 0.0
        postings: dict[str, tuple[list[int], list[int]]] = {}
        for i, doc in enumerate(docs):
            for term, tf in Counter(doc).items():
                ids, tfs = postings.setdefault(term, ([], []))
                ids.append(i)
                tfs.append(tf)
        norm = K1 * (1 - B + B * lengths / avgdl)
        self.n = n
        self.index: dict[str, tuple[np.ndarray, np.ndarray]] = {}
        for term, (ids, tfs) in postings.items():
            idx = np.array(ids, dtype=np.int64)
            tf = np.array(tfs, dtype=np.float64)
            df = len(ids)
            idf = math.log(1 + (n - df + 0.5) / (df + 0.5))
            self.index[term] = (idx, idf * tf * (K1 + 1) / (tf + norm[idx]))

    def search(self, terms: list[str], k: int) -> list[tuple[int, float]]:
        scores = np.zeros(self.n)
        for term in dict.fromkeys(terms):
            if term in self.index:
                idx, w = self.index[term]
                scores[idx] += w
        hit = np.flatnonzero(scores)
        top = hit[np.lexsort((hit, -scores[hit]))][:k]  # score desc, then corpus order
        return [(int(i), float(scores[i])) for i in top]


def _throughput(tokenize: Callable[[str], list[str]], texts: list[str], runs: int) -> float:
    mb = sum(len(t.encode("utf-8")) for t in texts) / 1e6
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        for t in texts:
            tokenize(t)
        times.append(time.perf_counter() - start)
    return mb / statistics.median(times)


def _evaluate(
    variant: Variant,
    corpus: dict[str, str],
    queries: dict[str, str],
    qrels: dict[str, dict[str, int]],
    runs: int,
) -> tuple[dict[str, float], np.ndarray, float]:
    doc_ids = list(corpus)
    texts = list(corpus.values())
    variant.tokenize("warm up")  # dictionary load is not analyzer throughput
    speed = _throughput(variant.tokenize, texts, runs)
    index = _BM25([variant.tokenize(t) for t in texts])
    run: dict[str, dict[str, float]] = {}
    for qid, text in queries.items():
        hits = index.search(variant.tokenize(text), DEPTH)
        run[qid] = {doc_ids[i]: score for i, score in hits} or {"__none__": 0.0}
    qrels_, run_ = Qrels(qrels), Run(run)
    scores = evaluate(qrels_, run_, METRICS, make_comparable=True)
    per_query = evaluate(qrels_, run_, "ndcg@10", return_mean=False, make_comparable=True)
    return {m: float(scores[m]) for m in METRICS}, np.asarray(per_query), speed


def _p_value(a: np.ndarray, b: np.ndarray, rounds: int = 10_000) -> float:
    """Two-sided paired randomisation test of mean(a - b) = 0 by sign flips."""
    diff = a - b
    observed = abs(diff.mean())
    if observed == 0:
        return 1.0
    signs = np.random.default_rng(0).choice([-1.0, 1.0], size=(rounds, diff.size))
    extreme = np.count_nonzero(np.abs((signs * diff).mean(axis=1)) >= observed - 1e-12)
    return (extreme + 1) / (rounds + 1)


def _format_p(p: float) -> str:
    return "<0.001" if p < 0.001 else f"{p:.3f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", type=Path, default=REPO.parent / "shared/data/jsquad-ir")
    parser.add_argument("--runs", type=int, default=3, help="throughput runs (median)")
    args = parser.parse_args()
    corpus, queries, qrels = _load(args.data)
    print(f"{len(corpus)} passages, {len(queries)} queries, BM25 k1={K1} b={B}\n")
    print("Sudachi rows: normalized_form, POS stop filter, codes kept whole, unless noted.\n")
    print("| analyzer | nDCG@10 | Recall@10 | MRR@10 | R@1 | p (nDCG@10) | MB/s |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    reference = None
    for variant in _variants():
        r, per_query, speed = _evaluate(variant, corpus, queries, qrels, args.runs)
        if reference is None:
            reference = per_query
        p = "—" if per_query is reference else _format_p(_p_value(per_query, reference))
        print(
            f"| {variant.name} | {r['ndcg@10']:.4f} | {r['recall@10']:.4f} | "
            f"{r['mrr@10']:.4f} | {r['recall@1']:.4f} | {p} | {speed:.2f} |",
            flush=True,
        )


if __name__ == "__main__":
    main()

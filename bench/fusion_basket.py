"""Fusion variants on every set of the retrieval basket, replayed offline from captured legs.

    python bench/fusion_basket.py capture [--sets nta-qa,cards]   # once: every leg's run
    python bench/fusion_basket.py compare [--json out.json]        # every variant, every set
    python bench/fusion_basket.py compare --learned                # + a learned fusion (LOSO)
    python bench/fusion_basket.py capture-merged                   # jsquad merged to ≈400 chars
    python bench/fusion_basket.py lengths                          # the dense leg by length
    python bench/fusion_basket.py blend                            # max + zscore, and length

``capture`` searches every query of every basket set once with the collection as configured
(``tansaku search``'s own pipeline, top_k 100, in the bench workspace ``.tansaku-bench``) and
keeps what each axis returned before fusion — its ``(key, raw score)`` list — in
``.tansaku-bench/legs/<set>.json``. A set whose scratch collection is missing is built first by
``tansaku eval``'s runner. ``compare`` fuses those lists with each variant below, ranks as the
engine does (best score first, ties by key, scores ≤ 0 dropped, 100 kept) and scores
nDCG@10 against the set's judgements; the default and single-leg rows reproduce ``make bench``.
p: paired randomisation test over queries (10,000 sign flips) against the default.
``--learned`` adds a logistic fusion over rank features (each leg's standard score and
1 / (5 + rank), the legs' pairwise products), each BEIR set scored by the model fitted on the
other five. ``capture-merged`` captures the legs of jsquad-ir merged to ≈400-character
documents, one record each (``bench/jsquad_analysis.py``'s ``merged --target 520`` variant:
the long-passages check), as the set ``jsquad-merged520``. ``lengths`` replays a dense leg
weighed by each candidate's length, ``clip((L0 / characters) ** a, lo, hi)``, over a grid, and
chooses it leaving one set out (the merged set is only ever held out). ``blend`` replays
``beta × s / max + (1 − beta) × zscore × 10 / zdiv`` per leg, alone and with the length weight,
on every set (the cards' candidates have no length: × 1), and prints each setting against the
issue's bars: nDCG@10 per set, the smallest margin over the set's best single leg, and whether
jsquad-ir reaches 0.961.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from collections.abc import Callable, Hashable, Mapping, Sequence
from operator import itemgetter
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.retrieval_basket import HOME, datasets

import tansaku
from tansaku.config import FusionConfig, FusionMethod
from tansaku.eval import run_eval
from tansaku.eval.metrics import score_run
from tansaku.eval.runner import _base, resolve_qrels
from tansaku.search import fusion as F
from tansaku.search import retrieve as R
from tansaku.workspace import DEFAULT_TEAM

LEGS = HOME / "legs"
MERGED = "jsquad-merged520"  # capture-merged: jsquad-ir merged to ≈400-character documents
Runs = dict[str, list[tuple[str, float]]]
Fuser = Callable[[Runs, Mapping[str, float]], dict[Hashable, float]]


# -- capture -------------------------------------------------------------------------------
def capture(names: list[str] | None) -> None:
    LEGS.mkdir(parents=True, exist_ok=True)
    with tansaku.connect(HOME) as ts:
        for ds in datasets(names, None):
            name, _, _ = _base(ts, ds)
            if not ts.has_collection(name):
                run_eval(ts, ds, None, measure_embedding=False, keep=True)
            _capture_into(ts, ds, name, LEGS / f"{ds.name}.json")


def _capture_into(ts: Any, ds: Any, name: str, path: Path) -> None:
    """Search every query of ``ds`` in collection ``name`` and keep each axis' run in ``path``."""
    calls: list[tuple[Runs, dict[str, float]]] = []
    real = R._FUSERS[FusionMethod.LINEAR]

    def keep(runs: Any, weights: Any, f: FusionConfig, scales: Any = None) -> dict[Hashable, float]:
        calls.append(
            ({n: [(str(k), float(s)) for k, s in r] for n, r in runs.items()}, dict(weights))
        )
        return real(runs, weights, f, scales)

    qrels = resolve_qrels(ts, ds, name, DEFAULT_TEAM)
    R._FUSERS[FusionMethod.LINEAR] = keep
    out: dict[str, Any] = {"qrels": qrels, "queries": {}}
    t0 = time.perf_counter()
    try:
        for qid, text in ds.queries.items():
            calls.clear()
            res = ts.search(text, collection=name, team=DEFAULT_TEAM, top_k=100)
            out["queries"][qid] = {
                "calls": [{"runs": r, "weights": w} for r, w in calls],
                "hits": [h.doc_id for h in res.hits],
            }
    finally:
        R._FUSERS[FusionMethod.LINEAR] = real
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(out, ensure_ascii=False), encoding="utf-8")
    print(f"{ds.name}: {len(ds.queries)} q, {time.perf_counter() - t0:.0f} s", flush=True)


# -- variants ------------------------------------------------------------------------------
def _norm(name: str) -> Fuser:
    return lambda runs, w: F.linear_fusion(runs, w, normalization=name)


def zclip(c: float) -> Fuser:
    def f(runs: Runs, w: Mapping[str, float]) -> dict[Hashable, float]:
        out: dict[Hashable, float] = {}
        for axis, run in runs.items():
            for k, s in F.zscore(run).items():
                out[k] = out.get(k, 0.0) + w.get(axis, 1.0) * min(s, c / F.Z_SCALE)
        return out

    return f


def zwindow(depth: int) -> Fuser:
    """Standard scores against the statistics of the run's first ``depth`` only."""

    def f(runs: Runs, w: Mapping[str, float]) -> dict[Hashable, float]:
        out: dict[Hashable, float] = {}
        for axis, run in runs.items():
            if not run:
                continue
            head = [s for _, s in run[:depth]]
            mean = sum(head) / len(head)
            std = (sum((s - mean) ** 2 for s in head) / len(head)) ** 0.5
            for k, s in run:
                z = 1.0 if std <= 1e-12 else max(0.0, (s - mean) / std)
                out[k] = out.get(k, 0.0) + w.get(axis, 1.0) * z
        return out

    return f


def zmax() -> Fuser:
    """zscore divided by the leg's best standard score: a leg's best is 1, like max norm."""

    def f(runs: Runs, w: Mapping[str, float]) -> dict[Hashable, float]:
        out: dict[Hashable, float] = {}
        for axis, run in runs.items():
            z = F.zscore(run)
            top = max(z.values(), default=0.0) or 1.0
            for k, s in z.items():
                out[k] = out.get(k, 0.0) + w.get(axis, 1.0) * s / top
        return out

    return f


def zdense(mult: float, mode: str = "zscore") -> Fuser:
    """zscore with the dense axes' weights multiplied by ``mult``."""

    def f(runs: Runs, w: Mapping[str, float]) -> dict[Hashable, float]:
        ww = {a: w.get(a, 1.0) * (mult if _is_dense(a, runs) else 1.0) for a in runs}
        return F.linear_fusion(runs, ww, normalization=mode)

    return f


DENSE_AXES = ("dense", "effect_semantic", "combined")  # the basket's and the cards' dense axes


def _is_dense(axis: str, runs: Runs) -> bool:
    return axis in DENSE_AXES


def zagree(alpha: float) -> Fuser:
    """zscore, each leg weighted by 1 + alpha × the share of its top 10 the other legs also
    rank in their top 10 (a leg that agrees with the rest counts more)."""

    def f(runs: Runs, w: Mapping[str, float]) -> dict[Hashable, float]:
        tops = {a: {k for k, _ in r[:10]} for a, r in runs.items()}
        ww = {}
        for a in runs:
            others = (
                set().union(*(t for b, t in tops.items() if b != a)) if len(tops) > 1 else set()
            )
            share = len(tops[a] & others) / max(1, len(tops[a]))
            ww[a] = w.get(a, 1.0) * (1.0 + alpha * share)
        return F.linear_fusion(runs, ww, normalization="zscore")

    return f


def zgap(alpha: float) -> Fuser:
    """zscore, each leg weighted by 1 + alpha × its first result's lead over its second, in
    standard deviations (a leg sure of one result counts more)."""

    def f(runs: Runs, w: Mapping[str, float]) -> dict[Hashable, float]:
        ww = {}
        normed = {a: F.zscore(r) for a, r in runs.items()}
        for a, r in runs.items():
            z = [normed[a][k] for k, _ in r[:2]]
            lead = (z[0] - z[1]) * F.Z_SCALE if len(z) > 1 else 0.0
            ww[a] = w.get(a, 1.0) * (1.0 + alpha * min(lead, 3.0))
        out: dict[Hashable, float] = {}
        for a, zs in normed.items():
            for k, s in zs.items():
                out[k] = out.get(k, 0.0) + ww[a] * s
        return out

    return f


def rrf(k: int) -> Fuser:
    return lambda runs, w: F.rrf_fusion(runs, w, k=k)


def leg(kind: str) -> Fuser:
    """One leg alone, ``dense``, ``bm25`` or ``bigram`` (cards: its dense axes together,
    max-normalised, as `tansaku eval`)."""

    def f(runs: Runs, w: Mapping[str, float]) -> dict[Hashable, float]:
        keep = {a: r for a, r in runs.items() if (_is_dense(a, runs) == (kind == "dense"))}
        if kind != "dense":
            keep = {a: r for a, r in keep.items() if (a == "bigram") == (kind == "bigram")}
        return F.linear_fusion(keep, w, normalization="max")

    return f


VARIANTS: dict[str, Fuser] = {
    "default (max)": _norm("max"),
    "bm25": leg("bm25"),
    "dense": leg("dense"),
    "minmax": _norm("minmax"),
    "zscore": _norm("zscore"),
    "zscore clip 3": zclip(3.0),
    "zscore clip 4": zclip(4.0),
    "zscore clip 5": zclip(5.0),
    "zscore top-20": zwindow(20),
    "zscore top-50": zwindow(50),
    "zscore / best": zmax(),
    "zscore dense ×1.25": zdense(1.25),
    "zscore dense ×1.5": zdense(1.5),
    "zscore dense ×2": zdense(2.0),
    "minmax dense ×1.5": zdense(1.5, "minmax"),
    "zscore agree 0.5": zagree(0.5),
    "zscore agree 1": zagree(1.0),
    "zscore gap 0.25": zgap(0.25),
    "zscore gap 0.5": zgap(0.5),
    "rrf k60": rrf(60),
}


# -- a learned fusion, leave one set out --------------------------------------------------
LEARN_LEGS = ("bm25", "dense", "bigram")  # the BEIR sets' axes (the cards have others)


def _features(runs: Runs) -> tuple[list[Hashable], np.ndarray]:
    """Per candidate: each leg's standard score and 1 / (5 + rank) (0 where the leg missed
    it), and the products of the legs' standard scores (agreement)."""
    z = {a: F.zscore(runs.get(a, [])) for a in LEARN_LEGS}
    rk = {a: {k: i for i, (k, _) in enumerate(runs.get(a, []), start=1)} for a in LEARN_LEGS}
    keys: list[Hashable] = sorted(set().union(*(set(v) for v in z.values())), key=str)
    rows = []
    for k in keys:
        zz = [z[a].get(k, 0.0) for a in LEARN_LEGS]
        rr = [1.0 / (5 + rk[a][k]) if k in rk[a] else 0.0 for a in LEARN_LEGS]
        rows.append([*zz, *rr, zz[0] * zz[1], zz[0] * zz[2], zz[1] * zz[2]])
    return keys, np.asarray(rows, dtype=float)


def _fit(parts: list[list[tuple[np.ndarray, np.ndarray]]], l2: float = 1e-2) -> np.ndarray:
    """Logistic regression (Newton) on standardised features, each set weighing the same."""
    x = np.vstack([f for part in parts for f, _ in part])
    y = np.concatenate([lab for part in parts for _, lab in part])
    w = np.concatenate([np.full(len(lab), 1.0 / len(part)) for part in parts for _, lab in part])
    mu, sd = x.mean(axis=0), x.std(axis=0) + 1e-9
    xs = np.hstack([(x - mu) / sd, np.ones((len(x), 1))])
    beta = np.zeros(xs.shape[1])
    for _ in range(25):
        p = 1.0 / (1.0 + np.exp(-xs @ beta))
        grad = xs.T @ (w * (p - y)) + l2 * beta
        hess = (xs * (w * p * (1 - p))[:, None]).T @ xs + l2 * np.eye(len(beta))
        beta -= np.linalg.solve(hess, grad)
    return np.concatenate([mu, sd, beta])


def learned(sets: Mapping[str, dict[str, Any]]) -> dict[str, dict[str, float]]:
    """Per-query nDCG@10 of a logistic fusion over :func:`_features`, each set scored by the
    model fitted on the other sets (the cards are left out: their axes differ)."""
    names = [s for s in sets if s != "cards"]
    feats: dict[str, dict[str, tuple[list[Hashable], np.ndarray, np.ndarray]]] = {}
    for s in names:
        qrels = sets[s]["qrels"]
        feats[s] = {}
        for qid, q in sets[s]["queries"].items():
            keys, x = _features(q["calls"][0]["runs"]) if q["calls"] else ([], np.zeros((0, 9)))
            y = np.array([1.0 if qrels.get(qid, {}).get(str(k), 0) > 0 else 0.0 for k in keys])
            feats[s][qid] = (keys, x, y)
    out = {}
    for s in names:
        model = _fit([[(x, y) for _, x, y in feats[t].values() if len(y)] for t in names if t != s])
        n = (len(model) - 1) // 3
        mu, sd, beta = model[:n], model[n : 2 * n], model[2 * n :]
        rankings = {}
        for qid, (keys, x, _) in feats[s].items():
            logit = ((x - mu) / sd) @ beta[:-1] + beta[-1] if len(keys) else np.zeros(0)
            rankings[qid] = rank(
                {k: float(1 / (1 + np.exp(-v))) for k, v in zip(keys, logit, strict=True)}
            )
        _, per = score_run(sets[s]["qrels"], rankings)
        out[s] = {q: m["ndcg@10"] for q, m in per.items()}
    return out


# -- the dense leg weighed by the candidate's length ----------------------------------------
LENGTH_GRID = [
    (l0, a, lo, hi)
    for l0 in (100, 150, 200, 250, 300)
    for a in (0.25, 0.5, 0.75, 1.0)
    for lo, hi in (
        (0.5, 1.0),
        (0.25, 1.0),
        (0.5, 1.5),
        (0.5, 2.0),
        (0.25, 2.0),
        (1.0, 1.5),
        (1.0, 2.0),
    )
]


def corpus_lengths(names: Sequence[str]) -> dict[str, dict[str, int]]:
    """Characters of title + text of every document of each set (its corpus.jsonl)."""
    paths = {ds.name: ds.source for ds in datasets([n for n in names if n != MERGED], None)}
    paths[MERGED] = HOME / "variants" / MERGED / "corpus.jsonl"
    out = {}
    for name in names:
        path = paths.get(name)
        if path is None or not Path(path).is_file():
            continue
        lengths = {}
        for line in Path(path).read_text(encoding="utf-8").splitlines():
            if line.strip():
                doc = json.loads(line)
                lengths[str(doc["_id"])] = len(doc.get("title") or "") + len(doc.get("text") or "")
        out[name] = lengths
    return out


def zlength(lengths: Mapping[str, int], l0: float, a: float, lo: float, hi: float) -> Fuser:
    """zscore with each dense candidate's weight × clip((l0 / its characters) ** a, lo, hi)
    (a candidate of unknown length: × 1): :func:`blend` without max normalisation."""
    return blend(0.0, F.Z_SCALE, lengths, l0, a, lo, hi)


def blend(
    beta: float, zdiv: float, lengths: Mapping[str, int], l0: float, a: float, lo: float, hi: float
) -> Fuser:
    """``beta × s / max + (1 − beta) × zscore × Z_SCALE / zdiv`` per leg, each dense candidate
    × ``clip((l0 / its characters) ** a, lo, hi)`` (``l0`` 0: no length weight)."""

    scale = (1 - beta) * F.Z_SCALE / zdiv  # 1.0 exactly for plain zscore (beta 0, zdiv 10)

    def f(runs: Runs, w: Mapping[str, float]) -> dict[Hashable, float]:
        out: dict[Hashable, float] = {}
        for axis, run in runs.items():
            z = F.zscore(run)
            m = F.maxnorm(run) if beta else {}
            ww = w.get(axis, 1.0)
            dense = _is_dense(axis, runs)
            for k, zk in z.items():
                n = lengths.get(str(k)) if dense and l0 else None
                fac = 1.0 if n is None else min(hi, max(lo, (l0 / max(n, 1)) ** a))
                v = beta * m.get(k, 0.0) + scale * zk
                out[k] = out.get(k, 0.0) + ww * fac * v
        return out

    return f


BLENDS = ((0.0, F.Z_SCALE), (0.2, 3.0), (0.35, 2.0), (0.35, 3.0), (0.5, 2.0))
BLEND_LENGTHS = (
    (0, 0, 1.0, 1.0),
    (300, 0.75, 1.0, 1.5),
    (300, 0.5, 1.0, 1.5),
    (200, 0.75, 1.0, 1.5),
    (300, 0.75, 0.75, 1.5),
    (400, 0.75, 0.75, 1.5),
    (300, 0.5, 0.75, 1.25),
    (200, 0.5, 0.75, 1.5),
)


def blend_report(names: list[str] | None) -> None:
    sets = load(names, held_out=True)
    lengths = corpus_lengths([s for s in sets if s != "cards"])
    legs = {"dense": leg("dense"), "bm25": leg("bm25"), "bigram": leg("bigram")}
    settings = [(b, z, *g) for b, z in BLENDS for g in BLEND_LENGTHS]
    res: dict[str, dict[str, float]] = {}
    for s, data in sets.items():
        row = {v: float(np.mean(list(replay(data, f).values()))) for v, f in legs.items()}
        row["max"] = float(np.mean(list(replay(data, _norm("max")).values())))
        for g in settings:
            fuser = blend(g[0], g[1], lengths.get(s, {}), *g[2:])
            row[str(g)] = float(np.mean(list(replay(data, fuser).values())))
        res[s] = row
        print(f"{s}: done", file=sys.stderr, flush=True)
    names_ = list(sets)
    best_leg = {s: max(res[s][x] for x in legs) for s in names_}
    head = " | ".join(names_)
    print(f"| (beta, zdiv, L0, a, lo, hi) | {head} | min margin | jsquad ≥ 0.961 |")
    print("|---|" + "---:|" * (len(names_) + 2))
    rows = []
    for g in settings:
        v = str(g)
        margin = min(res[s][v] - best_leg[s] for s in names_ if s != MERGED)
        rows.append((margin, v))
    for margin, v in sorted(rows, reverse=True):
        cells = " | ".join(f"{res[s][v]:.4f}" for s in names_)
        ok = "yes" if res.get("jsquad-ir", {}).get(v, 0) >= 0.961 else "no"
        print(f"| {v} | {cells} | {margin:+.4f} | {ok} |")
    print("| best single leg | " + " | ".join(f"{best_leg[s]:.4f}" for s in names_) + " | | |")
    print("| max | " + " | ".join(f"{res[s]['max']:.4f}" for s in names_) + " | | |")


def lengths_report(names: list[str] | None) -> None:
    sets = {k: v for k, v in load(names, held_out=True).items() if k != "cards"}
    lengths = corpus_lengths(list(sets))
    base = {"zscore (default)": _norm("zscore"), "max": _norm("max"), "dense": leg("dense")}
    base |= {"bm25": leg("bm25"), "bigram": leg("bigram")}
    res: dict[str, dict[str, dict[str, float]]] = {}
    for s, data in sets.items():
        res[s] = {v: replay(data, f) for v, f in base.items()}
        for g in LENGTH_GRID:
            res[s][str(g)] = replay(data, zlength(lengths.get(s, {}), *g))
        print(
            f"{s}: median {np.median(list(lengths.get(s, {0: 0}).values())):.0f} characters",
            file=sys.stderr,
            flush=True,
        )

    def mean(s: str, v: str) -> float:
        return float(np.mean(list(res[s][v].values())))

    def delta(s: str, v: str) -> float:
        return mean(s, v) - mean(s, "zscore (default)")

    fitted = [s for s in sets if s != MERGED]
    grid = [str(g) for g in LENGTH_GRID]
    print(
        "| held out | (L0, a, lo, hi) chosen on the others | nDCG@10 | Δ default (p) | best leg |"
    )
    print("|---|---|---:|---:|---:|")
    for s in sets:
        others = [t for t in fitted if t != s]
        best = max(grid, key=lambda v: min(delta(t, v) for t in others))
        qs = list(res[s]["zscore (default)"])
        p = paired_p([res[s]["zscore (default)"][q] for q in qs], [res[s][best][q] for q in qs])
        legs = max(mean(s, x) for x in ("dense", "bm25", "bigram"))
        print(
            f"| {s} | {best} | {mean(s, best):.4f} | {delta(s, best):+.4f} ({p:.2f}) | {legs:.4f} |"
        )
    best = max(grid, key=lambda v: min(delta(t, v) for t in fitted))
    print(f"\nchosen on every fitted set: {best}")
    for s in sets:
        print(
            f"  {s}: default {mean(s, 'zscore (default)'):.4f}, chosen {mean(s, best):.4f}, "
            f"max {mean(s, 'max'):.4f}, dense {mean(s, 'dense'):.4f}"
        )


def capture_merged() -> None:
    """The legs of jsquad-ir merged to ≈400-character documents, one record each."""
    from bench.jsquad_analysis import build_merged

    from tansaku.eval import load_dataset
    from tansaku.eval.configs import eval_config_from_dict
    from tansaku.eval.runner import _target

    folder = HOME / "variants" / MERGED
    if not folder.is_dir():
        build_merged(520, folder)
    ds = load_dataset(folder)
    conf = eval_config_from_dict({"name": "default", "chunking": {"size": 2000, "overlap": 0}})
    with tansaku.connect(HOME) as ts:
        run_eval(ts, ds, [conf], measure_embedding=False, keep=True)
        name = _target(_base(ts, ds)[0], conf)
        _capture_into(ts, ds, name, LEGS / f"{MERGED}.json")


# -- replay --------------------------------------------------------------------------------
def rank(fused: Mapping[Hashable, float], n: int = 100) -> tuple[str, ...]:
    ranked = sorted(fused.items(), key=itemgetter(0))
    ranked.sort(key=itemgetter(1), reverse=True)
    return tuple(str(k) for k, s in ranked[:n] if s > 0)


def replay(data: dict[str, Any], fuser: Fuser) -> dict[str, float]:
    """Per-query nDCG@10 of a variant (first retrieval of each search: stage 0, one query)."""
    rankings: dict[str, tuple[str, ...]] = {}
    for qid, q in data["queries"].items():
        if not q["calls"]:
            rankings[qid] = ()
            continue
        call = q["calls"][0]
        runs = {a: [(k, s) for k, s in r] for a, r in call["runs"].items()}
        rankings[qid] = rank(fuser(runs, call["weights"]))
    _, per = score_run(data["qrels"], rankings)
    return {q: m["ndcg@10"] for q, m in per.items()}


def paired_p(a: Sequence[float], b: Sequence[float], n: int = 10_000, seed: int = 0) -> float:
    d = np.asarray(b, dtype=float) - np.asarray(a, dtype=float)
    if not d.any():
        return 1.0
    rng = np.random.default_rng(seed)
    signs = rng.choice([-1.0, 1.0], size=(n, len(d)))
    obs = abs(d.mean())
    return float((np.abs((signs * d).mean(axis=1)) >= obs - 1e-12).mean())


def load(names: list[str] | None, *, held_out: bool = False) -> dict[str, dict[str, Any]]:
    """The captured sets (``names``: these only); the merged long-passage set only when named
    or ``held_out`` (its questions are jsquad-ir's: a learned fusion must not train on it)."""
    out = {}
    for path in sorted(LEGS.glob("*.json")):
        if path.stem in (names or ()) or (names is None and (held_out or path.stem != MERGED)):
            out[path.stem] = json.loads(path.read_text(encoding="utf-8"))
    return out


def compare(
    names: list[str] | None, variants: Mapping[str, Fuser], *, learn: bool = False
) -> dict[str, Any]:
    sets = load(names)
    results: dict[str, dict[str, dict[str, float]]] = {}
    for s, data in sets.items():
        multi = sum(len(q["calls"]) > 1 for q in data["queries"].values())
        print(
            f"{s}: {len(data['queries'])} q, {multi} with more than one retrieval", file=sys.stderr
        )
        results[s] = {v: replay(data, f) for v, f in variants.items()}
    rows = list(variants)
    if learn:
        rows.append("learned (leave one set out)")
        for s, per in learned(sets).items():
            results[s][rows[-1]] = per
    order = list(sets)
    print("| variant | " + " | ".join(order) + " | worst Δ vs max(default, dense) |")
    print("|---|" + "---|" * (len(order) + 1))
    for v in rows:
        cells, worst = [], math.inf
        for s in order:
            if v not in results[s]:
                cells.append("–")
                continue
            base = results[s]["default (max)"]
            qs = list(base)
            mine = [results[s][v][q] for q in qs]
            mean = float(np.mean(mine))
            ref = max(
                float(np.mean(list(base.values()))),
                float(np.mean(list(results[s]["dense"].values()))),
            )
            worst = min(worst, mean - ref)
            p = paired_p([base[q] for q in qs], mine)
            cells.append(f"{mean:.4f} ({'p<.001' if p < 0.001 else f'p={p:.2f}'})")
        print(f"| {v} | " + " | ".join(cells) + f" | {worst:+.4f} |")
    return results


def main(argv: list[str]) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("what", choices=("capture", "compare", "capture-merged", "lengths", "blend"))
    ap.add_argument("--sets")
    ap.add_argument("--json", type=Path)
    ap.add_argument("--learned", action="store_true", help="also a learned fusion (LOSO)")
    args = ap.parse_args(argv)
    names = args.sets.split(",") if args.sets else None
    if args.what == "capture":
        capture(names)
        return
    if args.what == "capture-merged":
        capture_merged()
        return
    if args.what == "lengths":
        lengths_report(names)
        return
    if args.what == "blend":
        blend_report(names)
        return
    results = compare(names, VARIANTS, learn=args.learned)
    if args.json:
        args.json.write_text(json.dumps(results), encoding="utf-8")


if __name__ == "__main__":
    main(sys.argv[1:])

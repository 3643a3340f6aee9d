"""Build ``jnli-para``: paraphrased descriptions of a scene against the captions that say it.

    # the source: github.com/yahoojapan/JGLUE (CC BY-SA 4.0), any checkout or git directory
    python bench/datasets/jnli_para.py /work/.mirror/yahoojapan+JGLUE/repo  # → bench/data/…
    python bench/datasets/jnli_para.py SOURCE --out DIR --max-overlap 0.4

The source: JGLUE's JNLI v1.3 (valid and test; the train file is not read), sentence pairs of
image captions from YJ Captions (「バナナとミカンがボウルに入れられています。」), each pair
labelled entailment / neutral / contradiction by crowd workers. Every sentence is one caption,
``yjcaptions_id`` = ``<image>-<caption of sentence1>-<caption of sentence2>``.

Queries: the hypotheses of entailment pairs whose words differ from their premise's — the
character-bigram Jaccard overlap of the two sentences at most ``--max-overlap`` (0.4):
「雪山でスノボーをしている人が４人います。」 for 「四人のスノーボーダーが雪山を滑っています。」
(0.22).
A caption entailed by another, said in other words: paraphrase rather than copied phrasing.
Corpus: every other caption of the two files (one record per caption, ``_id`` ``jnli-c<caption
id>``, no title), so each query competes with thousands of captions of similar scenes; a
caption asked as a query is not in the corpus. Qrels, graded: 2 for each caption in the corpus
that entails the query (JNLI label), 1 for the other captions of the same image that JNLI pairs
with it as neutral (same picture, not judged to say the same). Queries are taken in the files'
order; a premise already asked as a query is skipped, so no relevant record is missing from the
corpus. No ``answers.jsonl``. Deterministic. JGLUE's JSTS (its sentence-similarity task) is
not read.
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _source import Source, build_parser, print_report, sha256, write_beir

FILES = ("datasets/jnli-v1.3/valid-v1.3.json", "datasets/jnli-v1.3/test-v1.3.json")
MAX_OVERLAP = 0.4


def overlap(a: str, b: str) -> float:
    """Jaccard overlap of the two sentences' character bigrams."""
    x = {a[i : i + 2] for i in range(len(a) - 1)}
    y = {b[i : i + 2] for i in range(len(b) - 1)}
    return len(x & y) / len(x | y) if x | y else 1.0


def build(source: Source, out: Path, max_overlap: float = MAX_OVERLAP) -> dict[str, object]:
    files: dict[str, dict[str, str]] = {}
    pairs: list[dict[str, str]] = []
    for name in FILES:
        data = source.read(name)
        files[name] = {"git_blob": source.blob(name), "sha256": sha256(data)}
        pairs.extend(json.loads(line) for line in data.decode("utf-8").splitlines() if line)
    text: dict[str, str] = {}  # caption id -> sentence
    image: dict[str, str] = {}  # caption id -> image id
    entails: dict[str, set[str]] = {}  # hypothesis caption -> premise captions
    neutral: dict[str, set[str]] = {}  # caption -> neutral partners of the same image
    stats: Counter[str] = Counter()
    for p in pairs:
        img, a, b = p["yjcaptions_id"].split("-")
        text.setdefault(a, p["sentence1"])
        text.setdefault(b, p["sentence2"])
        image[a] = image[b] = img
        stats[f"pairs:{p['label']}"] += 1
        if p["label"] == "entailment":
            entails.setdefault(b, set()).add(a)
        elif p["label"] == "neutral":
            neutral.setdefault(a, set()).add(b)
            neutral.setdefault(b, set()).add(a)
    asked: list[str] = []
    premises: set[str] = set()
    for p in pairs:
        _, a, b = p["yjcaptions_id"].split("-")
        if p["label"] != "entailment" or b in asked:
            continue
        if text[a] == text[b] or overlap(text[a], text[b]) > max_overlap:
            stats["skipped_copied_wording"] += 1
            continue
        if b in premises or a in asked:
            stats["skipped_caption_used_both_ways"] += 1
            continue
        asked.append(b)
        premises.update(entails[b])
    asked_set = set(asked)
    asked_texts = {text[c] for c in asked}
    corpus = [
        {"_id": f"jnli-c{c}", "title": "", "text": text[c]}
        for c in sorted(text, key=lambda c: (len(c), c))
        if c not in asked_set and text[c] not in asked_texts
    ]
    in_corpus = {d["_id"] for d in corpus}
    queries: list[dict[str, str]] = []
    qrels: dict[str, dict[str, int]] = {}
    for c in asked:
        rel = {f"jnli-c{n}": 1 for n in neutral.get(c, ()) if f"jnli-c{n}" in in_corpus}
        rel.update({f"jnli-c{a}": 2 for a in entails[c] if f"jnli-c{a}" in in_corpus})
        if not any(g == 2 for g in rel.values()):
            stats["skipped_premise_not_in_corpus"] += 1
            continue
        queries.append({"_id": f"jnli-q{c}", "text": text[c]})
        qrels[f"jnli-q{c}"] = rel
    report = {
        "source": {"repository": "yahoojapan/JGLUE", "commit": source.commit(), "files": files},
        "licence": "CC BY-SA 4.0",
        "records": len(corpus),
        "images": len(set(image.values())),
        "queries": len(queries),
        "qrels": sum(len(r) for r in qrels.values()),
        "qrels_grade_2": sum(g == 2 for r in qrels.values() for g in r.values()),
        "queries_with_answers": 0,
        "max_overlap": max_overlap,
        "mean_query_overlap": round(
            sum(
                max(overlap(q["text"], d) for d in (text[k[6:]] for k, g in r.items() if g == 2))
                for q, r in zip(queries, qrels.values(), strict=True)
            )
            / len(queries),
            3,
        ),
        "mean_query_chars": round(sum(len(q["text"]) for q in queries) / len(queries), 1),
        "mean_record_chars": round(sum(len(d["text"]) for d in corpus) / len(corpus), 1),
        **dict(sorted(stats.items())),
    }
    write_beir(out, corpus, queries, qrels, {}, report)
    return report


def main(argv: list[str]) -> None:
    parser = build_parser(__doc__, "yahoojapan/JGLUE", "jnli-para")
    parser.add_argument("--max-overlap", type=float, default=MAX_OVERLAP)
    args = parser.parse_args(argv)
    report = build(Source(args.source, args.rev), args.out, args.max_overlap)
    print_report(report)


if __name__ == "__main__":
    main(sys.argv[1:])

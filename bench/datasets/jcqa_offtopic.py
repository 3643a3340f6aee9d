"""Build ``jcqa-offtopic``: a queries-only pool of everyday commonsense questions (JCommonsenseQA).

    # the source: github.com/yahoojapan/JGLUE (CC BY-SA 4.0), any checkout or git directory;
    # only the JCommonsenseQA files are read
    git clone https://github.com/yahoojapan/JGLUE /tmp/JGLUE
    python bench/datasets/jcqa_offtopic.py /tmp/JGLUE          # → bench/data/jcqa-offtopic/
    python bench/datasets/jcqa_offtopic.py /tmp/JGLUE --out DIR --size 500

JCommonsenseQA (JGLUE v1.3) has five-choice questions written by crowd workers from ConceptNet
seeds (「会社の最高責任者を何というか?」). Asked without their choices they are real Japanese
questions of a general kind that a business, legal or encyclopedia workspace does not answer:
the basket uses them as off-topic negatives for every set (kind ``offtopic``, no corpus).

Questions of the dev and test files (2,237; the train file is left alone) are NFKC-normalised
and kept when they stand on their own: at least ``MIN_CHARS`` characters (「春は?」 names no
topic), no reference to the choices (「次のうち」「この中で」「どれ」), and no spaced-out words
(「中国 の 思想」: text pasted from Wikipedia, which a Wikipedia corpus may answer). Duplicates
are dropped; ``--size`` of the rest are drawn with a fixed seed and written in source order,
ids ``jcqa-<q_id>``. Only ``queries.jsonl`` and ``stats.json`` are written (no corpus, no
judgements, no answers).
"""

from __future__ import annotations

import json
import random
import re
import sys
import unicodedata
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _source import Source, build_parser, print_report, sha256

FILES = (
    "datasets/jcommonsenseqa-v1.3/valid-v1.3.json",
    "datasets/jcommonsenseqa-v1.3/test-v1.3.json",
)
SEED = 20250601
SIZE = 500
MIN_CHARS = 12
_CHOICES = re.compile(r"次のうち|次の中|この中|これらの|どれ")
_SPACED = re.compile(r"\S \S")


def _question(text: str) -> str:
    return unicodedata.normalize("NFKC", text).strip()


def _skip(text: str) -> str | None:
    """Why a question does not stand on its own, or None."""
    if len(text) < MIN_CHARS:
        return "skipped_short"
    if _CHOICES.search(text):
        return "skipped_refers_to_choices"
    if _SPACED.search(text):
        return "skipped_spaced_words"
    return None


def build(source: Source, out: Path, size: int = SIZE, seed: int = SEED) -> dict[str, object]:
    stats: Counter[str] = Counter()
    files: dict[str, dict[str, str]] = {}
    kept: list[dict[str, str]] = []
    seen: set[str] = set()
    for name in FILES:
        data = source.read(name)
        files[name] = {"git_blob": source.blob(name), "sha256": sha256(data)}
        for line in data.decode("utf-8").splitlines():
            if not line.strip():
                continue
            row = json.loads(line)
            stats["questions_in_source"] += 1
            text = _question(row["question"])
            reason = _skip(text)
            if reason:
                stats[reason] += 1
                continue
            if text in seen:
                stats["skipped_duplicate"] += 1
                continue
            seen.add(text)
            kept.append({"_id": f"jcqa-{row['q_id']}", "text": text})
    chosen = set(random.Random(seed).sample(range(len(kept)), min(size, len(kept))))
    queries = [q for i, q in enumerate(kept) if i in chosen]
    out.mkdir(parents=True, exist_ok=True)
    with (out / "queries.jsonl").open("w", encoding="utf-8", newline="\n") as f:
        for q in queries:
            f.write(json.dumps(q, ensure_ascii=False) + "\n")
    lengths = sorted(len(q["text"]) for q in queries)
    report = {
        "source": {"repository": "yahoojapan/JGLUE", "commit": source.commit(), "files": files},
        "licence": "CC BY-SA 4.0",
        "records": 0,
        "queries": len(queries),
        "eligible": len(kept),
        "seed": seed,
        "median_chars": lengths[len(lengths) // 2] if lengths else 0,
        **dict(sorted(stats.items())),
    }
    (out / "stats.json").write_text(
        json.dumps(report, ensure_ascii=False, indent=2) + "\n", encoding="utf-8"
    )
    return report


def main(argv: list[str]) -> None:
    parser = build_parser(__doc__, "yahoojapan/JGLUE", "jcqa-offtopic")
    parser.add_argument("--size", type=int, default=SIZE, help="questions drawn (fixed seed)")
    parser.add_argument("--seed", type=int, default=SEED)
    args = parser.parse_args(argv)
    report = build(Source(args.source, args.rev), args.out, args.size, args.seed)
    print_report(report)


if __name__ == "__main__":
    main(sys.argv[1:])

"""Build ``lawqa-jp``: questions on Japanese statutes over the statute excerpts they rest on.

    # the source: github.com/digital-go-jp/lawqa_jp (PDL 1.0), any checkout or git directory
    git clone https://github.com/digital-go-jp/lawqa_jp /tmp/lawqa_jp
    python bench/datasets/lawqa_jp.py /tmp/lawqa_jp            # → bench/data/lawqa-jp/
    python bench/datasets/lawqa_jp.py /tmp/lawqa_jp --out DIR

The source (Digital Agency, ``data/selection.json``) has 140 four-choice questions on the
Financial Instruments and Exchange Act, the Pharmaceutical and Medical Device Act and the Act on
Land and Building Leases; each comes with the statute excerpt it is asked on (``コンテキスト``,
Markdown headings ``##`` act, ``###`` article, ``####`` paragraph, ``#####`` item). The
questions and choices were written with several language models and checked (source README).

Corpus: one record per distinct excerpt, ``title`` = its first act / article / paragraph
headings (「金融商品取引法 第5条 第6項」), ``text`` = the excerpt with the heading marks removed.
Queries: the question stems (``問題文``), without the choices; stems that are only the frame
「次のうち、正しいものを教えてください。」 (18) are left out, since without their choices they name
no topic (their excerpts stay in the corpus). Qrels: question → its excerpt, score 1. No
``answers.jsonl``: the gold is the record (the correct choice is a paraphrased statement, and for
「誤っているもの」 questions a false one, so it is no answer string).
"""

from __future__ import annotations

import json
import re
import sys
import unicodedata
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _source import Source, build_parser, print_report, sha256, write_beir

FILE = "data/selection.json"
_HEADING = re.compile(r"^(#{2,6})\s*(.*)$")
# a stem that is only this frame names no topic (its choices carried it)
_FRAME = re.compile(
    r"^(次の(選択肢の)?うち、)?(正しい|誤っている)ものを教えて(ください|下さい)。?$"
)


def _norm(text: str) -> str:
    return " ".join(unicodedata.normalize("NFKC", text).split())


def _title_and_text(context: str) -> tuple[str, str]:
    """The leading headings (one per level, before the first body line) and the plain text."""
    title: list[str] = []
    lines: list[str] = []
    body_started = False
    for line in context.splitlines():
        m = _HEADING.match(line.strip())
        if m:
            if not body_started:
                title.append(m.group(2).strip())
            lines.append(m.group(2).strip())
        elif line.strip():
            body_started = True
            lines.append(line.strip())
    return " ".join(title), "\n".join(lines)


def build(source: Source, out: Path) -> dict[str, object]:
    data = source.read(FILE)
    samples = json.loads(data)["samples"]
    corpus: list[dict[str, str]] = []
    doc_of: dict[str, str] = {}
    queries: list[dict[str, str]] = []
    qrels: dict[str, dict[str, int]] = {}
    stats: Counter[str] = Counter()
    for n, sample in enumerate(samples, start=1):
        context, question = sample["コンテキスト"], sample["問題文"].strip()
        key = _norm(context)
        if key not in doc_of:
            doc_of[key] = f"lawqa-c{len(corpus) + 1:03d}"
            title, text = _title_and_text(context)
            corpus.append({"_id": doc_of[key], "title": title, "text": text})
        if _FRAME.match(question):
            stats["skipped_stem_without_topic"] += 1
            continue
        qid = f"lawqa-q{n:03d}"
        queries.append({"_id": qid, "text": question})
        qrels[qid] = {doc_of[key]: 1}
        stats["act:" + sample["ファイル名"].split("_", 1)[0]] += 1
        stats["asks_for_false_statement"] += bool(re.search(r"誤って|誤り|正しくない", question))
    report = {
        "source": {
            "repository": "digital-go-jp/lawqa_jp",
            "commit": source.commit(),
            "files": {FILE: {"git_blob": source.blob(FILE), "sha256": sha256(data)}},
        },
        "licence": "PDL 1.0 (公共データ利用規約 第1.0版)",
        "records": len(corpus),
        "queries": len(queries),
        "questions_in_source": len(samples),
        "qrels": len(queries),
        "queries_with_answers": 0,
        **dict(sorted(stats.items())),
    }
    write_beir(out, corpus, queries, qrels, {}, report)
    return report


def main(argv: list[str]) -> None:
    parser = build_parser(__doc__, "lawqa_jp", "lawqa-jp")
    args = parser.parse_args(argv)
    report = build(Source(args.source, args.rev), args.out)
    print_report(report)


if __name__ == "__main__":
    main(sys.argv[1:])

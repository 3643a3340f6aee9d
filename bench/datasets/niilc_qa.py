"""Build ``niilc-qa``: NIILC-ECQA2015 encyclopedic questions over their Wikipedia evidence.

    # the source: github.com/mynlp/niilc-qa (CC BY-SA 4.0), any checkout or git directory
    git clone https://github.com/mynlp/niilc-qa /tmp/niilc-qa
    python bench/datasets/niilc_qa.py /tmp/niilc-qa            # → bench/data/niilc-qa/
    python bench/datasets/niilc_qa.py /tmp/niilc-qa --out DIR

Questions: the 1,000 NIILC questions (800 dev + 200 test; written by annotators as questions
an encyclopedia answers, e.g. 「入道雲はどの季節に発生するの？」), kept when they have a gold answer
(not ``-``) and an evidence passage (meta ``E.5``: the Wikipedia sentence(s) the annotator
found the answer in, from the article ``E.3``). Corpus: one record per distinct (article,
evidence) pair, ``title`` = article title, ``text`` = the evidence. Qrels: question → its
evidence record, score 1. Answers: the gold answers, plus the same string without parenthesised
parts (``ジョン・レノン（ボーカル・ギター）`` → ``ジョン・レノン``) when that differs.
Deterministic: files read in a fixed order, ids from the source.
"""

from __future__ import annotations

import re
import sys
import unicodedata
import xml.etree.ElementTree as ET
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _source import Source, build_parser, print_report, sha256, write_beir

FILES = ("data/NIILC-ECQA2015_dev.xml", "data/NIILC-ECQA2015_test.xml")
_PAREN = re.compile(r"[（(][^（()）]*[）)]")


def _norm(text: str) -> str:
    return " ".join(unicodedata.normalize("NFKC", text).split())


def _meta(question: ET.Element, key: str) -> str:
    # the data files spell the keys E.5, the sample file E5
    for tag in (key, key.replace(".", "")):
        value = question.findtext(f"meta/{tag}")
        if value and value.strip():
            return value.strip()
    return ""


def _answers(question: ET.Element) -> list[str]:
    out: list[str] = []
    for a in question.findall("answers/answer"):
        text = (a.text or "").strip()
        if not text or text == "-":
            continue
        for variant in (text, _PAREN.sub("", text).strip()):
            if variant and variant not in out:
                out.append(variant)
    return out


def build(source: Source, out: Path) -> dict[str, object]:
    corpus: list[dict[str, str]] = []
    doc_of: dict[tuple[str, str], str] = {}
    queries: list[dict[str, str]] = []
    qrels: dict[str, dict[str, int]] = {}
    answers: dict[str, list[str]] = {}
    stats: Counter[str] = Counter()
    files: dict[str, dict[str, str]] = {}
    for name in FILES:
        data = source.read(name)
        files[name] = {"git_blob": source.blob(name), "sha256": sha256(data)}
        for q in ET.fromstring(data).findall("question"):
            stats["questions_in_source"] += 1
            qid, text = q.get("id", ""), (q.findtext("text") or "").strip()
            gold, title, evidence = _answers(q), _meta(q, "E.3"), _meta(q, "E.5")
            if not gold:
                stats["skipped_no_answer"] += 1
                continue
            if not (title and evidence):
                stats["skipped_no_evidence"] += 1
                continue
            key = (_norm(title), _norm(evidence))
            if key not in doc_of:
                doc_of[key] = f"niilc-d{len(corpus) + 1:04d}"
                corpus.append({"_id": doc_of[key], "title": title, "text": evidence})
            queries.append({"_id": qid, "text": text})
            qrels[qid] = {doc_of[key]: 1}
            answers[qid] = gold
            flat = key[1].replace(" ", "")
            stats["answer_in_evidence"] += any(_norm(a).replace(" ", "") in flat for a in gold)
    if len({q["_id"] for q in queries}) != len(queries):
        raise ValueError("duplicate question ids in the source")
    report = {
        "source": {"repository": "mynlp/niilc-qa", "commit": source.commit(), "files": files},
        "licence": "CC BY-SA 4.0",
        "records": len(corpus),
        "queries": len(queries),
        "qrels": sum(len(r) for r in qrels.values()),
        "queries_with_answers": len(answers),
        **dict(sorted(stats.items())),
    }
    write_beir(out, corpus, queries, qrels, answers, report)
    return report


def main(argv: list[str]) -> None:
    parser = build_parser(__doc__, "mynlp/niilc-qa", "niilc-qa")
    args = parser.parse_args(argv)
    report = build(Source(args.source, args.rev), args.out)
    print_report(report)


if __name__ == "__main__":
    main(sys.argv[1:])

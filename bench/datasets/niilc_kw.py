"""Build ``niilc-kw``: short keyword queries (topic + attribute) over NIILC's Wikipedia evidence.

    # the source: github.com/mynlp/niilc-qa (CC BY-SA 4.0), any checkout or git directory
    python bench/datasets/niilc_kw.py /work/.mirror/mynlp+niilc-qa/repo   # → bench/data/niilc-kw/
    python bench/datasets/niilc_kw.py SOURCE --out DIR

The keyword form of each NIILC-ECQA2015 question as its annotators wrote it down: meta ``B5``
(the topic, 「豆腐」, 「ハリーポッター」, 「発泡酒;麦酒」) and ``B7`` (the attribute asked
about, 「原料」, 「著者」, 「違い」), joined with spaces — 「豆腐 原料」, 「ハリーポッター 著者」,
「東名高速 起点 終点」: one to four nouns, no question words, no particles, the shape of what
people type into a search box. Nobody on this team wrote or generated them.

Corpus, qrels and ids are those of ``niilc-qa`` (``bench/datasets/niilc_qa.py``: one record per
distinct article + evidence passage, question → its evidence, score 1), so the two sets differ
only in how the question is put. A question is kept when ``niilc-qa`` keeps it and its topic is
annotated (not ``-``); the attribute is left out when it is ``-`` or the placeholder ``内容``
(「ビートルズ 内容」 means "the members", which the keywords do not say), leaving the topic
alone. Keyword queries that repeat (two questions with the same topic and attribute) are kept
once, with the union of their evidence as relevant. No ``answers.jsonl``: a keyword query asks
no single question.
"""

from __future__ import annotations

import sys
import xml.etree.ElementTree as ET
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _source import Source, build_parser, print_report, sha256, write_beir
from niilc_qa import FILES, _answers, _meta, _norm

PLACEHOLDERS = frozenset({"", "-", "内容"})


def keywords(question: ET.Element) -> str:
    """``B5`` and ``B7`` as one space-separated keyword query ('' when the topic is missing)."""
    topic = [t.strip() for t in _meta(question, "B5").split(";")]
    if not [t for t in topic if t not in PLACEHOLDERS]:
        return ""
    attribute = [a.strip() for a in _meta(question, "B7").split(";")]
    words: list[str] = []
    for w in (*topic, *attribute):
        if w not in PLACEHOLDERS and w not in words:
            words.append(w)
    return _norm(" ".join(words))


def build(source: Source, out: Path) -> dict[str, object]:
    corpus: list[dict[str, str]] = []
    doc_of: dict[tuple[str, str], str] = {}
    query_of: dict[str, str] = {}  # keyword text -> query id
    queries: list[dict[str, str]] = []
    qrels: dict[str, dict[str, int]] = {}
    stats: Counter[str] = Counter()
    files: dict[str, dict[str, str]] = {}
    for name in FILES:
        data = source.read(name)
        files[name] = {"git_blob": source.blob(name), "sha256": sha256(data)}
        for q in ET.fromstring(data).findall("question"):
            stats["questions_in_source"] += 1
            qid = q.get("id", "")
            gold, title, evidence = _answers(q), _meta(q, "E.3"), _meta(q, "E.5")
            if not gold or not (title and evidence):
                stats["skipped_as_in_niilc_qa"] += 1
                continue
            key = (_norm(title), _norm(evidence))  # the same records, in the same order
            if key not in doc_of:
                doc_of[key] = f"niilc-d{len(corpus) + 1:04d}"
                corpus.append({"_id": doc_of[key], "title": title, "text": evidence})
            text = keywords(q)
            if not text:
                stats["skipped_no_topic"] += 1
                continue
            if text in query_of:
                qrels[query_of[text]][doc_of[key]] = 1
                stats["merged_repeated_keywords"] += 1
                continue
            kid = f"{qid}-kw"
            query_of[text] = kid
            queries.append({"_id": kid, "text": text})
            qrels[kid] = {doc_of[key]: 1}
            stats[f"words:{len(text.split())}"] += 1
    report = {
        "source": {"repository": "mynlp/niilc-qa", "commit": source.commit(), "files": files},
        "licence": "CC BY-SA 4.0",
        "records": len(corpus),
        "queries": len(queries),
        "qrels": sum(len(r) for r in qrels.values()),
        "queries_with_answers": 0,
        "mean_query_chars": round(sum(len(q["text"]) for q in queries) / len(queries), 1),
        **dict(sorted(stats.items())),
    }
    write_beir(out, corpus, queries, qrels, {}, report)
    return report


def main(argv: list[str]) -> None:
    parser = build_parser(__doc__, "mynlp/niilc-qa", "niilc-kw")
    args = parser.parse_args(argv)
    report = build(Source(args.source, args.rev), args.out)
    print_report(report)


if __name__ == "__main__":
    main(sys.argv[1:])

"""Build ``nta-topic``: the National Tax Agency's Q&A sheet as question + answer, asked by topic.

    # the same source as nta-qa (bench/datasets/nta_qa.py): a copy of www.nta.go.jp/law/shitsugi/
    # pages in github.com/Momonganz/dify_tax_mammoth, read from its git directory or a checkout
    python bench/datasets/nta_topic.py /work/.mirror/Momonganz+dify_tax_mammoth/repo
    python bench/datasets/nta_topic.py SOURCE --out DIR --max-queries 1000

The other view of the pages nta-qa reads (質疑応答事例 of the National Tax Agency): here a record
is the sheet's entry as a FAQ shows it, ``title`` = the question (the inquiry, 【照会要旨】「住宅
借入金等特別控除の対象となる家屋の床面積は、どのように判定するのですか。」), ``text`` = the
answer (【回答要旨】); the query is the short topic heading the Agency gives the entry
(「床面積の判定」, mean 25 characters), which is in no record. Short topic queries against a sheet
of title = question, text = answer: what a user types into a FAQ's search box, worded apart from
both the question and the answer. Nobody on this team wrote or generated any of them.

Licence: as nta-qa — 国税庁ホームページ利用規約 (Public Data License 1.0, compatible with CC BY
4.0). Attribution: 出典: 国税庁ホームページ「質疑応答事例」(https://www.nta.go.jp/law/shitsugi/01.htm)、
各事例は stats.json の URL; 本セットは同事例を BEIR 形式に加工して作成 (the heading separated
from its entry as the query).

Corpus: one record per page with an inquiry and an answer, ``_id`` from its URL
(``ntt-d-shotoku-06-03``), cleaned as nta-qa. Queries: the headings, ``_id`` ``ntt-q-…``;
``--max-queries`` (default 1,000) spread evenly over the pages in URL order (every category
keeps its share). A heading shared by several pages is asked once, with every page of that
heading relevant. Qrels: heading → its page(s), score 1. Retrieval-only (the headings are not
questions). Deterministic: pages read in URL order, ids from the URLs.
"""

from __future__ import annotations

import hashlib
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _source import Source, build_parser, print_report, write_beir
from nta_qa import REPOSITORY, _slug, parse, read_pages, source_report


def build(source: Source, out: Path, max_queries: int = 1000) -> dict[str, object]:
    pages = read_pages(source)
    digest = hashlib.sha256()
    entries: dict[str, dict[str, str]] = {}
    stats: Counter[str] = Counter()
    for name, text in sorted(pages.items()):
        digest.update(name.encode() + b"\0" + hashlib.sha256(text.encode()).digest())
        entry = parse(text)
        if entry is None:
            stats["skipped_not_a_qa_page"] += 1
        elif not entry["inquiry"] or not entry["answer"]:
            stats["skipped_empty_inquiry_or_answer"] += 1
        elif entry["url"] in entries:
            stats["skipped_duplicate_url"] += 1
        else:
            entries[entry["url"]] = entry
    ordered = [entries[u] for u in sorted(entries)]
    corpus = [
        {"_id": f"ntt-d-{_slug(e['url'])}", "title": e["inquiry"], "text": e["answer"]}
        for e in ordered
    ]
    pages_of: dict[str, list[str]] = {}
    for e in ordered:
        pages_of.setdefault(e["title"], []).append(f"ntt-d-{_slug(e['url'])}")
    n = len(ordered)
    picked = sorted(
        {i * n // max_queries for i in range(max_queries)} if n > max_queries else set(range(n))
    )
    queries: list[dict[str, str]] = []
    qrels: dict[str, dict[str, int]] = {}
    asked: set[str] = set()
    for i in picked:
        e = ordered[i]
        if e["title"] in asked:
            stats["headings_asked_once"] += 1
            continue
        asked.add(e["title"])
        qid = f"ntt-q-{_slug(e['url'])}"
        queries.append({"_id": qid, "text": e["title"]})
        qrels[qid] = {d: 1 for d in pages_of[e["title"]]}
        stats["queries_in:" + (e["category"] or "unknown")] += 1
    stats["queries_with_several_pages"] = sum(1 for r in qrels.values() if len(r) > 1)
    if len({d["_id"] for d in corpus}) != len(corpus):
        raise ValueError("two pages map to one id")
    report = {
        **source_report(source, len(pages), digest.hexdigest()),
        "records": len(corpus),
        "queries": len(queries),
        "qrels": sum(len(r) for r in qrels.values()),
        "queries_with_answers": 0,
        "mean_record_chars": round(
            sum(len(d["title"]) + len(d["text"]) for d in corpus) / len(corpus)
        ),
        "mean_title_chars": round(sum(len(d["title"]) for d in corpus) / len(corpus)),
        "mean_query_chars": round(sum(len(q["text"]) for q in queries) / len(queries)),
        "records_by_category": dict(Counter(e["category"] or "unknown" for e in ordered)),
        "urls": {f"ntt-d-{_slug(e['url'])}": e["url"] for e in ordered},
        **dict(sorted(stats.items())),
    }
    write_beir(out, corpus, queries, qrels, {}, report)
    return report


def main(argv: list[str]) -> None:
    parser = build_parser(__doc__, REPOSITORY, "nta-topic")
    parser.add_argument("--max-queries", type=int, default=1000)
    args = parser.parse_args(argv)
    report = build(Source(args.source, args.rev), args.out, args.max_queries)
    print_report(report, ("source", "urls"))


if __name__ == "__main__":
    main(sys.argv[1:])

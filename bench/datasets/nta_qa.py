"""Build ``nta-qa``: taxpayers' inquiries over the National Tax Agency's Q&A sheet (質疑応答事例).

    # the source: a copy of www.nta.go.jp/law/shitsugi/ pages (Markdown, one file a page) in
    # github.com/Momonganz/dify_tax_mammoth, folder tax_data/scraped_JPtax; read at the commit
    # below from its git directory (the search tool's `fetch github:Momonganz/dify_tax_mammoth`
    # puts it at /work/.mirror/Momonganz+dify_tax_mammoth/repo) or from a checkout
    python bench/datasets/nta_qa.py /work/.mirror/Momonganz+dify_tax_mammoth/repo
    python bench/datasets/nta_qa.py SOURCE --out DIR --max-queries 1000

The source: 質疑応答事例 of the National Tax Agency (国税庁), its public Q&A sheet of taxpayers'
inquiries — each page a heading (「床面積の判定」), the gist of a taxpayer's inquiry as the
Agency publishes it (【照会要旨】「住宅借入金等特別控除の対象となる家屋の床面積は、
どのように判定するのですか。」), the Agency's answer (【回答要旨】) and the statutes it
rests on (【関係法令通達】). Built from commit
``d19e9f9e0df0b3e94bf3ff9e435c7b70c827f79f`` (2025-04-03) of Momonganz/dify_tax_mammoth, pages
as of 令和6年8月1日 or 10月1日 (the date each states): 1,849 pages with an inquiry (1,848 with an
answer too), in nine tax categories (法人税, 消費税, 所得税, 譲渡所得, 印紙税, 財産評価, 源泉所得税,
相続税・贈与税, 法定調書).

Licence: the content is the National Tax Agency's, published under its site terms
(国税庁ホームページ利用規約, https://www.nta.go.jp/chuijiko/copy.htm), which follow the Public
Data License 1.0 (公共データ利用規約 第1.0版, compatible with CC BY 4.0): reuse, modification and
redistribution allowed with the source named and modifications stated. Attribution:
出典: 国税庁ホームページ「質疑応答事例」(https://www.nta.go.jp/law/shitsugi/01.htm)、各事例は
stats.json の URL; 本セットは同事例を BEIR 形式に加工して作成. The copy's repository carries
Dify's licence for its code, which is not used; the pages are the Agency's.

Corpus: one record per page, ``_id`` from its URL (``nta-d-shotoku-06-03``), ``title`` = the
page heading, ``text`` = the answer (回答要旨) with the page's Markdown removed (links kept as
their text, images and ``<br>`` dropped, table rows as plain lines). The inquiry is not in
the record.
Queries: the inquiries (照会要旨, cleaned the same way), ``_id`` ``nta-q-…``: the inquirer's
question, worded apart from the heading — questions asked by users, matched against FAQ entries
(heading + answer). Nobody on this team wrote or generated any of them. Inquiries longer than
the search accepts (``--max-query-chars``, 1,000: 11 pages) are not asked; of the others,
``--max-queries`` (default 1,000) spread evenly over the pages in URL order, so every category
keeps its share. Every page stays in the corpus. Qrels: inquiry → its page, score 1. No
``answers.jsonl``: the gold is the record (answers are paragraphs, no short answer string).
Deterministic: pages read in URL order, ids from the URLs.
"""

from __future__ import annotations

import hashlib
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _source import Source, build_parser, print_report, write_beir

REPOSITORY = "Momonganz/dify_tax_mammoth"
FOLDER = "tax_data/scraped_JPtax"
MARK = "【照会要旨】"
MAX_QUERY_CHARS = 1000  # tansaku's search refuses longer queries (tansaku.search.MAX_QUERY_CHARS)
_URL = re.compile(r"\[このページの先頭へ\]\((https://www\.nta\.go\.jp/law/shitsugi/[^)#\s]+)")
_CATEGORY = re.compile(r"^4\.\s*\[([^\]]+)\]\(https://www\.nta\.go\.jp/law/shitsugi/", re.M)
_H1 = re.compile(r"^#\s+(.+?)\s*$", re.M)
_IMAGE = re.compile(r"!\[[^\]]*\]\([^)]*\)")
_LINK = re.compile(r"\[([^\]]*)\]\([^)]*\)")
_TABLE_RULE = re.compile(r"^\|?[\s:|-]+\|?$")
_BREAK = re.compile(r"<br\s*/?>", re.I)  # line breaks inside the copy's table cells
# where an answer ends: the statutes, the page's note, or the page-top link
_ANSWER_END = re.compile(r"^##\s*【関係法令通達】|^\*\*注記\*\*|^\[このページの先頭へ\]", re.M)


def _plain(markdown: str) -> str:
    """Markdown of one section as plain lines: images dropped, links as their text."""
    lines: list[str] = []
    for raw in markdown.splitlines():
        line = _LINK.sub(r"\1", _IMAGE.sub("", _BREAK.sub(" ", raw))).replace("**", "").strip()
        if line.startswith("|"):
            if _TABLE_RULE.match(line):
                continue
            line = " ".join(c.strip() for c in line.strip("|").split("|") if c.strip())
        line = re.sub(r"^#{2,6}\s*", "", line)
        line = " ".join(line.split())
        if line:
            lines.append(line)
    return "\n".join(lines)


def parse(page: str) -> dict[str, str] | None:
    """Heading, inquiry, answer, category and URL of one page (None when it is no Q&A page)."""
    url, h1 = _URL.search(page), _H1.search(page)
    if MARK not in page or "【回答要旨】" not in page or not url or not h1:
        return None
    inquiry = page.split(MARK, 1)[1].split("【回答要旨】", 1)[0]
    answer = page.split("【回答要旨】", 1)[1]
    end = _ANSWER_END.search(answer)
    category = _CATEGORY.search(page)
    return {
        "url": url.group(1),
        "title": h1.group(1).strip(),
        "category": category.group(1) if category else "",
        "inquiry": _plain(re.sub(r"^\s*#*\s*", "", inquiry, count=1)),
        "answer": _plain(answer[: end.start()] if end else answer),
    }


def _slug(url: str) -> str:
    path = url.split("/law/shitsugi/", 1)[1].removesuffix(".htm")
    return re.sub(r"[^0-9A-Za-z]+", "-", path).strip("-")


def read_pages(source: Source) -> dict[str, str]:
    """Path → text of every page of the folder that has an inquiry."""
    if source.git_dir is None:
        return {
            str(p.relative_to(source.path)): text
            for p in sorted((source.path / FOLDER).glob("*.md"))
            if MARK in (text := p.read_text(encoding="utf-8"))
        }
    git = ["git", f"--git-dir={source.git_dir}"]
    found = subprocess.run(
        [*git, "grep", "-l", "-F", MARK, source.rev, "--", FOLDER],
        check=True,
        capture_output=True,
    ).stdout.decode()
    names = sorted(line.split(":", 1)[1] for line in found.splitlines() if line)
    batch = subprocess.run(
        [*git, "cat-file", "--batch"],
        input="".join(f"{source.rev}:{n}\n" for n in names).encode(),
        check=True,
        capture_output=True,
    ).stdout
    pages: dict[str, str] = {}
    pos = 0
    for name in names:  # --batch answers "<oid> blob <size>\n<bytes>\n" in request order
        header_end = batch.index(b"\n", pos)
        size = int(batch[pos:header_end].split()[2])
        pages[name] = batch[header_end + 1 : header_end + 1 + size].decode("utf-8")
        pos = header_end + 1 + size + 1
    return pages


def build(
    source: Source, out: Path, max_queries: int = 1000, max_chars: int = MAX_QUERY_CHARS
) -> dict[str, object]:
    pages = read_pages(source)
    digest = hashlib.sha256()
    entries: dict[str, dict[str, str]] = {}
    stats: Counter[str] = Counter()
    for name, text in sorted(pages.items()):
        digest.update(name.encode() + b"\0" + hashlib.sha256(text.encode()).digest())
        entry = parse(text)
        if entry is None:
            stats["skipped_not_a_qa_page"] += 1
            continue
        if not entry["inquiry"] or not entry["answer"]:
            stats["skipped_empty_inquiry_or_answer"] += 1
            continue
        if entry["url"] in entries:
            stats["skipped_duplicate_url"] += 1
            continue
        entries[entry["url"]] = entry
    ordered = [entries[u] for u in sorted(entries)]
    corpus = [
        {"_id": f"nta-d-{_slug(e['url'])}", "title": e["title"], "text": e["answer"]}
        for e in ordered
    ]
    askable = [e for e in ordered if len(e["inquiry"]) <= max_chars]
    stats["inquiries_over_max_chars"] = len(ordered) - len(askable)
    n = len(askable)
    picked = sorted(
        {i * n // max_queries for i in range(max_queries)} if n > max_queries else set(range(n))
    )
    queries: list[dict[str, str]] = []
    qrels: dict[str, dict[str, int]] = {}
    for i in picked:
        e, slug = askable[i], _slug(askable[i]["url"])
        queries.append({"_id": f"nta-q-{slug}", "text": e["inquiry"]})
        qrels[f"nta-q-{slug}"] = {f"nta-d-{slug}": 1}
        stats["queries_in:" + (e["category"] or "unknown")] += 1
    if len({d["_id"] for d in corpus}) != len(corpus):
        raise ValueError("two pages map to one id")
    report = {
        **source_report(source, len(pages), digest.hexdigest()),
        "records": len(corpus),
        "queries": len(queries),
        "qrels": len(queries),
        "queries_with_answers": 0,
        "mean_record_chars": round(sum(len(d["text"]) for d in corpus) / len(corpus)),
        "mean_query_chars": round(sum(len(q["text"]) for q in queries) / len(queries)),
        "records_by_category": dict(Counter(e["category"] or "unknown" for e in ordered)),
        "urls": {f"nta-d-{_slug(e['url'])}": e["url"] for e in ordered},
        **dict(sorted(stats.items())),
    }
    write_beir(out, corpus, queries, qrels, {}, report)
    return report


def source_report(source: Source, pages_read: int, pages_sha256: str) -> dict[str, object]:
    """Where the pages came from and under which licence: the head of a set's stats.json."""
    return {
        "source": {
            "repository": REPOSITORY,
            "commit": source.commit(),
            "folder": FOLDER,
            "folder_tree": _tree(source),
            "pages_read": pages_read,
            "pages_sha256": pages_sha256,
            "original": "https://www.nta.go.jp/law/shitsugi/01.htm (国税庁 質疑応答事例)",
        },
        "licence": "国税庁ホームページ利用規約 (PDL 1.0, compatible with CC BY 4.0)",
    }


def _tree(source: Source) -> str:
    if source.git_dir is None:
        return "unknown"
    return (
        subprocess.run(
            ["git", f"--git-dir={source.git_dir}", "rev-parse", f"{source.rev}:{FOLDER}"],
            check=True,
            capture_output=True,
        )
        .stdout.decode()
        .strip()
    )


def main(argv: list[str]) -> None:
    parser = build_parser(__doc__, REPOSITORY, "nta-qa")
    parser.add_argument("--max-queries", type=int, default=1000)
    parser.add_argument("--max-query-chars", type=int, default=MAX_QUERY_CHARS)
    args = parser.parse_args(argv)
    report = build(Source(args.source, args.rev), args.out, args.max_queries, args.max_query_chars)
    print_report(report, ("source", "urls"))


if __name__ == "__main__":
    main(sys.argv[1:])

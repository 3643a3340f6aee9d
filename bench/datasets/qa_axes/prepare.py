"""Judgement files for the Q&A-axes comparison: a BEIR FAQ set as a question / answer collection.

    python bench/datasets/qa_axes/prepare.py nta-qa nta-topic      # sets of bench/basket.py
    .venv/bin/tansaku eval bench/data/nta-qa/qa-axes/judgements.yaml \
        --config bench/datasets/qa_axes/configs/*.toml --home /tmp/qa-home --keep --json

For each named set (its BEIR folder under ``bench/data`` or ``../shared/data``) this writes
``<set>/qa-axes/``: ``records.jsonl`` (the corpus, one object per entry: ``_id``, ``title`` =
the entry's question or heading, ``text`` = its answer, ``entry`` = both, title first) and
``judgements.yaml`` (every query of ``qrels/test.tsv`` with its relevant ids; ``source`` =
``records.jsonl``, ``config`` = ``bench/datasets/qa_axes/collection.toml``). The collection
config maps the three keys to the fields ``question``, ``answer`` and ``entry`` and embeds all
three, so each config of ``configs/`` can weigh any field on any leg. ``entry`` stands for the
record as a plain BEIR ingest indexes it (title + text); the file is named ``records.jsonl``
because a file called ``corpus.jsonl`` is read as BEIR, whose loader ignores field mappings.
The folder gets a ``.gitignore`` of ``*``: the built data stays out of commits.

``--layout title`` writes ``<set>/title-axis/`` instead, whose collection
(``collection-title.toml``) embeds only ``question`` (the record's title, whatever it holds: an
article name, a FAQ heading, a statute reference) and ``entry``: for a dense leg over the title
beside the default's three over the whole record, on every set of the basket.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT))

from bench.basket import SETS, folder  # noqa: E402

HERE = Path(__file__).resolve().parent
LAYOUTS = {
    # folder under bench/data/<set>/, collection config
    "qa": ("qa-axes", HERE / "collection.toml"),
    "title": ("title-axis", HERE / "collection-title.toml"),
}


def _quote(text: str) -> str:
    """A YAML double-quoted scalar (JSON strings are valid YAML)."""
    return json.dumps(text, ensure_ascii=False)


def prepare(beir: Path, out: Path, collection: Path = LAYOUTS["qa"][1]) -> tuple[int, int]:
    """Write ``records.jsonl`` and ``judgements.yaml`` for the BEIR folder ``beir``; return
    (records, queries)."""
    out.mkdir(parents=True, exist_ok=True)
    (out / ".gitignore").write_text("# built by bench/datasets/qa_axes/prepare.py\n*\n")
    n_records = 0
    with (
        (beir / "corpus.jsonl").open(encoding="utf-8") as src,
        (out / "records.jsonl").open("w", encoding="utf-8", newline="\n") as dst,
    ):
        for line in src:
            if not line.strip():
                continue
            d = json.loads(line)
            title, text = str(d.get("title") or ""), str(d.get("text") or "")
            row = {"_id": d["_id"], "title": title, "text": text, "entry": f"{title}\n{text}"}
            dst.write(json.dumps(row, ensure_ascii=False) + "\n")
            n_records += 1
    qrels: dict[str, dict[str, int]] = {}
    with (beir / "qrels" / "test.tsv").open(encoding="utf-8") as f:
        next(f)
        for line in f:
            qid, did, score = line.rstrip("\n").split("\t")[:3]
            if int(float(score)) > 0:
                qrels.setdefault(qid, {})[did] = int(float(score))
    lines = [
        f"name: {beir.name}-{out.name}",
        "source: records.jsonl",
        f"config: {_quote(os.path.relpath(collection, out))}",
        "queries:",
    ]
    n_queries = 0
    with (beir / "queries.jsonl").open(encoding="utf-8") as f:
        for line in f:
            if not line.strip():
                continue
            q = json.loads(line)
            rel = qrels.get(str(q["_id"]))
            if not rel:
                continue
            ids = ", ".join(_quote(d) for d in sorted(rel))
            lines.append(f"  - query: {_quote(str(q['text']))}")
            lines.append(f"    relevant: [{ids}]")
            n_queries += 1
    (out / "judgements.yaml").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return n_records, n_queries


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("sets", nargs="+", help="names of bench/basket.py sets (nta-qa…)")
    parser.add_argument(
        "--layout",
        choices=sorted(LAYOUTS),
        default="qa",
        help="qa: question, answer and entry embedded (qa-axes/); title: the title and the "
        "entry only (title-axis/)",
    )
    args = parser.parse_args(argv)
    sub, collection = LAYOUTS[args.layout]
    known = {s.name: s for s in SETS}
    for name in args.sets:
        if name not in known:
            raise SystemExit(f"unknown set {name}; known: {sorted(known)}")
        path = folder(known[name])
        if path is None:
            raise SystemExit(f"set {name} is not built: {known[name].build}")
        out = ROOT / "bench" / "data" / name / sub
        records, queries = prepare(path, out, collection)
        print(f"{name}: {records} records, {queries} queries -> {out / 'judgements.yaml'}")


if __name__ == "__main__":
    main(sys.argv[1:])

"""The answer benchmark basket: public question sets of different kinds, in BEIR layout.

    from bench.basket import load_sets
    for s in load_sets():                  # every set whose folder is there
        print(s.name, s.kind, len(s.queries), s.licence)
    load_sets(["niilc-qa"])                # named sets; a missing one raises with how to build it
    load_sets(retrieval=True)              # also the retrieval-only sets (keywords, paraphrases)

Each set is a BEIR folder: ``corpus.jsonl`` (``_id``, ``title``, ``text``), ``queries.jsonl``
(``_id``, ``text``), ``qrels/test.tsv`` and, where the source has short gold answers,
``answers.jsonl`` (``_id``, ``answers``). ``jsquad-ir`` is read from ``../shared/data`` (never
written); the others are built from their public source by ``bench/datasets/<module>.py`` into
``bench/data/<name>/`` (or found in ``../shared/data/<name>/`` when published there). Queries
keep the file's order; only queries with a positive judgement are kept (BEIR's rule).

Every set has a ``domain`` (what its questions are about: ``wikipedia``, ``law``…): questions of
one set are off-topic for the sets of another domain, not for those of the same one (a Wikipedia
question may be answered by another Wikipedia corpus). A queries-only set (``corpus=False``,
kind ``offtopic``) is a pool of questions no set of the basket answers: only ``queries.jsonl``,
no corpus, no judgements; it is loaded with ``has_corpus`` false and all its queries.

A retrieval-only set (``questions=False``: keyword queries, paraphrased descriptions) has
judgements but no questions to answer: the answer benchmarks (``answer_basket.py``,
``fit_answerability.py``) neither ask nor draw off-topic questions from it, so
``load_sets()`` leaves it out unless it is named or ``retrieval=True``
(``retrieval_basket.py``).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared" / "data"
LOCAL = ROOT / "bench" / "data"


@dataclass(frozen=True)
class SetInfo:
    """Where a set comes from, before it is loaded."""

    name: str
    kind: str
    licence: str
    build: str
    """How to build it when its folder is missing."""
    domain: str
    """What its questions are about; sets of one domain are not each other's negatives."""
    corpus: bool = True
    """False for a queries-only pool (off-topic questions: no corpus, no judgements)."""
    questions: bool = True
    """False for a retrieval-only set: its queries are not questions to answer."""


SETS: tuple[SetInfo, ...] = (
    SetInfo(
        name="jsquad-ir",
        kind="wikipedia-qa",
        licence="CC BY-SA 4.0 (JGLUE JSQuAD v1.3)",
        build="../shared/data/jsquad-ir is part of the shared data (read-only)",
        domain="wikipedia",
    ),
    SetInfo(
        name="niilc-qa",
        kind="encyclopedia-qa",
        licence="CC BY-SA 4.0 (NIILC-ECQA2015, mynlp/niilc-qa)",
        build="python bench/datasets/niilc_qa.py <checkout of mynlp/niilc-qa>",
        domain="wikipedia",
    ),
    SetInfo(
        name="lawqa-jp",
        kind="legal-qa",
        licence="PDL 1.0 (digital-go-jp/lawqa_jp)",
        build="python bench/datasets/lawqa_jp.py <checkout of digital-go-jp/lawqa_jp>",
        domain="law",
    ),
    SetInfo(
        name="nta-qa",
        kind="faq",
        licence="PDL 1.0 (National Tax Agency 質疑応答事例, copy in Momonganz/dify_tax_mammoth)",
        build="python bench/datasets/nta_qa.py <git directory of Momonganz/dify_tax_mammoth>",
        domain="law",
    ),
    SetInfo(
        name="nta-topic",
        kind="faq-topic",
        licence="PDL 1.0 (National Tax Agency 質疑応答事例, copy in Momonganz/dify_tax_mammoth:"
        " the entries' topic headings against question + answer)",
        build="python bench/datasets/nta_topic.py <git directory of Momonganz/dify_tax_mammoth>",
        domain="law",
        questions=False,
    ),
    SetInfo(
        name="niilc-kw",
        kind="keyword",
        licence="CC BY-SA 4.0 (NIILC-ECQA2015, mynlp/niilc-qa: the annotators' topic + attribute"
        " keywords of each question over niilc-qa's corpus)",
        build="python bench/datasets/niilc_kw.py <checkout or git directory of mynlp/niilc-qa>",
        domain="wikipedia",
        questions=False,
    ),
    SetInfo(
        name="jnli-para",
        kind="paraphrase",
        licence="CC BY-SA 4.0 (JGLUE JNLI v1.3 valid + test, yahoojapan/JGLUE: entailed captions"
        " in other words against YJ Captions sentences)",
        build="python bench/datasets/jnli_para.py <checkout or git directory of yahoojapan/JGLUE>",
        domain="captions",
        questions=False,
    ),
    SetInfo(
        name="jcqa-offtopic",
        kind="offtopic",
        licence="CC BY-SA 4.0 (JGLUE JCommonsenseQA v1.3, yahoojapan/JGLUE)",
        build="python bench/datasets/jcqa_offtopic.py <checkout of yahoojapan/JGLUE>",
        domain="commonsense",
        corpus=False,
    ),
)


@dataclass(frozen=True)
class QASet:
    """One question set: its queries, judgements and gold answers (the corpus stays on disk)."""

    name: str
    kind: str
    path: Path
    """The BEIR folder (``corpus.jsonl`` is ingested from here)."""
    queries: list[dict[str, str]] = field(repr=False)
    qrels: dict[str, dict[str, int]] = field(repr=False)
    answers: dict[str, list[str]] = field(repr=False)
    """Short gold answer strings per query; empty when the gold is only the record."""
    licence: str = ""
    domain: str = ""
    has_corpus: bool = True
    """False for a queries-only pool: no corpus to ingest, no judgements, every query kept."""


def _jsonl(path: Path) -> list[dict[str, Any]]:
    with path.open(encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def _qrels(path: Path) -> dict[str, dict[str, int]]:
    out: dict[str, dict[str, int]] = {}
    with path.open(encoding="utf-8") as f:
        next(f)  # header
        for line in f:
            if not line.strip():
                continue
            qid, did, score = line.rstrip("\n").split("\t")[:3]
            out.setdefault(qid, {})[did] = int(float(score))
    return out


def folder(info: SetInfo) -> Path | None:
    """The set's BEIR folder: the shared data first, then ``bench/data`` (a queries-only set
    needs only ``queries.jsonl``)."""
    for base in (SHARED, LOCAL):
        path = base / info.name
        if (path / "queries.jsonl").is_file() and (
            not info.corpus or (path / "corpus.jsonl").is_file()
        ):
            return path
    return None


def load(info: SetInfo, path: Path) -> QASet:
    if not info.corpus:
        return QASet(
            name=info.name,
            kind=info.kind,
            path=path,
            queries=[
                {"_id": str(q["_id"]), "text": str(q["text"])}
                for q in _jsonl(path / "queries.jsonl")
            ],
            qrels={},
            answers={},
            licence=info.licence,
            domain=info.domain,
            has_corpus=False,
        )
    qrels_dir = path / "qrels"
    qrels_file = next(
        (qrels_dir / n for n in ("test.tsv", "dev.tsv") if (qrels_dir / n).is_file()), None
    )
    if qrels_file is None:
        raise FileNotFoundError(f"{qrels_dir}: test.tsv がありません")
    qrels = {q: {d: g for d, g in rel.items() if g > 0} for q, rel in _qrels(qrels_file).items()}
    queries = [
        {"_id": str(q["_id"]), "text": str(q["text"])}
        for q in _jsonl(path / "queries.jsonl")
        if qrels.get(str(q["_id"]))
    ]
    answers_file = path / "answers.jsonl"
    answers = (
        {str(a["_id"]): [str(x) for x in a["answers"] if x] for a in _jsonl(answers_file)}
        if answers_file.is_file()
        else {}
    )
    return QASet(
        name=info.name,
        kind=info.kind,
        path=path,
        queries=queries,
        qrels={q["_id"]: qrels[q["_id"]] for q in queries},
        answers={q: a for q, a in answers.items() if a},
        licence=info.licence,
        domain=info.domain,
    )


def load_sets(names: Sequence[str] | None = None, *, retrieval: bool = False) -> list[QASet]:
    """The named sets in basket order (all of them when ``names`` is None, skipping those
    not built yet and, unless ``retrieval``, the retrieval-only ones), queries-only pools
    included (``has_corpus`` false); an unknown or missing named set raises with how to get
    it."""
    known = {s.name: s for s in SETS}
    if names is None:
        return [
            load(s, p) for s in SETS if (retrieval or s.questions) and (p := folder(s)) is not None
        ]
    unknown = [n for n in names if n not in known]
    if unknown:
        raise KeyError(f"unknown set(s) {unknown}; known: {sorted(known)}")
    out = []
    for info in (s for s in SETS if s.name in set(names)):
        path = folder(info)
        if path is None:
            raise FileNotFoundError(f"set {info.name} is not built: {info.build}")
        out.append(load(info, path))
    return out


__all__ = ["SETS", "QASet", "SetInfo", "folder", "load", "load_sets"]

"""Answers over the demo workspace: natural questions per design, one verdict each.

    python bench/answer_demo.py                 # every design → bench/results/answer_demo.md
    python bench/answer_demo.py --design 001    # one question file, printed (repeatable)
    python bench/answer_demo.py --json          # machine-readable, on stdout
    python bench/answer_demo.py --check         # validate the question files, answer nothing

The questions (``bench/questions/design_000.yaml`` … ``design_004.yaml``) were written by hand
from the data before any answer was looked at. Each names its scope — the collections and tables
a user would tick — and what a right answer does:

- ``source``: cites one of ``sources`` (doc ids of the collections, row ids of the tables);
  with ``first: true`` the first citation must be one of them;
- ``contains``: every string appears in the answer (NFKC, spaces and commas ignored; an item
  may be a list of alternatives);
- ``decline``: the answer says nothing was found.

The demo workspace is built for the base day 2025-12-11 in its own home (``tansaku demo build
--now 2025-12-11 --home .tansaku-bench-demo``, run here when missing), plus the collections a
question file uploads (``upload:``, design 003's FAQ). Every question is answered by the offline
engine over its scope with now = 2025-12-11 09:00 Asia/Tokyo; the tables in the scope are the
only tables the tools can read. Verdicts are deterministic; latency is measured per answer
(after one warm-up answer per scope).
"""

from __future__ import annotations

import argparse
import csv
import inspect
import json
import statistics
import subprocess
import sys
import time
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from datetime import date, datetime
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import yaml

import tansaku
from tansaku.agent.offline import answer_offline
from tansaku.demo.days import recorded_today
from tansaku.demo.paths import examples_dir
from tansaku.tools import toolset
from tansaku.workspace import Workspace

ROOT = Path(__file__).resolve().parents[1]
QUESTIONS = ROOT / "bench" / "questions"
RESULTS = ROOT / "bench" / "results" / "answer_demo.md"
HOME = ROOT / ".tansaku-bench-demo"
BASE_DAY = date(2025, 12, 11)
NOW = datetime(2025, 12, 11, 9, 0, tzinfo=ZoneInfo("Asia/Tokyo"))
ROLES = ("reports", "manuals", "notes", "cards")
TABLES = ("stores", "events", "daily_reports")
EXPECTS = ("source", "contains", "decline")
DESIGNS = {
    "000": "restaurant operations: daily reports, bulletin board, manuals, statistics",
    "001": "lab notes",
    "002": "store and event tables",
    "003": "generic Q&A over the ticked collections (manuals, notes, an uploaded FAQ)",
    "004": "card effects",
}
# what an answer without sources says when it found nothing
DECLINE_PHRASES = ("見つかりませんでした", "見つかりません", "お答えできません", "答えられません")
WARM_UP = "ウォームアップ"
PREVIEW = 60


# --- questions -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Question:
    id: str
    design: str
    question: str
    scope: tuple[str, ...]
    expect: str
    sources: tuple[str, ...] = ()
    first: bool = False
    contains: tuple[tuple[str, ...], ...] = ()
    origin: str = ""
    note: str = ""

    @property
    def collections(self) -> tuple[str, ...]:
        return tuple(s for s in self.scope if s not in TABLES)

    @property
    def tables(self) -> frozenset[str]:
        return frozenset(s for s in self.scope if s in TABLES)


@dataclass(frozen=True)
class Upload:
    """A collection a question file brings along (JSON Lines entries with an ``id``)."""

    collection: str
    description: str
    entries: tuple[dict[str, str], ...]


@dataclass(frozen=True)
class QuestionFile:
    design: str
    path: Path
    questions: tuple[Question, ...]
    upload: Upload | None = None


class QuestionError(ValueError):
    pass


def _strings(value: Any, where: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not value:
        raise QuestionError(f"{where}: a non-empty list is needed")
    return tuple(str(v) for v in value)


def _question(raw: dict[str, Any], design: str, where: str) -> Question:
    for key in ("id", "design", "question", "scope", "expect"):
        if key not in raw:
            raise QuestionError(f"{where}: no {key}")
    qid = str(raw["id"])
    where = f"{where} {qid}"
    if str(raw["design"]) != design:
        raise QuestionError(f"{where}: design {raw['design']} in the file of design {design}")
    expect = str(raw["expect"])
    if expect not in EXPECTS:
        raise QuestionError(f"{where}: expect {expect!r} is none of {', '.join(EXPECTS)}")
    sources = _strings(raw["sources"], f"{where} sources") if expect == "source" else ()
    contains: tuple[tuple[str, ...], ...] = ()
    if expect == "contains":
        items = raw.get("contains")
        if not isinstance(items, list) or not items:
            raise QuestionError(f"{where}: contains needs a non-empty list")
        contains = tuple(
            _strings(item, f"{where} contains") if isinstance(item, list) else (str(item),)
            for item in items
        )
    return Question(
        id=qid,
        design=design,
        question=str(raw["question"]),
        scope=_strings(raw["scope"], f"{where} scope"),
        expect=expect,
        sources=sources,
        first=bool(raw.get("first", False)),
        contains=contains,
        origin=str(raw.get("origin", "")),
        note=str(raw.get("note", "")),
    )


def load_file(path: Path) -> QuestionFile:
    raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    design = str(raw["design"])
    questions = tuple(
        _question(q, design, path.name) for q in raw.get("questions") or () if isinstance(q, dict)
    )
    upload = None
    if up := raw.get("upload"):
        entries = tuple({k: str(v) for k, v in e.items()} for e in up["entries"])
        upload = Upload(str(up["collection"]), str(up.get("description", "")), entries)
    return QuestionFile(design, path, questions, upload)


def load_files(designs: Sequence[str] | None = None) -> list[QuestionFile]:
    paths = sorted(QUESTIONS.glob("design_*.yaml"))
    files = [load_file(p) for p in paths]
    if designs:
        unknown = sorted(set(designs) - {f.design for f in files})
        if unknown:
            raise QuestionError(f"no question file for design {', '.join(unknown)}")
        files = [f for f in files if f.design in designs]
    seen: set[str] = set()
    for f in files:
        for q in f.questions:
            if q.id in seen:
                raise QuestionError(f"{f.path.name}: id {q.id} is used twice")
            seen.add(q.id)
    return files


# --- what the workspace holds --------------------------------------------------------------------


def _jsonl_ids(path: Path) -> list[str]:
    with path.open(encoding="utf-8") as f:
        return [str(json.loads(line)["id"]) for line in f if line.strip()]


def _csv_ids(path: Path, key: str) -> set[str]:
    with path.open(encoding="utf-8", newline="") as f:
        return {row[key] for row in csv.DictReader(f)}


def known_ids(home: Path, files: Iterable[QuestionFile]) -> dict[str, set[str]]:
    """The doc ids of every collection and the row ids of every table, read from the data the
    demo was built from (the reports as generated for the base day)."""
    ex = examples_dir()
    reports = _jsonl_ids(home / "demo" / "reports.jsonl")
    ids = {
        "reports": set(reports),
        "daily_reports": {i for i in reports if i.startswith("DR-")},
        "manuals": {p.stem for p in (ex / "manuals").glob("*.md")},
        "notes": {p.stem for p in (ex / "notes").glob("*.md")},
        "cards": set(_jsonl_ids(ex / "cards" / "cards.jsonl")),
        "stores": _csv_ids(ex / "tables" / "stores.csv", "store_id"),
        "events": _csv_ids(ex / "tables" / "events.csv", "event_id"),
    }
    for f in files:
        if f.upload is not None:
            ids[f.upload.collection] = {e["id"] for e in f.upload.entries}
    return ids


def check(files: Sequence[QuestionFile], ids: dict[str, set[str]]) -> list[str]:
    """Problems of the question files: a scope naming nothing known, a source that is in none
    of the question's collections or tables."""
    problems: list[str] = []
    for f in files:
        for q in f.questions:
            unknown = [s for s in q.scope if s not in ids]
            if unknown:
                problems.append(f"{q.id}: unknown scope {', '.join(unknown)}")
                continue
            pool = set().union(*(ids[s] for s in q.scope))
            missing = [s for s in q.sources if s not in pool]
            if missing:
                problems.append(f"{q.id}: not in its scope: {', '.join(missing)}")
    return problems


# --- the workspace -------------------------------------------------------------------------------


def _tansaku_command() -> list[str]:
    script = Path(sys.executable).with_name("tansaku")
    return [str(script)] if script.exists() else [sys.executable, "-m", "tansaku.cli.main"]


def ensure_demo(home: Path) -> None:
    """Build the demo for the base day when the home has none (or one of another day)."""
    if recorded_today(home) == BASE_DAY and all(
        (home / "collections" / name).exists() for name in ROLES
    ):
        return
    cmd = [*_tansaku_command(), "demo", "build", "--now", BASE_DAY.isoformat()]
    print(f"building the demo workspace: {' '.join(cmd)} --home {home}", file=sys.stderr)
    subprocess.run([*cmd, "--home", str(home)], check=True)


def _upload_config(upload: Upload) -> str:
    return "\n".join(
        [
            f'name = "{upload.collection}"',
            f'description = "{upload.description}"',
            'source_type = "faq"',
            "",
            *(
                f'[[axes]]\nname = "{name}"\nmode = "{mode}"\nweight = {weight}\n'
                for name, mode, weight in (
                    ("keyword", "bm25", 0.34),
                    ("semantic", "dense", 0.33),
                    ("sentence", "bigram", 0.33),
                )
            ),
            "[search]",
            "top_k = 5",
            "",
            "[ingest.json]",
            'id_key = "id"',
            'title_key = "question"',
            'fields = { qa_question = "question", qa_answer = "answer" }',
            'metadata_keys = ["category", "section"]',
            "",
        ]
    )


def ensure_uploads(home: Path, files: Iterable[QuestionFile]) -> None:
    """Bring the uploaded collections in line with their question files (sync: unchanged
    entries are neither embedded nor rewritten)."""
    uploads = [f.upload for f in files if f.upload is not None]
    if not uploads:
        return
    with tansaku.connect(home, create=False) as ts:
        for up in uploads:
            folder = home / "bench" / up.collection
            folder.mkdir(parents=True, exist_ok=True)
            data = folder / f"{up.collection}.jsonl"
            lines = [json.dumps(e, ensure_ascii=False) for e in up.entries]
            text = "\n".join(lines) + "\n"
            if not data.is_file() or data.read_text(encoding="utf-8") != text:
                data.write_text(text, encoding="utf-8")
            config = home / "bench" / f"{up.collection}.toml"
            config.write_text(_upload_config(up), encoding="utf-8")
            ts.ingest([data], collection=up.collection, config=config, sync=True)


def _accepts_names() -> bool:
    """Whether ``toolset(collections=...)`` takes a plain list of collection names (else it
    takes role → name, and every name here is its own role)."""
    annotation = str(inspect.signature(toolset).parameters["collections"].annotation)
    return any(word in annotation for word in ("Sequence", "Iterable", "Collection[", "list["))


def collections_arg(names: Sequence[str], *, as_list: bool) -> Any:
    return list(names) if as_list else {name: name for name in names}


@dataclass
class ScopedTables:
    """One table database per set of ticked tables, holding only those tables (and the SQL
    tools that read only them)."""

    home: Path
    _open: dict[frozenset[str], Any] = field(default_factory=dict)

    def get(self, names: frozenset[str]) -> Any:
        if not names:
            return None
        if names not in self._open:
            from tansaku.tables import TableDatabase, load_tables_config

            config = load_tables_config(Workspace.from_env(self.home).tables_file)
            config = replace(
                config,
                tables=tuple(t for t in config.tables if t.name in names),
                tools=tuple(t for t in config.tools if set(t.tables) <= names),
            )
            self._open[names] = TableDatabase(config)
        return self._open[names]

    def close(self) -> None:
        for db in self._open.values():
            db.close()
        self._open.clear()


# --- verdicts ------------------------------------------------------------------------------------


def norm_text(text: str) -> str:
    return "".join(unicodedata.normalize("NFKC", text).split()).replace(",", "")


def _norm_id(doc_id: str) -> str:
    return unicodedata.normalize("NFKC", str(doc_id)).strip()


def _matches(cited: str, wanted: set[str]) -> bool:
    """A citation names an expected source: the same id, or the id as one ``:`` part of it
    (``hygiene:body:4``, ``stores:STR-0008``)."""
    return cited in wanted or any(part in wanted for part in cited.split(":"))


def declined(answer: Any) -> bool:
    if answer.unanswered:
        return True
    return not answer.citations and any(p in answer.text for p in DECLINE_PHRASES)


def verdict(q: Question, answer: Any) -> tuple[bool, str]:
    """``(right, reason)``: the reason says why a wrong answer is wrong."""
    said_no = declined(answer)
    if q.expect == "decline":
        return (True, "") if said_no else (False, "answered where a decline was expected")
    if said_no:
        return False, "declined where an answer was expected"
    if q.expect == "source":
        wanted = {_norm_id(s) for s in q.sources}
        cited = [_norm_id(c.doc_id) for c in answer.citations]
        if not cited:
            return False, "no citation"
        if q.first and _matches(cited[0], wanted):
            return True, ""
        if any(_matches(c, wanted) for c in cited):
            return (False, "expected source cited, not first") if q.first else (True, "")
        return False, "expected source not cited"
    text = norm_text(answer.text)
    missing = [alts[0] for alts in q.contains if not any(norm_text(a) in text for a in alts)]
    if missing:
        return False, "missing in the answer: " + ", ".join(missing)
    return True, ""


# --- the run -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Outcome:
    question: Question
    right: bool
    reason: str
    answered: bool
    citations: tuple[str, ...]
    answer: str
    seconds: float

    def to_dict(self) -> dict[str, Any]:
        q = self.question
        out: dict[str, Any] = {
            "id": q.id,
            "design": q.design,
            "question": q.question,
            "scope": list(q.scope),
            "expect": q.expect,
        }
        if q.sources:
            out["sources"] = list(q.sources)
            out["first"] = q.first
        if q.contains:
            out["contains"] = [list(alts) for alts in q.contains]
        if q.origin:
            out["origin"] = q.origin
        out.update(
            verdict="right" if self.right else "wrong",
            reason=self.reason,
            answered=self.answered,
            citations=list(self.citations),
            answer=self.answer,
            ms=round(self.seconds * 1000, 1),
        )
        return out


def answer_all(home: Path, files: Sequence[QuestionFile]) -> list[Outcome]:
    questions = [q for f in files for q in f.questions]
    as_list = _accepts_names()
    tables = ScopedTables(home)
    outcomes: list[Outcome] = []
    try:
        with tansaku.connect(home, create=False) as ts:

            def tools_for(q: Question) -> Any:
                return toolset(
                    ts,
                    collections=collections_arg(q.collections, as_list=as_list),
                    now=NOW,
                    tables=tables.get(q.tables),
                )

            warmed: set[tuple[str, ...]] = set()
            for q in questions:
                if q.scope not in warmed:  # load the embedder, open shards and table workers
                    warmed.add(q.scope)
                    try:
                        answer_offline(WARM_UP, tools_for(q))
                    except Exception as exc:  # the question itself reports it
                        print(f"warm-up over {list(q.scope)}: {exc!r}", file=sys.stderr)
                start = time.perf_counter()
                try:
                    answer = answer_offline(q.question, tools_for(q))
                except Exception as exc:
                    elapsed = time.perf_counter() - start
                    reason = f"error: {type(exc).__name__}: {exc}"
                    outcomes.append(Outcome(q, False, reason, False, (), "", elapsed))
                    continue
                elapsed = time.perf_counter() - start
                right, reason = verdict(q, answer)
                outcomes.append(
                    Outcome(
                        q,
                        right,
                        reason,
                        not declined(answer),
                        tuple(c.doc_id for c in answer.citations),
                        answer.text,
                        elapsed,
                    )
                )
    finally:
        tables.close()
    return outcomes


# --- the report ----------------------------------------------------------------------------------


def _share(part: int, whole: int) -> float | None:
    return round(part / whole, 3) if whole else None


def summarize(outcomes: Sequence[Outcome]) -> dict[str, Any]:
    n = len(outcomes)
    right = sum(o.right for o in outcomes)
    expect_decline = [o for o in outcomes if o.question.expect == "decline"]
    times = [o.seconds for o in outcomes]
    by_expect = {
        kind: {"n": len(sel), "right": sum(o.right for o in sel)}
        for kind in EXPECTS
        if (sel := [o for o in outcomes if o.question.expect == kind])
    }
    return {
        "n": n,
        "right": right,
        "wrong": n - right,
        "wrong_share": _share(n - right, n),
        "answered_share": _share(sum(o.answered for o in outcomes), n),
        "declined_when_expected_share": _share(
            sum(not o.answered for o in expect_decline), len(expect_decline)
        ),
        "p50_ms": round(statistics.median(times) * 1000, 1) if times else None,
        "by_expect": by_expect,
    }


def _commit() -> str:
    try:
        out = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"],
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=True,
        )
        return out.stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def report(outcomes: Sequence[Outcome]) -> dict[str, Any]:
    designs = sorted({o.question.design for o in outcomes})
    return {
        "base_day": BASE_DAY.isoformat(),
        "now": NOW.isoformat(),
        "commit": _commit(),
        "summary": {
            **{d: summarize([o for o in outcomes if o.question.design == d]) for d in designs},
            "all": summarize(outcomes),
        },
        "questions": [o.to_dict() for o in outcomes],
    }


def _cell(text: str) -> str:
    return " ".join(str(text).split()).replace("|", "\\|")


def _pct(value: float | None) -> str:
    return "–" if value is None else f"{value * 100:.1f}%"


def _expected(q: Question) -> str:
    if q.expect == "decline":
        return "decline"
    if q.expect == "contains":
        return "contains " + ", ".join(" / ".join(alts) for alts in q.contains)
    shown = ", ".join(q.sources[:3]) + (f" (+{len(q.sources) - 3})" if len(q.sources) > 3 else "")
    return f"{'first' if q.first else 'any'}: {shown}"


def _got(o: Outcome) -> str:
    first = o.citations[0] if o.citations else "(no citation)"
    text = " ".join(o.answer.split())
    return f"{first} — {text[:PREVIEW]}{'…' if len(text) > PREVIEW else ''}"


def markdown(outcomes: Sequence[Outcome], data: dict[str, Any]) -> str:
    summary = data["summary"]
    lines = [
        "# Answers over the demo workspace (offline engine)",
        "",
        "Generated by `python bench/answer_demo.py` (do not edit by hand). Questions: "
        "`bench/questions/design_000.yaml` … `design_004.yaml`, written before looking at any "
        "answer. Workspace: `tansaku demo build --now 2025-12-11 --home .tansaku-bench-demo` plus "
        "the FAQ collection of design 003. Each question is answered by `answer_offline` over "
        f"its scope at {NOW.isoformat()} (Asia/Tokyo). Working tree at {data['commit']}.",
        "",
        "Right: `source` — an expected doc/row id is cited (first, when `first`); `contains` — "
        "every string is in the answer; `decline` — the answer says nothing was found. "
        "Answered share: answers that did not decline; declined when expected: share of the "
        "`decline` questions that declined. Latency: wall time of one `answer_offline` call, "
        "after one warm-up answer per scope; the workspace caches query vectors, so every run "
        "after the first over this home measures the answers without embedding the questions.",
        "",
        "| design | n | right | wrong | wrong share | answered share | declined when expected "
        "| p50 latency |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for key, s in summary.items():
        label = f"{key} {DESIGNS.get(key, '')}".strip() if key != "all" else "**all**"
        lines.append(
            f"| {label} | {s['n']} | {s['right']} | {s['wrong']} | {_pct(s['wrong_share'])} | "
            f"{_pct(s['answered_share'])} | {_pct(s['declined_when_expected_share'])} | "
            f"{s['p50_ms']} ms |"
        )
    lines += ["", "| expected | n | right |", "|---|---:|---:|"]
    for kind, s in summary["all"]["by_expect"].items():
        lines.append(f"| {kind} | {s['n']} | {s['right']} |")
    for design in [k for k in summary if k != "all"]:
        lines += [
            "",
            f"## {design} — {DESIGNS.get(design, '')}",
            "",
            "| id | question | scope | expected | got (first citation — answer) | verdict |",
            "|---|---|---|---|---|---|",
        ]
        for o in outcomes:
            q = o.question
            if q.design != design:
                continue
            tag = " (design)" if q.origin == "design" else ""
            verdict_text = "right" if o.right else f"**wrong**: {o.reason}"
            lines.append(
                f"| {q.id}{tag} | {_cell(q.question)} | {_cell(', '.join(q.scope))} | "
                f"{_cell(_expected(q))} | {_cell(_got(o))} | {_cell(verdict_text)} |"
            )
    return "\n".join(lines) + "\n"


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--home", type=Path, default=HOME)
    parser.add_argument("--design", action="append", help="000 … 004 (repeatable)")
    parser.add_argument("--json", action="store_true", help="JSON on stdout")
    parser.add_argument(
        "--out", type=Path, help=f"Markdown file (default {RESULTS.name} when every design is run)"
    )
    parser.add_argument("--check", action="store_true", help="validate the questions only")
    args = parser.parse_args(argv)
    home = args.home.resolve()
    try:
        files = load_files(args.design)
    except QuestionError as exc:
        print(f"questions: {exc}", file=sys.stderr)
        return 2
    ensure_demo(home)
    problems = check(files, known_ids(home, files))
    if problems:
        print("questions:\n  " + "\n  ".join(problems), file=sys.stderr)
        return 2
    if args.check:
        n = sum(len(f.questions) for f in files)
        print(f"{n} questions in {len(files)} files: every source is in its scope")
        return 0
    ensure_uploads(home, files)
    outcomes = answer_all(home, files)
    data = report(outcomes)
    text = markdown(outcomes, data)
    out = args.out or (None if args.design else RESULTS)
    if out is not None:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(text, encoding="utf-8")
    if args.json:
        sys.stdout.write(json.dumps(data, ensure_ascii=False, indent=2) + "\n")
    else:
        sys.stdout.write(text.split("\n## ", 1)[0] if out is not None else text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))

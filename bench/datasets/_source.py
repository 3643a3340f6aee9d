"""Reading a fetched source repository and writing a BEIR folder (shared by the set builders).

A source is given as a path: either a checkout (a folder with the files) or a git directory
(``repo/.git`` or a bare ``repo``), read at ``HEAD`` (or ``--rev``) with ``git show``, so a
mirror needs no work tree.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import subprocess
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any


class Source:
    """Files of one repository revision, from a checkout or a git directory."""

    def __init__(self, path: Path, rev: str = "HEAD") -> None:
        self.path = path
        self.rev = rev
        self.git_dir = _git_dir(path)

    def read(self, name: str) -> bytes:
        if self.git_dir is None:
            return (self.path / name).read_bytes()
        return _git(self.git_dir, "show", f"{self.rev}:{name}")

    def commit(self) -> str:
        """The commit read (``unknown`` for a plain folder that is not a git checkout)."""
        if self.git_dir is None:
            return "unknown"
        return _git(self.git_dir, "rev-parse", self.rev).decode().strip()

    def blob(self, name: str) -> str:
        """The git blob id of a file (``git hash-object`` of its bytes)."""
        data = self.read(name)
        return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def _git_dir(path: Path) -> Path | None:
    for candidate in (path / ".git", path):
        if (candidate / "HEAD").is_file() and (candidate / "objects").is_dir():
            return candidate
    return None


def _git(git_dir: Path, *args: str) -> bytes:
    return subprocess.run(
        ["git", f"--git-dir={git_dir}", *args], check=True, capture_output=True
    ).stdout


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _jsonl(path: Path, rows: Iterable[Mapping[str, Any]]) -> None:
    with path.open("w", encoding="utf-8", newline="\n") as f:
        for row in rows:
            f.write(json.dumps(row, ensure_ascii=False) + "\n")


def write_beir(
    out: Path,
    corpus: list[dict[str, str]],
    queries: list[dict[str, str]],
    qrels: Mapping[str, Mapping[str, int]],
    answers: Mapping[str, list[str]],
    stats: Mapping[str, Any],
) -> None:
    """Write ``corpus.jsonl``, ``queries.jsonl``, ``qrels/test.tsv``, ``answers.jsonl`` and
    ``stats.json`` into ``out``."""
    (out / "qrels").mkdir(parents=True, exist_ok=True)
    _jsonl(out / "corpus.jsonl", corpus)
    _jsonl(out / "queries.jsonl", queries)
    _jsonl(
        out / "answers.jsonl",
        ({"_id": q["_id"], "answers": answers[q["_id"]]} for q in queries if answers.get(q["_id"])),
    )
    with (out / "qrels" / "test.tsv").open("w", encoding="utf-8", newline="\n") as f:
        f.write("query-id\tcorpus-id\tscore\n")
        for q in queries:
            for doc, grade in sorted(qrels[q["_id"]].items()):
                f.write(f"{q['_id']}\t{doc}\t{grade}\n")
    (out / "stats.json").write_text(
        json.dumps(stats, ensure_ascii=False, indent=2) + "\n", encoding="utf-8"
    )


DATA = Path(__file__).resolve().parents[2] / "bench" / "data"


def build_parser(doc: str, repository: str, name: str) -> argparse.ArgumentParser:
    """The options every build script takes: the source checkout, ``--rev`` and ``--out``
    (``bench/data/<name>``)."""
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    parser.add_argument("source", type=Path, help=f"checkout or git directory of {repository}")
    parser.add_argument("--rev", default="HEAD")
    parser.add_argument("--out", type=Path, default=DATA / name)
    return parser


def print_report(report: Mapping[str, Any], hidden: tuple[str, ...] = ("source",)) -> None:
    """What a build wrote, without the long provenance entries."""
    print({k: v for k, v in report.items() if k not in hidden})

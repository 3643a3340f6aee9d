"""What a generated Q/A pair is and where it is kept: the records a pair becomes in the target
collection, the default config of that collection, and the progress file that makes
``tansaku.agent.qa.generate_qa`` resumable."""

from __future__ import annotations

import hashlib
import json
import os
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tansaku.config import Axis, AxisMode, CollectionConfig
from tansaku.records import Record

if TYPE_CHECKING:
    from tansaku.client import Tansaku


@dataclass(frozen=True)
class QAPair:
    question: str
    answer: str


@dataclass(frozen=True)
class Chunk:
    """One record of the source collection that pairs are written for."""

    id: str
    doc_id: str
    field: str
    text: str
    metadata: dict[str, Any]


def qa_config(name: str) -> CollectionConfig:
    """The default config of a Q/A collection: keywords over questions and answers, the
    meaning of the questions, and the meaning of the whole pair."""
    return CollectionConfig(
        name=name,
        description="生成した質問と回答のペア",
        source_type="qa_pair",
        axes=(
            Axis(
                name="keyword", mode=AxisMode.BM25, fields=("qa_question", "qa_answer"), weight=0.4
            ),
            Axis(name="question", mode=AxisMode.DENSE, fields=("qa_question",), weight=0.3),
            Axis(name="combined", mode=AxisMode.DENSE, fields=("combined",), weight=0.3),
        ),
    )


def pair_records(chunk: Chunk, pairs: Sequence[QAPair], source: str) -> list[Record]:
    """Records of ``pairs``: one document per pair (``qa-<hash of source and chunk>-<n>``)
    with ``qa_question``, ``qa_answer`` and ``combined``; the source in the metadata."""
    base = hashlib.sha256(f"{source}\0{chunk.id}".encode()).hexdigest()[:16]
    meta_src = chunk.metadata
    out: list[Record] = []
    for n, pair in enumerate(pairs, 1):
        doc_id = f"qa-{base}-{n}"
        meta: dict[str, Any] = {
            "title": str(meta_src.get("title") or chunk.doc_id),
            "source_type": "qa_pair",
            "source_collection": source,
            "source_doc_id": chunk.doc_id,
            "source_chunk_id": chunk.id,
            "question": pair.question,
            "answer": pair.answer,
        }
        for key in ("date", "chapter", "section", "store", "author"):
            if meta_src.get(key):
                meta[key] = meta_src[key]
        combined = f"質問: {pair.question}\n回答: {pair.answer}"
        for name, text in (
            ("qa_question", pair.question),
            ("qa_answer", pair.answer),
            ("combined", combined),
        ):
            out.append(
                Record(id=f"{doc_id}:{name}", doc_id=doc_id, field=name, text=text, metadata=meta)
            )
    return out


class ProgressFile:
    """Finished chunks, one JSON line each, appended and fsync'ed; torn lines are ignored."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()

    def load(self) -> dict[str, tuple[Chunk, list[QAPair]]]:
        done: dict[str, tuple[Chunk, list[QAPair]]] = {}
        if not self.path.is_file():
            return done
        with self.path.open(encoding="utf-8", errors="replace") as fh:
            for line in fh:
                try:
                    row = json.loads(line)
                    chunk = Chunk(row["chunk_id"], row["doc_id"], row["field"], "", row["metadata"])
                    pairs = [QAPair(p["question"], p["answer"]) for p in row["pairs"]]
                except (ValueError, KeyError, TypeError):
                    continue  # a line torn by a kill: its chunk is generated again
                done[chunk.id] = (chunk, pairs)
        return done

    def append(self, chunk: Chunk, pairs: Sequence[QAPair], model: str) -> None:
        row = {
            "chunk_id": chunk.id,
            "doc_id": chunk.doc_id,
            "field": chunk.field,
            "metadata": chunk.metadata,
            "pairs": [{"question": p.question, "answer": p.answer} for p in pairs],
            "model": model,
        }
        line = json.dumps(row, ensure_ascii=False, default=str) + "\n"
        with self._lock:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with self.path.open("ab") as fh:
                if fh.tell() > 0 and not _ends_with_newline(self.path):
                    fh.write(b"\n")  # after a torn line
                fh.write(line.encode("utf-8"))
                fh.flush()
                os.fsync(fh.fileno())


def _ends_with_newline(path: Path) -> bool:
    with path.open("rb") as fh:
        fh.seek(-1, os.SEEK_END)
        return fh.read(1) == b"\n"


def progress_path(client: Tansaku, source: str, target: str, team: str) -> Path:
    return client.workspace.home / "qa" / f"{source}__{target}__{team}.jsonl"

"""Q/A pair generation (the RAG Q&A design, ``003_…txt``): a chat model writes question/answer
pairs for every chunk of a collection, and the pairs go into another collection as records with
``qa_question`` / ``qa_answer`` / ``combined`` fields.

>>> report = generate_qa(ts, model, source="manuals", target="manuals_qa", per_chunk=3)
>>> report.pairs, report.generated, report.skipped

**Resumable.** Each finished chunk is appended — id, pairs, model — to a progress file in the
workspace (``qa/<source>__<target>__<team>.jsonl``, one fsync'ed JSON line per chunk) *before*
its pairs are ingested; a run first re-ingests every pair the file holds (a no-op for those
already in the target: record ids are stable, re-ingesting equal content changes nothing) and
then asks the model only for the chunks the file lacks. A run killed at any point (even
``kill -9``) loses at most the chunks being generated and never duplicates a pair: a torn last
line is ignored and its chunk generated again under the same record ids.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

from tansaku.agent.model_guard import parse_json
from tansaku.agent.models.base import ChatModel, Message, ModelError
from tansaku.agent.qa_pairs import (
    Chunk,
    ProgressFile,
    QAPair,
    pair_records,
    progress_path,
    qa_config,
)
from tansaku.config import CollectionConfig
from tansaku.errors import CollectionNotFound, InvalidRequest
from tansaku.records import Record
from tansaku.workspace import DEFAULT_TEAM, validate_name

if TYPE_CHECKING:
    from tansaku.client import Tansaku

log = logging.getLogger(__name__)
MIN_CHUNK_CHARS = 20  # shorter chunks (a keyword line, a heading) have nothing to ask about
MAX_QUESTION_CHARS = 300
MAX_ANSWER_CHARS = 1000
MAX_CONSECUTIVE_FAILURES = 5
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")

QA_PROMPT = """以下のテキストから、内容に基づく質問と回答のペアを{n}個生成してください。

# ルール
1. 質問は、このテキストを読んでいない人が実際に尋ねそうな、具体的で自然な日本語にする
2. 回答は、テキストに書かれている内容だけで答える(推測や外部の知識を加えない)
3. 回答は簡潔に、1〜3文で書く
4. 同じことを問う質問を重複させない
5. テキストから答えられる質問が{n}個作れないときは、作れる数だけでよい

# 文書
{title}

# テキスト
{text}

# 出力フォーマット
JSON形式で返してください。

例: {{"qa_pairs": [{{"question": "質問1", "answer": "回答1"}},
{{"question": "質問2", "answer": "回答2"}}]}}"""

QA_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "qa_pairs": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {"question": {"type": "string"}, "answer": {"type": "string"}},
                "required": ["question", "answer"],
                "additionalProperties": False,
            },
        }
    },
    "required": ["qa_pairs"],
    "additionalProperties": False,
}


@dataclass(frozen=True)
class QAReport:
    chunks: int
    """Chunks of the source considered (after ``fields`` and ``limit``)."""
    skipped: int
    """Already in the progress file: not asked again."""
    generated: int
    """Asked and answered in this run."""
    pairs: int
    """Pairs written this run plus those recovered from the progress file."""
    failed: tuple[tuple[str, str], ...] = ()
    """(chunk id, reason) of chunks the model did not answer usably: a rerun asks again."""
    ingested: dict[str, int] = field(default_factory=dict)
    """Inserted / updated / unchanged record counts in the target."""
    progress_file: str = ""

    def to_dict(self) -> dict[str, Any]:
        failed = [{"chunk_id": c, "reason": r} for c, r in self.failed]
        return {**asdict(self), "failed": failed}


class QAGenerationError(ModelError):
    """The model failed on too many chunks in a row; what was done is kept."""


def source_chunks(
    client: Tansaku,
    collection: str,
    *,
    team: str = DEFAULT_TEAM,
    fields: Sequence[str] | None = None,
    limit: int | None = None,
) -> list[Chunk]:
    """The team's records of ``collection`` in a stable order (document, then record id):
    those of ``fields``, or every field but ``combined`` (the whole document again) unless a
    document has nothing else. Chunks under ``MIN_CHUNK_CHARS`` characters are left out."""
    if not client.has_collection(collection):
        raise CollectionNotFound(collection, client.workspace.collection_names())
    with client.reading(collection) as col:
        ids = sorted(col.store.hashes(team))
        records: list[Record] = []
        for i in range(0, len(ids), 256):
            records.extend(col.store.get(team, ids[i : i + 256]))
    records.sort(key=_order)
    if fields:
        wanted = set(fields)
        chosen = [r for r in records if r.field in wanted]
    else:
        has_parts = {r.doc_id for r in records if r.field != "combined"}
        chosen = [r for r in records if r.field != "combined" or r.doc_id not in has_parts]
    out = [
        Chunk(r.id, r.doc_id, r.field, r.text, dict(r.metadata))
        for r in chosen
        if len(r.text.strip()) >= MIN_CHUNK_CHARS
    ]
    return out[:limit] if limit is not None else out


def _order(record: Record) -> tuple[str, str, int, str]:
    """Document, field, then chunk number as a number (``body:2`` before ``body:10``)."""
    last = record.id.rsplit(":", 1)[-1]
    return (record.doc_id, record.field, int(last) if last.isdigit() else -1, record.id)


def qa_prompt(chunk: Chunk, per_chunk: int) -> str:
    title = str(chunk.metadata.get("title") or chunk.doc_id)
    section = chunk.metadata.get("chapter") or chunk.metadata.get("section")
    if section:
        title = f"{title} / {section}"
    return QA_PROMPT.format(n=per_chunk, title=title, text=chunk.text)


def _clean(text: Any, most: int) -> str:
    return " ".join(_CONTROL.sub(" ", str(text)).split())[:most] if isinstance(text, str) else ""


def parse_pairs(content: str, per_chunk: int) -> list[QAPair]:
    """The pairs of a model's answer (``{"qa_pairs": [...]}`` or a bare list), cleaned,
    deduplicated by question and capped; ``ValueError`` when there is none."""
    value = parse_json(content)
    items = value.get("qa_pairs") if isinstance(value, dict) else value
    if not isinstance(items, list):
        raise ValueError("qa_pairs がありません")
    pairs: list[QAPair] = []
    for item in items:
        if not isinstance(item, dict):
            continue
        q = _clean(item.get("question"), MAX_QUESTION_CHARS)
        a = _clean(item.get("answer"), MAX_ANSWER_CHARS)
        if q and a and all(p.question != q for p in pairs):
            pairs.append(QAPair(q, a))
    if not pairs:
        raise ValueError("使える質問と回答のペアがありません")
    return pairs[:per_chunk]


def generate_pairs(
    model: ChatModel, chunk: Chunk, per_chunk: int, *, timeout: float | None = None
) -> list[QAPair]:
    """Ask ``model`` for the pairs of one chunk (structured output); a malformed answer is
    asked once more, then raises ``ValueError``; model failures raise ``ModelError``."""
    prompt = qa_prompt(chunk, per_chunk)
    last: Exception | None = None
    for _ in range(2):
        reply = model.chat(
            [Message.user(prompt)], json_schema=QA_SCHEMA, timeout=timeout, max_tokens=2048
        )
        try:
            if reply.finish_reason == "refusal":
                raise ValueError("モデルが生成を断りました")
            return parse_pairs(reply.content, per_chunk)
        except ValueError as exc:
            last = exc
    raise ValueError(str(last))


ProgressCallback = Callable[[int, int], None]
"""``(finished, total)`` after each chunk (skipped chunks count as finished at the start)."""


def generate_qa(
    client: Tansaku,
    model: ChatModel,
    *,
    source: str,
    target: str,
    team: str = DEFAULT_TEAM,
    per_chunk: int = 3,
    workers: int = 4,
    limit: int | None = None,
    fields: Sequence[str] | None = None,
    config: CollectionConfig | None = None,
    batch: int = 20,
    timeout: float | None = None,
    progress: ProgressCallback | None = None,
) -> QAReport:
    """Generate pairs for the chunks of ``source`` that the progress file lacks and ingest all
    of them into ``target`` (created with ``config`` or :func:`qa_config`); see the module
    docstring. Raises :class:`QAGenerationError` after ``MAX_CONSECUTIVE_FAILURES`` model
    failures in a row (what was generated is kept and ingested)."""
    validate_name(team, "チーム名")
    validate_name(target)
    for name, value, lo, hi in (("per_chunk", per_chunk, 1, 10), ("workers", workers, 1, 32)):
        if not lo <= value <= hi:
            raise InvalidRequest(f"{name} は {lo}〜{hi} にしてください(現在: {value})")
    if limit is not None and limit < 1:
        raise InvalidRequest(f"limit は 1 以上にしてください(現在: {limit})")
    if source == target:
        raise InvalidRequest("生成元と生成先に同じコレクションは指定できません")
    chunks = source_chunks(client, source, team=team, fields=fields, limit=limit)
    file = ProgressFile(progress_path(client, source, target, team))
    done = file.load()
    pending = [c for c in chunks if c.id not in done]
    skipped = len(chunks) - len(pending)
    cfg = None if client.has_collection(target) else (config or qa_config(target))
    counts: dict[str, int] = {"inserted": 0, "updated": 0, "unchanged": 0}

    def ingest(records: Iterable[Record]) -> None:
        nonlocal cfg
        rows = list(records)
        if not rows:
            return
        rep = client.ingest_records(rows, collection=target, team=team, config=cfg)
        cfg = None
        for key in counts:
            counts[key] += getattr(rep, key)

    recovered = [r for c, ps in done.values() for r in pair_records(c, ps, source)]
    ingest(recovered)  # what an interrupted run generated but may not have ingested
    pairs = sum(len(ps) for _, ps in done.values())
    finished = skipped
    if progress is not None:
        progress(finished, len(chunks))
    failed: list[tuple[str, str]] = []
    buffer: list[Record] = []
    streak = 0
    generated = 0
    pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="qa")
    todo = iter(pending)
    running: dict[Future[list[QAPair]], Chunk] = {}
    try:
        while True:
            while len(running) < workers * 2 and (chunk := next(todo, None)) is not None:
                running[pool.submit(generate_pairs, model, chunk, per_chunk, timeout=timeout)] = (
                    chunk
                )
            if not running:
                break
            finished_now, _ = wait(running, return_when=FIRST_COMPLETED)
            for future in finished_now:
                chunk = running.pop(future)
                finished += 1
                try:
                    got = future.result()
                except (ModelError, ValueError) as exc:
                    failed.append((chunk.id, str(exc)))
                    streak += 1
                    log.warning("qa: chunk %s failed: %s", chunk.id, exc)
                else:
                    file.append(chunk, got, model.name)
                    buffer.extend(pair_records(chunk, got, source))
                    pairs += len(got)
                    generated += 1
                    streak = 0
                if progress is not None:
                    progress(finished, len(chunks))
            if streak >= MAX_CONSECUTIVE_FAILURES:
                raise QAGenerationError(
                    f"モデルが {streak} チャンク続けて失敗したため中断しました"
                    f"(最後のエラー: {failed[-1][1]})。生成済みのペアは保存されています。"
                    "同じコマンドで続きから再開できます"
                )
            if len(buffer) >= batch * 3:
                ingest(buffer)
                buffer = []
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
        ingest(buffer)
    return QAReport(
        chunks=len(chunks),
        skipped=skipped,
        generated=generated,
        pairs=pairs,
        failed=tuple(failed),
        ingested=counts,
        progress_file=str(file.path),
    )


__all__ = [
    "QA_PROMPT",
    "QA_SCHEMA",
    "Chunk",
    "QAGenerationError",
    "QAPair",
    "QAReport",
    "generate_pairs",
    "generate_qa",
    "pair_records",
    "parse_pairs",
    "progress_path",
    "qa_config",
    "qa_prompt",
    "source_chunks",
]

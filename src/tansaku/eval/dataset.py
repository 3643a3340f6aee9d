"""Evaluation datasets: a BEIR folder or a judgement file (YAML / CSV) over a collection.

BEIR layout (``corpus.jsonl``, ``queries.jsonl``, ``qrels/<split>.tsv``): the corpus is ingested
into a scratch collection of the workspace. A judgement file lists queries with the documents that
count as relevant, for a collection that exists already or is built from ``source``::

    name: cards                         # optional (default: the file name)
    collection: cards                   # the collection to evaluate
    source: ../cards/cards.jsonl        # optional: ingest this into a scratch copy first
    config: ../configs/cards.toml       # optional: its collection config (with source)
    queries:
      - query: 継続ダメージ
        relevant: [10100610, 10300330]  # doc ids (or titles); a mapping {id: grade} for grades
        note: 毎ターン相手にダメージを与える効果

The CSV form has a header with ``query`` and ``relevant`` (ids separated by ``;``, ``|``, ``、``
or spaces) and an optional ``note``; rows with the same query are merged. Paths in a YAML file
are relative to the file.
"""

from __future__ import annotations

import csv
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from enum import StrEnum
from pathlib import Path
from typing import Any

from tansaku.errors import TansakuError

BEIR_CORPUS = "corpus.jsonl"
BEIR_QUERIES = "queries.jsonl"
JUDGEMENT_SUFFIXES = (".yaml", ".yml", ".csv")
_ID_SPLIT = re.compile(r"[;|、,\s]+")


class EvalDataError(TansakuError):
    """An evaluation dataset is missing a file or is malformed; the message says where."""


class DatasetKind(StrEnum):
    BEIR = "beir"
    JUDGEMENTS = "judgements"


@dataclass(frozen=True, kw_only=True)
class EvalDataset:
    """Queries and graded relevance (``qrels``), plus where the documents come from."""

    name: str
    kind: DatasetKind
    path: Path
    queries: Mapping[str, str]  # query id -> text, in file order
    qrels: Mapping[str, Mapping[str, int]]  # query id -> {doc id or title: grade > 0}
    notes: Mapping[str, str] = field(default_factory=dict)
    collection: str | None = None  # judgements: the collection to evaluate
    source: Path | None = None  # BEIR: corpus.jsonl; judgements: files to ingest first
    config: Path | None = None  # judgements: the collection config used with ``source``

    def __post_init__(self) -> None:
        if not self.queries:
            raise EvalDataError(f"{self.path}: 評価するクエリがありません")


def _read_jsonl(path: Path) -> list[dict[str, Any]]:
    rows = []
    try:
        with path.open(encoding="utf-8") as fh:
            for n, line in enumerate(fh, start=1):
                if not line.strip():
                    continue
                try:
                    obj = json.loads(line)
                except json.JSONDecodeError as exc:
                    raise EvalDataError(
                        f"{path} の {n} 行目が JSON として読めません: {exc}"
                    ) from None
                if not isinstance(obj, dict):
                    raise EvalDataError(f"{path} の {n} 行目が JSON オブジェクトではありません")
                rows.append(obj)
    except FileNotFoundError:
        raise EvalDataError(f"ファイルが見つかりません: {path}") from None
    return rows


def load_beir(path: Path, *, split: str = "test") -> EvalDataset:
    """Read a BEIR folder; only queries that have qrels in ``split`` are kept (BEIR's rule)."""
    corpus = path / BEIR_CORPUS
    if not corpus.is_file():
        raise EvalDataError(f"{path} に {BEIR_CORPUS} がありません(BEIR 形式のフォルダを指定)")
    qrels_path = path / "qrels" / f"{split}.tsv"
    if not qrels_path.is_file():
        raise EvalDataError(f"{path} に qrels/{split}.tsv がありません")
    texts: dict[str, str] = {}
    for n, obj in enumerate(_read_jsonl(path / BEIR_QUERIES), start=1):
        qid, text = obj.get("_id"), obj.get("text")
        if qid is None or not isinstance(text, str):
            raise EvalDataError(f"{path / BEIR_QUERIES} の {n} 行目に _id か text がありません")
        texts[str(qid)] = text
    qrels: dict[str, dict[str, int]] = {}
    with qrels_path.open(encoding="utf-8") as fh:
        for n, line in enumerate(fh, start=1):
            parts = line.rstrip("\n").split("\t")
            if n == 1 and parts and parts[0] == "query-id":
                continue
            if not line.strip():
                continue
            if len(parts) != 3:
                raise EvalDataError(
                    f"{qrels_path} の {n} 行目はタブ区切り 3 列(query-id, corpus-id, score)"
                    f"ではありません: {line.strip()!r}"
                )
            try:
                grade = int(float(parts[2]))
            except ValueError:
                raise EvalDataError(
                    f"{qrels_path} の {n} 行目の score が数値ではありません: {parts[2]!r}"
                ) from None
            if grade > 0:
                qrels.setdefault(parts[0], {})[parts[1]] = grade
    queries = {q: t for q, t in texts.items() if q in qrels}
    return EvalDataset(
        name=path.resolve().name,
        kind=DatasetKind.BEIR,
        path=path,
        queries=queries,
        qrels={q: qrels[q] for q in queries},
        source=corpus,
    )


def _relevant(value: Any, where: str) -> dict[str, int]:
    if isinstance(value, Mapping):
        out = {}
        for k, v in value.items():
            if isinstance(v, bool) or not isinstance(v, int | float) or v < 0:
                raise EvalDataError(
                    f"{where}: relevant の等級は 0 以上の数にしてください({k}: {v!r})"
                )
            if int(v) > 0:
                out[str(k).strip()] = int(v)
        return out
    if isinstance(value, str):
        items: list[Any] = [s for s in _ID_SPLIT.split(value) if s]
    elif isinstance(value, list | tuple):
        items = list(value)
    else:
        raise EvalDataError(f"{where}: relevant は ID のリストにしてください(現在: {value!r})")
    out = {}
    for item in items:
        if isinstance(item, bool) or not isinstance(item, str | int) or str(item).strip() == "":
            raise EvalDataError(f"{where}: relevant に使えない値があります: {item!r}")
        out[str(item).strip()] = 1
    return out


def _resolve(base: Path, value: Any, key: str, path: Path) -> Path:
    if not isinstance(value, str) or not value.strip():
        raise EvalDataError(f"{path}: {key} はパス(文字列)にしてください(現在: {value!r})")
    p = Path(value)
    return p if p.is_absolute() else base / p


def _judgements(path: Path, items: list[tuple[str, Any, str, str]]) -> EvalDataset:
    """(query, relevant, note, where) rows -> the judgements of file ``path`` (named after it);
    the same query text merges."""
    queries: dict[str, str] = {}
    qrels: dict[str, dict[str, int]] = {}
    notes: dict[str, str] = {}
    by_text: dict[str, str] = {}
    for query, relevant, note, where in items:
        if not query.strip():
            raise EvalDataError(f"{where}: query が空です")
        rel = _relevant(relevant, where)
        qid = by_text.get(query)
        if qid is None:
            qid = f"q{len(queries) + 1}"
            by_text[query] = qid
            queries[qid] = query
            qrels[qid] = {}
        for doc, grade in rel.items():
            qrels[qid][doc] = max(grade, qrels[qid].get(doc, 0))
        if note:
            notes[qid] = f"{notes[qid]} / {note}" if qid in notes else note
    empty = [queries[q] for q, r in qrels.items() if not r]
    if empty:
        raise EvalDataError(f"{path}: 正解(relevant)のないクエリがあります: {empty}")
    return EvalDataset(
        name=path.stem,
        kind=DatasetKind.JUDGEMENTS,
        path=path,
        queries=queries,
        qrels=qrels,
        notes=notes,
    )


_YAML_KEYS = {"name", "collection", "source", "config", "queries"}
_QUERY_KEYS = {"query", "relevant", "note"}


def _known_keys(data: Mapping[str, Any], allowed: set[str], where: str) -> None:
    unknown = set(data) - allowed
    if unknown:
        raise EvalDataError(
            f"{where}: 不明なキーがあります: {sorted(unknown)}。使えるキー: {sorted(allowed)}"
        )


def _read_text(path: Path, encoding: str = "utf-8") -> str:
    try:
        return path.read_text(encoding=encoding)
    except FileNotFoundError:
        raise EvalDataError(f"ファイルが見つかりません: {path}") from None


def load_yaml(path: Path) -> EvalDataset:
    import yaml

    try:
        data = yaml.safe_load(_read_text(path))
    except yaml.YAMLError as exc:
        raise EvalDataError(f"{path} の YAML が不正です: {exc}") from None
    if not isinstance(data, Mapping):
        raise EvalDataError(f"{path}: 先頭は collection や queries を持つマッピングにしてください")
    _known_keys(data, _YAML_KEYS, str(path))
    raw = data.get("queries")
    if not isinstance(raw, list) or not raw:
        raise EvalDataError(f"{path}: queries に 1 件以上のクエリを並べてください")
    items = []
    for n, q in enumerate(raw, start=1):
        where = f"{path} の queries {n} 件目"
        if not isinstance(q, Mapping):
            raise EvalDataError(f"{where}: {{query, relevant, note}} の形にしてください")
        _known_keys(q, _QUERY_KEYS, where)
        if "query" not in q or "relevant" not in q:
            raise EvalDataError(f"{where}: query と relevant が必要です")
        items.append((str(q["query"]), q["relevant"], str(q.get("note") or ""), where))
    judged = _judgements(path, items)
    base = path.parent
    collection = data.get("collection")
    if collection is not None and not isinstance(collection, str):
        raise EvalDataError(f"{path}: collection は文字列にしてください(現在: {collection!r})")
    source = _resolve(base, data["source"], "source", path) if data.get("source") else None
    config = _resolve(base, data["config"], "config", path) if data.get("config") else None
    if config is not None and source is None:
        raise EvalDataError(f"{path}: config は source と一緒に指定してください")
    for key, p in (("source", source), ("config", config)):
        if p is not None and not p.exists():
            raise EvalDataError(f"{path}: {key} のファイルが見つかりません: {p}")
    return replace(
        judged,
        name=str(data.get("name") or path.stem),
        collection=collection,
        source=source,
        config=config,
    )


def load_csv(path: Path) -> EvalDataset:
    text = _read_text(path, "utf-8-sig")
    reader = csv.DictReader(text.splitlines())
    header = [h.strip() for h in reader.fieldnames or []]
    if "query" not in header or "relevant" not in header:
        raise EvalDataError(
            f"{path}: 1 行目(見出し)に query と relevant の列が必要です(現在: {header})"
        )
    items = []
    for n, row in enumerate(reader, start=2):
        row = {(k or "").strip(): (v or "") for k, v in row.items()}
        if not any(v.strip() for v in row.values()):
            continue
        items.append(
            (
                row["query"].strip(),
                row["relevant"],
                row.get("note", "").strip(),
                f"{path} の {n} 行目",
            )
        )
    if not items:
        raise EvalDataError(f"{path}: 評価するクエリがありません")
    return _judgements(path, items)


def load_dataset(path: str | Path, *, split: str = "test") -> EvalDataset:
    """A BEIR folder (or its ``corpus.jsonl``), or a ``.yaml``/``.yml``/``.csv`` judgement file."""
    p = Path(path)
    if p.is_dir():
        return load_beir(p, split=split)
    if p.name == BEIR_CORPUS:
        return load_beir(p.parent, split=split)
    if p.suffix.lower() in (".yaml", ".yml"):
        return load_yaml(p)
    if p.suffix.lower() == ".csv":
        return load_csv(p)
    if not p.exists():
        raise EvalDataError(f"データセットが見つかりません: {p}")
    raise EvalDataError(
        f"{p} は評価データとして読めません。BEIR 形式のフォルダか、"
        f"判定ファイル({', '.join(JUDGEMENT_SUFFIXES)})を指定してください"
    )

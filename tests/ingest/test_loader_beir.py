from __future__ import annotations

import json
from pathlib import Path

from ingest_support import by_id, config, load, load_all, write

CORPUS = [
    {
        "_id": "doc1",
        "title": "富士山",
        "text": "富士山は日本で最も高い山である。",
        "metadata": {"url": "https://ja.wikipedia.org/wiki/富士山"},
    },
    {"_id": "doc2", "title": "", "text": "琵琶湖は滋賀県にある日本最大の湖。"},
]


def _corpus(path: Path, rows: list[dict[str, object]]) -> Path:
    return write(path, "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows))


def test_beir_corpus(tmp_path: Path) -> None:
    path = _corpus(tmp_path / "jsquad" / "corpus.jsonl", CORPUS)
    (result,) = load_all([tmp_path / "jsquad"])
    assert result.errors == ()
    records = by_id(result)
    assert list(records) == ["doc1:body", "doc2:body"]
    doc1 = records["doc1:body"]
    assert doc1.doc_id == "doc1"
    assert doc1.text == "富士山\n富士山は日本で最も高い山である。"
    assert doc1.metadata == {
        "url": "https://ja.wikipedia.org/wiki/富士山",
        "title": "富士山",
        "source_type": "beir",
        "source": str(path),
    }
    assert records["doc2:body"].text == "琵琶湖は滋賀県にある日本最大の湖。"
    assert records["doc2:body"].metadata["title"] == "doc2"


def test_beir_detected_by_keys(tmp_path: Path) -> None:
    path = _corpus(tmp_path / "passages.jsonl", CORPUS)
    assert list(by_id(load(path))) == ["doc1:body", "doc2:body"]


def test_beir_long_passage_is_chunked(tmp_path: Path) -> None:
    row = {"_id": "long", "title": "長文", "text": "段落の文です。" * 30}
    path = _corpus(tmp_path / "corpus.jsonl", [row])
    ids = [r.id for r in load(path, config(chunk_size=60, chunk_overlap=10)).records]
    assert ids[:2] == ["long:body:0", "long:body:1"]


def test_beir_line_without_id(tmp_path: Path) -> None:
    path = _corpus(tmp_path / "corpus.jsonl", [{"title": "x", "text": "IDなし"}, CORPUS[0]])
    result = load(path)
    assert [r.id for r in result.records] == ["doc1:body"]
    (error,) = result.errors
    assert error.path == f"{path}:1"
    assert error.reason == "1行目に _id がありません"

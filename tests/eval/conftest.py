from __future__ import annotations

import json
from pathlib import Path

import pytest

CORPUS = [
    {
        "_id": "d1",
        "title": "富士山",
        "text": "富士山は日本で最も高い山で、標高は3776メートルである。",
    },
    {"_id": "d2", "title": "琵琶湖", "text": "琵琶湖は滋賀県にある日本最大の湖である。"},
    {
        "_id": "d3",
        "title": "東京タワー",
        "text": "東京タワーは東京都港区にある電波塔で、1958年に完成した。",
    },
    {"_id": "d4", "title": "信濃川", "text": "信濃川は日本で最も長い川で、新潟県で日本海に注ぐ。"},
    {
        "_id": "d5",
        "title": "阿蘇山",
        "text": "阿蘇山は熊本県にある活火山で、大きなカルデラを持つ。",
    },
]
QUERIES = [
    {"_id": "q1", "text": "日本で最も高い山の標高は？"},
    {"_id": "q2", "text": "滋賀県にある湖"},
    {"_id": "q3", "text": "港区の電波塔はいつ完成した？"},
    {"_id": "q4", "text": "判定のないクエリ"},
]
QRELS = "query-id\tcorpus-id\tscore\nq1\td1\t1\nq2\td2\t1\nq3\td3\t1\nq3\td5\t0\n"


def write_beir(root: Path) -> Path:
    (root / "qrels").mkdir(parents=True)
    lines = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in CORPUS)
    (root / "corpus.jsonl").write_text(lines, encoding="utf-8")
    lines = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in QUERIES)
    (root / "queries.jsonl").write_text(lines, encoding="utf-8")
    (root / "qrels" / "test.tsv").write_text(QRELS, encoding="utf-8")
    return root


@pytest.fixture
def beir_dir(tmp_path: Path) -> Path:
    return write_beir(tmp_path / "mini-ja")

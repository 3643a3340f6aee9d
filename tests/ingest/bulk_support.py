"""Corpora and checks shared by the bulk-ingest tests."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tansaku.client import Tansaku

STORES = ["新宿店", "渋谷店", "池袋店", "横浜店", "大宮店", "川崎店", "千葉店"]
EVENTS = [
    "冷蔵庫の温度が上がらず、食材の一部を廃棄した",
    "お客様から料理の提供が遅いとのクレームがあった",
    "レジの現金が千円合わなかった",
    "食洗機から水漏れがあり、業者に修理を依頼した",
    "新人スタッフの研修を行い、接客の手順を確認した",
    "雨のため客数が少なく、売上が目標を下回った",
    "異物混入の指摘があり、店長が謝罪して返金した",
    "製氷機が止まり、近くの店舗から氷を借りた",
]


def report_text(i: int, variant: int = 0) -> str:
    store = STORES[i % len(STORES)]
    a = EVENTS[(i * 3 + variant) % len(EVENTS)]
    b = EVENTS[(i * 5 + 1) % len(EVENTS)]
    return f"{store}の日報 第{i}号。{a}。{b}。対応を記録し、本部に報告した。"


def write_jsonl(path: Path, n: int, *, variant: int = 0, start: int = 0) -> Path:
    """``n`` daily reports as JSON Lines (``variant`` changes every 4th one)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as fh:
        for i in range(start, start + n):
            v = variant if i % 4 == 0 else 0
            obj = {"id": f"R{i:06d}", "title": f"日報 {i}", "store": STORES[i % 7]}
            obj["body"] = report_text(i, v)
            fh.write(json.dumps(obj, ensure_ascii=False) + "\n")
    return path


def write_texts(folder: Path, n: int, *, variant: int = 0) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for i in range(n):
        long = "追記:翌日に再点検した。" * 30 if i % 5 == 0 else ""  # several chunks
        text = f"店舗日報 {i}\n{report_text(i + 1000, variant)}{long}"
        (folder / f"report-{i:04d}.txt").write_text(text, encoding="utf-8")
    return folder


def snapshot(ts: Tansaku, collection: str, team: str = "default") -> dict[str, Any]:
    """What a collection holds for a team: record ids and hashes, and its BM25 statistics
    (total length and count per field)."""
    col = ts.collection(collection)
    rows = col.store.scan(team)
    ids = [r.record.id for r in rows]
    assert len(ids) == len(set(ids)), "a record is stored twice"
    stats = {f: (s.total_len, s.count) for f, s in col.state.bm25.get(team, {}).items() if s.count}
    return {"hashes": {r.record.id: r.content_hash for r in rows}, "stats": stats}

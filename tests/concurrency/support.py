"""Data and process helpers for the multi-process tests."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

ACTOR = Path(__file__).with_name("actor.py")
STORES = ["新宿店", "渋谷店", "池袋店", "横浜店", "大宮店"]
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


def write_reports(folder: Path, n: int, *, variant: int = 0) -> Path:
    """``n`` daily reports as text files (``variant`` changes some of them)."""
    folder.mkdir(parents=True, exist_ok=True)
    for i in range(n):
        store = STORES[i % len(STORES)]
        a = EVENTS[(i * 3 + variant) % len(EVENTS)]
        b = EVENTS[(i * 5 + 1) % len(EVENTS)]
        extra = (
            "追記:翌日に再点検した。" * (1 + (i + variant) % 3) if variant and i % 4 == 0 else ""
        )
        text = f"{store}の日報 第{i}号。{a}。{b}。対応を記録し、本部に報告した。{extra}"
        (folder / f"report-{i:04d}.txt").write_text(text, encoding="utf-8")
    return folder


def env(**extra: str) -> dict[str, str]:
    e = dict(os.environ)
    e.pop("TANSAKU_CRASH_AT", None)
    e["PYTHONUTF8"] = "1"
    e.update(extra)
    return e


def start(*args: str, **env_extra: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, str(ACTOR), *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env(**env_extra),
    )


def run(*args: str, timeout: float = 180, **env_extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(ACTOR), *args],
        capture_output=True,
        text=True,
        env=env(**env_extra),
        timeout=timeout,
    )


def ok_json(proc: subprocess.CompletedProcess[str]) -> Any:
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


def bm25_stats(home: Path, collection: str = "reports") -> dict[str, dict[str, tuple[int, int]]]:
    """(total length, count) per team and field of the committed generation."""
    col = home / "collections" / collection
    gen = (col / "CURRENT").read_text(encoding="utf-8").strip()
    state = json.loads((col / "gens" / gen / "state.json").read_text(encoding="utf-8"))
    return {
        team: {f: (s["total_len"], s["count"]) for f, s in fields.items() if s["count"]}
        for team, fields in state["bm25"].items()
    }

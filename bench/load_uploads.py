"""Uploads for ``bench/serve_load.py``: one multipart JSON Lines upload after another into the
collection ``uploads`` while searches are measured, each job followed to its end."""

from __future__ import annotations

import json
import os
import tempfile
import threading
import time
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Any

import httpx

from tansaku.demo.report_io import write_reports_jsonl
from tansaku.demo.reports import generate

NOW = date(2025, 12, 11)
COUNTER = [0]  # uploads posted so far (each one's rows get new ids)
RUN_TAG = os.urandom(3).hex()  # and new across invocations over the same workspace


def upload_rows() -> list[dict[str, Any]]:
    """Reports from the two years before the served ones: what the uploads are made of."""
    path = write_reports_jsonl(
        generate(NOW, start=date(2022, 1, 1), end=date(2023, 12, 31)),
        Path(tempfile.mkdtemp()) / "u.jsonl",
    )
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def upload_body(rows: list[dict[str, Any]], n: int, size: int) -> bytes:
    """The ``n``-th upload: ``size`` rows with new ids and a new last line of text (so every
    upload adds records and embeds them, never an unchanged re-upload)."""
    start = (n * size) % max(1, len(rows) - size)
    out = []
    for row in rows[start : start + size]:
        text = f"{row['text']}\n(取り込み {RUN_TAG}-{n} 回目)"
        new = dict(row, id=f"{row['id']}-{RUN_TAG}-u{n}", text=text)
        out.append(json.dumps(new, ensure_ascii=False))
    return "\n".join(out).encode("utf-8")


@dataclass
class Uploader:
    """Posts one upload after another into ``uploads`` until stopped; follows every job."""

    base: str
    rows: list[dict[str, Any]]
    size: int
    counter: list[int]
    running: threading.Event = field(default_factory=threading.Event)
    stop: threading.Event = field(default_factory=threading.Event)
    done: list[dict[str, Any]] = field(default_factory=list)
    records: int = 0
    errors: list[str] = field(default_factory=list)

    def run(self) -> None:
        with httpx.Client(base_url=self.base, timeout=300) as http:
            while not self.stop.is_set():
                self.counter[0] += 1
                n = self.counter[0]
                data = upload_body(self.rows, n, self.size)
                files = {"files": (f"upload-{n}.jsonl", data, "application/x-ndjson")}
                r = http.post("/api/ingest", data={"collection": "uploads"}, files=files)
                if r.status_code != 202:
                    self.errors.append(f"upload {r.status_code}: {r.text[:200]}")
                    return
                job = r.json()
                while job["status"] in ("queued", "running"):
                    if job["status"] == "running":
                        self.running.set()
                    time.sleep(0.1)
                    job = http.get(f"/api/jobs/{job['id']}").json()
                if job["status"] != "done" or job["failures"]:
                    self.errors.append(f"job {job['id']}: {job['error'] or job['failures']}")
                self.done.append(job)
                self.records += (job["result"] or {}).get("inserted", 0)

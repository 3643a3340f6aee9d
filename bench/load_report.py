"""The Markdown table, the machine line and the commits (this checkout, a baseline) of
``bench/serve_load.py``."""

from __future__ import annotations

import os
import platform
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

import tansaku


def markdown(report: dict[str, Any]) -> str:
    m, a = report["machine"], report["args"]
    base = f" --baseline {a['baseline']}" if a.get("baseline") else ""
    after = f" --commit {a['commit']}" if a.get("commit") else ""
    after += "".join(f" --server-env {kv}" for kv in a.get("server_env") or [])
    after += f" --http-client {','.join(a.get('http_client') or ['httpx'])}"
    lines = [
        "## Server load (`bench/serve_load.py`)",
        "",
        f"`python bench/serve_load.py --workspace {a['workspace']} --clients {a['threads']} "
        f"--seconds {a['seconds']:g} --runs {a['runs']} --endpoints {a['endpoints']} "
        f"--questions {a['questions']} --job-modes {a['job_modes']}{base}{after}` — {m['date']}, "
        f"commit {report['commit']}{report.get('baseline_note', '')}, {m['cpu']}, "
        f"{m['cores']} cores, Python {m['python']}; load average before "
        f"{fmt_load(m['load_avg_at_start'])}, after {fmt_load(report['load_avg_at_end'])} "
        "(the host is shared with other work).",
        f"Workspace: {report['records']:,} records; real `tansaku serve` (uvicorn) on loopback, "
        "keep-alive clients, every figure the median of the runs.",
        "",
        "| server | endpoint | questions | clients | upload running | req/s | p50 ms | p95 ms "
        "| p99 ms | server CPU | requests | errors | uploads (records) | req/s per run |",
        "|---|---|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---|---|",
    ]
    for r in report["rows"]:
        up = f"{r['uploads']} ({r['upload_records']:,})" if r["ingest"] else "–"
        lines.append(
            f"| {r['mode']} | {r['endpoint']} | {r['questions']} | {r['threads']} "
            f"| {'yes' if r['ingest'] else 'no'} "
            f"| {r['rps']:.1f} | {r['p50_ms']:.1f} | {r['p95_ms']:.1f} | {r['p99_ms']:.1f} "
            f"| {r['server_cpu']:.2f} | {r['requests']:,} | {r['errors']} | {up} "
            f"| {', '.join(str(x) for x in r['runs'])} |"
        )
    return "\n".join(lines) + "\n"


def fmt_load(load: Any) -> str:
    return " / ".join(f"{x:.2f}" for x in load)


def machine() -> dict[str, Any]:
    cpu = next(
        (ln.split(":", 1)[1].strip() for ln in Path("/proc/cpuinfo").read_text().splitlines()
         if ln.startswith("model name")),
        platform.processor(),
    )  # fmt: skip
    return {
        "date": time.strftime("%Y-%m-%d %H:%M %Z"),
        "cpu": cpu,
        "cores": os.cpu_count(),
        "load_avg_at_start": os.getloadavg(),
        "python": platform.python_version(),
        "tansaku": tansaku.__version__,
    }


def baseline_source(ref: str) -> tuple[str, Path]:
    """The package sources of commit ``ref`` (``git archive``) in a temporary folder, put first
    on the ``PYTHONPATH`` of the baseline server; returns the short commit and the folder."""
    root = Path(__file__).resolve().parents[1]
    sha = subprocess.run(
        ["git", "-C", str(root), "rev-parse", "--short", ref],
        check=True, capture_output=True, text=True,
    ).stdout.strip()  # fmt: skip
    dest = Path(tempfile.mkdtemp(prefix=f"serve-load-{sha}-"))
    archive = subprocess.run(
        ["git", "-C", str(root), "archive", sha, "src"], check=True, capture_output=True
    ).stdout
    subprocess.run(["tar", "-x", "-C", str(dest)], input=archive, check=True)
    return sha, dest / "src"


def head_commit() -> str:
    root = Path(__file__).resolve().parents[1]
    out = subprocess.run(
        ["git", "-C", str(root), "rev-parse", "--short", "HEAD"], capture_output=True, text=True
    )
    dirty = subprocess.run(
        ["git", "-C", str(root), "status", "--porcelain", "--", "src"],
        capture_output=True, text=True,
    ).stdout.strip()  # fmt: skip
    return out.stdout.strip() + ("+changes" if dirty else "")

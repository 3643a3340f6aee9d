"""The workspaces ``bench/serve_load.py`` serves: the demo's generated reports since a day with
the manuals and tables (a fake embedding server or the bundled model), or the demo's own."""

from __future__ import annotations

import shutil
import subprocess
import sys
from datetime import date
from pathlib import Path

import tansaku
from tansaku.demo.paths import examples_dir
from tansaku.demo.report_io import write_reports_jsonl
from tansaku.demo.reports import generate
from tansaku.demo.tables import install_demo_tables
from tansaku.embed import load_embedder

NOW = date(2025, 12, 11)


def build(home: Path, since: date, embedder: str, procs: list[subprocess.Popen[str]]) -> int:
    """The workspace: reports since ``since``, the manuals, the tables; returns its records."""
    home.mkdir(parents=True, exist_ok=True)
    if embedder == "fake":
        srv = subprocess.Popen(
            [sys.executable, "-m", "tansaku.testing.fake_embedding_server", "--dim", "256"],
            stdout=subprocess.PIPE,
            text=True,
        )
        procs.append(srv)
        url = srv.stdout.readline().strip() if srv.stdout else ""
        toml = f'[embedder]\nprovider = "tei"\nbase_url = "{url}/v1"\nmodel = "fake-e5"\n'
        (home / "tansaku.toml").write_text(toml, encoding="utf-8")
    ex = examples_dir()
    reports = write_reports_jsonl(generate(NOW, start=since), home / "src" / "reports.jsonl")
    with tansaku.connect(home, embedder=load_embedder(home)) as ts:
        ts.ingest([reports], collection="reports", config=ex / "configs" / "reports.toml")
        manuals = sorted((ex / "manuals").glob("*.md"))
        ts.ingest(manuals, collection="manuals", config=ex / "configs" / "manuals.toml")
        install_demo_tables(home, now=NOW)
        return sum(info.points for info in ts.collections())


def build_demo(home: Path) -> int:
    """``tansaku demo build`` (the same day gives the same workspace; quick when built)."""
    exe = shutil.which("tansaku", path=str(Path(sys.executable).parent)) or "tansaku"
    cmd = [exe, "demo", "build", "--home", str(home), "--now", NOW.isoformat()]
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    with tansaku.connect(home, embedder=load_embedder(home)) as ts:
        return sum(info.points for info in ts.collections())

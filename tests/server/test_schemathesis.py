"""Schemathesis generates requests from the server's own OpenAPI schema (examples, coverage of
every parameter's edges, then random fuzzing) against a real uvicorn server on 127.0.0.1: no
response may be a 5xx. Run through schemathesis' CLI, as a user would run it."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from .support import KEY_ALPHA

pytestmark = pytest.mark.e2e


def test_no_server_error_on_any_generated_request(live, tmp_path: Path) -> None:
    cli = shutil.which("schemathesis", path=str(Path(sys.executable).parent))
    if cli is None:
        pytest.skip("schemathesis is not installed (pip install -e '.[dev]')")
    report = tmp_path / "report.json"
    run = subprocess.run(
        [
            cli,
            "run",
            f"{live.base_url}/openapi.json",
            "--checks",
            "not_a_server_error",
            "--header",
            f"Authorization: Bearer {KEY_ALPHA}",
            "--max-examples",
            "12",
            "--seed",
            "20261123",
            "--request-timeout",
            "60",
            "--report-json-path",
            str(report),
        ],
        capture_output=True,
        text=True,
        timeout=900,
        cwd=tmp_path,  # schemathesis writes its .schemathesis folder where it runs
    )
    tail = (run.stdout + run.stderr)[-4000:]
    assert run.returncode == 0, tail
    assert "server error" not in run.stdout.lower().replace("not_a_server_error", ""), tail

"""Schemathesis generates requests from the server's own OpenAPI schema (examples, coverage of
every parameter's edges, random fuzzing, then stateful sequences) against a real uvicorn
server on 127.0.0.1, run through its CLI as a user would run it, over every operation with a
bounded number of examples (well under 3 minutes on 2 cores). No response may be a 5xx
(``not_a_server_error``), answer a status its operation does not declare
(``status_code_conformance``) or a body that does not match the declared schema
(``response_schema_conformance``): 0 failures, 0 errors, every operation tested."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from .support import KEY_ALPHA

pytestmark = pytest.mark.e2e

CHECKS = "not_a_server_error,status_code_conformance,response_schema_conformance"
MAX_EXAMPLES = 15


def test_no_server_error_and_no_schema_mismatch_on_any_generated_request(
    live, tmp_path: Path
) -> None:
    cli = shutil.which("schemathesis", path=str(Path(sys.executable).parent))
    if cli is None:
        pytest.skip("schemathesis is not installed (pip install -e '.[dev]')")
    schema = httpx.get(f"{live.base_url}/openapi.json").json()
    operations = sum(len(methods) for methods in schema["paths"].values())
    report = tmp_path / "report.json"
    run = subprocess.run(
        [
            cli,
            "run",
            f"{live.base_url}/openapi.json",
            "--checks",
            CHECKS,
            "--header",
            f"Authorization: Bearer {KEY_ALPHA}",
            "--max-examples",
            str(MAX_EXAMPLES),
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
    tail = (run.stdout + run.stderr)[-6000:]
    assert run.returncode == 0, tail
    summary = json.loads(report.read_text(encoding="utf-8"))
    assert summary["operations"]["tested"] == summary["operations"]["total"] == operations, tail
    assert summary["failures"] == [] and summary["errors"] == [], tail
    assert summary["test_cases"]["with_failures"] == 0, tail
    assert summary["test_cases"]["generated"] >= operations * 10, tail

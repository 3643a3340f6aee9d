"""``tansaku serve`` refuses a non-loopback address while no key exists; a turn whose client
disconnects mid-stream still finishes."""

from __future__ import annotations

import time

import pytest
from typer.testing import CliRunner

from tansaku.cli.main import app

from .support import KEY_ALPHA


def test_serve_refuses_public_address_without_keys(tmp_path):
    result = CliRunner().invoke(app, ["serve", "--host", "0.0.0.0", "--home", str(tmp_path)])
    assert result.exit_code == 2
    assert "API キーが必要" in result.output


def _asks(metrics: str) -> float:
    return sum(
        float(line.rsplit(" ", 1)[1])
        for line in metrics.splitlines()
        if line.startswith("tansaku_ask_total{")
    )


@pytest.mark.integration
def test_a_disconnected_stream_does_not_stop_the_turn(live):
    with live.client(KEY_ALPHA) as http:
        before = _asks(http.get("/metrics").text)
        with http.stream(
            "POST",
            "/api/ask",
            json={"question": "開店前に何をしますか", "collections": {"reports": "manuals"}},
            headers={"Accept": "text/event-stream"},
        ) as stream:
            next(stream.iter_raw())  # the first event, then hang up
        deadline = time.monotonic() + 120
        while _asks(http.get("/metrics").text) <= before:
            assert time.monotonic() < deadline, "the turn did not finish"
            time.sleep(0.2)

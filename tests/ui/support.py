"""The UI tests' world: a small real workspace (Japanese daily reports, a manual, a hostile
document, the demo tables) built with ``HashEmbedder``, a real uvicorn server on 127.0.0.1 and
Debian's Chromium driven by Playwright."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import date
from pathlib import Path
from typing import Any

import uvicorn

import tansaku
from tansaku.records import Record
from tansaku.server import ServerSettings, create_app
from tansaku.testing import HashEmbedder

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
DEMO_DAY = date(2025, 12, 10)
HOSTILE = "<img src=x onerror=alert(1)>"
MANUAL_QUESTION = "身だしなみとして爪はどうする?"
KEY = "tsk_ui_test_0123456789abcdef"


def build_workspace(home: Path) -> None:
    """Reports (40 generated daily reports), the hygiene manual, a document whose title is an
    HTML payload, and the demo tables."""
    from tansaku.demo.paths import examples_dir
    from tansaku.demo.reports import generate, write_reports_jsonl
    from tansaku.demo.tables import install_demo_tables

    ex = examples_dir()
    client = tansaku.connect(home, embedder=HashEmbedder(32))
    try:
        full = write_reports_jsonl(generate(DEMO_DAY), home / "demo" / "reports.jsonl")
        small = home / "demo" / "reports-small.jsonl"
        lines = full.read_text(encoding="utf-8").splitlines()[:40]
        small.write_text("\n".join(lines) + "\n", encoding="utf-8")
        client.ingest([small], collection="reports", config=ex / "configs" / "reports.toml")
        client.ingest(
            [ex / "manuals" / "hygiene.md"],
            collection="manuals",
            config=ex / "configs" / "manuals.toml",
        )
        hostile = Record(
            id="xss:body",
            doc_id="xss",
            field="body",
            text=f"手洗いの注意 {HOSTILE} <script>alert(2)</script> [リンク](javascript:alert(3))",
            metadata={"title": HOSTILE},
        )
        client.ingest_records([hostile], collection="manuals")
        install_demo_tables(home, now=DEMO_DAY)
    finally:
        client.close()


class DictKeys:
    def __init__(self, keys: dict[str, str]) -> None:
        self.keys = dict(keys)
        self.keyless_on = not self.keys
        """Keyless access, as appdb keeps it: on while no key was ever added."""

    def add(self, key: str, team: str) -> None:
        """A new key: keyless access ends (as ``tansaku keys create`` does)."""
        self.keys[key] = team
        self.keyless_on = False

    def verify(self, key: str) -> str | None:
        return self.keys.get(key)

    def any(self) -> bool:
        return bool(self.keys)

    def keyless(self) -> bool:
        return self.keyless_on


class Live:
    def __init__(self, app: Any, base_url: str) -> None:
        self.app = app
        self.base_url = base_url

    @property
    def state(self) -> Any:
        return self.app.state.tansaku


@contextmanager
def live_server(home: Path, keys: dict[str, str] | None = None) -> Iterator[Live]:
    client = tansaku.connect(home, embedder=HashEmbedder(32))
    app = create_app(
        client,
        settings=ServerSettings(),
        keys=DictKeys(keys) if keys is not None else None,
        warm_up=False,
    )
    config = uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning", lifespan="on")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, name="uvicorn-ui", daemon=True)
    thread.start()
    deadline = time.monotonic() + 60
    try:
        while not server.started:
            if not thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError("uvicorn did not start")
            time.sleep(0.02)
        port = server.servers[0].sockets[0].getsockname()[1]
        yield Live(app, f"http://127.0.0.1:{port}")
    finally:
        server.should_exit = True
        thread.join(30)
        client.close()

"""A real uvicorn server on 127.0.0.1 (a free port, in a thread) for the API tests, the
workspace they serve and a small key store."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import date
from pathlib import Path
from typing import Any

import httpx
import uvicorn

import tansaku
from tansaku.records import Record
from tansaku.server import ServerSettings, create_app
from tansaku.testing import HashEmbedder


def free_port() -> int:
    """A port of 127.0.0.1 that nothing listens on now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def serve_process(
    home: Path, port: int, *options: str, env: dict[str, str] | None = None
) -> subprocess.Popen[str]:
    """``tansaku serve`` over ``home`` in a process of its own, as a user starts it (its
    workspace's appdb, never ``TANSAKU_DATABASE_URL``; ``env`` added to this one's), its output
    and errors together in ``stdout``."""
    environ = dict(os.environ, **(env or {}))
    environ.pop("TANSAKU_DATABASE_URL", None)
    cmd = [sys.executable, "-m", "tansaku.cli.main", "serve", "--home", str(home)]
    return subprocess.Popen(
        [*cmd, "--port", str(port), *options],
        env=environ,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


KEY_ALPHA = "tsk_alpha_0123456789abcdef"
KEY_BETA = "tsk_beta_fedcba9876543210"

ALPHA_MANUALS = [
    ("fridge", "冷蔵庫の温度管理", "冷蔵庫の温度は毎朝確認し、5度を超えたら店長に報告します。"),
    ("opening", "開店準備の手順", "開店前にレジの釣り銭を数え、客席とトイレを清掃します。"),
    ("allergy", "アレルギー対応", "アレルギーのお客様には原材料表を見せ、調理器具を分けます。"),
]
BETA_SECRET = [
    ("vault", "金庫の管理", "ベータ社の金庫は閉店後に二人で施錠し、鍵は本部で保管します。"),
]
BETA_MANUALS = [
    ("beta-fridge", "ベータ店の冷蔵庫", "ベータ店では冷蔵庫の霜取りを毎週月曜日に行います。"),
]


def records(rows: list[tuple[str, str, str]]) -> list[Record]:
    return [
        Record(id=f"{doc}:body", doc_id=doc, field="body", text=text, metadata={"title": title})
        for doc, title, text in rows
    ]


def build_workspace(home: Path) -> tansaku.Tansaku:
    """Team alpha: ``manuals``; team beta: ``secret`` and its own records in ``manuals``."""
    client = tansaku.connect(home, embedder=HashEmbedder(32))
    client.ingest_records(records(ALPHA_MANUALS), collection="manuals", team="alpha")
    client.ingest_records(records(BETA_MANUALS), collection="manuals", team="beta")
    client.ingest_records(records(BETA_SECRET), collection="secret", team="beta")
    from tansaku.demo.tables import install_demo_tables

    install_demo_tables(home, now=date(2025, 12, 11))
    return client


class DictKeys:
    """A key store over a dict (key → team): the server's ``KeyStore`` protocol."""

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
    def __init__(self, app: Any, server: uvicorn.Server, base_url: str) -> None:
        self.app = app
        self.server = server
        self.base_url = base_url

    @property
    def state(self) -> Any:
        return self.app.state.tansaku

    def client(self, key: str | None = None, **kwargs: Any) -> httpx.Client:
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        return httpx.Client(base_url=self.base_url, headers=headers, timeout=60, **kwargs)


@contextmanager
def live_server(app: Any, *, http: Any = None) -> Iterator[Live]:
    """``app`` under uvicorn with the protocol ``tansaku serve`` runs (``http``: another)."""
    from tansaku.server.protocol import http_protocol

    config = uvicorn.Config(
        app,
        host="127.0.0.1",
        port=0,
        log_level="warning",
        lifespan="on",
        http=http or http_protocol(),
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, name="uvicorn", daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError("uvicorn did not start")
        time.sleep(0.02)
    port = server.servers[0].sockets[0].getsockname()[1]
    try:
        yield Live(app, server, f"http://127.0.0.1:{port}")
    finally:
        server.should_exit = True
        thread.join(30)


def make_app(client: tansaku.Tansaku, keys: dict[str, str] | None, **settings: Any) -> Any:
    """The API of ``client``; team ``alpha``'s keys are admin keys (they read ``/metrics``)
    unless ``admin_teams`` says otherwise."""
    settings.setdefault("admin_teams", ("alpha",))
    return create_app(
        client,
        settings=ServerSettings(**settings),
        keys=DictKeys(keys) if keys is not None else None,
        warm_up=False,
        ui=False,  # the API alone: the web UI has tests of its own
    )

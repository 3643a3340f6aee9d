"""API keys kept by the server for half a second (``tansaku.server.keys.AppdbKeys``): a key
revoked with ``tansaku keys revoke`` — another process's write to appdb — is refused by a
request a second later; a new key works at once."""

from __future__ import annotations

import shutil
import subprocess
import sys
import time

import pytest

import tansaku
from tansaku.server import ServerSettings, create_app
from tansaku.testing import HashEmbedder

from .support import live_server

pytestmark = pytest.mark.integration


def _keys(home, *args: str) -> str:
    cmd = [sys.executable, "-m", "tansaku.cli.main", "keys", *args, "--home", str(home)]
    done = subprocess.run(cmd, capture_output=True, text=True, check=True, timeout=120)
    return done.stdout.strip()


def test_a_revoked_key_is_refused_within_a_second(template_workspace, tmp_path, monkeypatch):
    monkeypatch.delenv("TANSAKU_DATABASE_URL", raising=False)
    home = tmp_path / "ws"
    shutil.copytree(template_workspace, home)
    client = tansaku.connect(home, embedder=HashEmbedder(32))
    app = create_app(client, settings=ServerSettings(), warm_up=False, ui=False)
    try:
        with live_server(app) as server:
            key = _keys(home, "create", "--team", "alpha")
            with server.client(key) as http:
                for _ in range(3):  # the first asks appdb, the next are served from the cache
                    r = http.get("/api/collections")
                    assert r.status_code == 200, r.text
                    assert [c["name"] for c in r.json()["collections"]] == ["manuals"]
                _keys(home, "revoke", key[:12])
                time.sleep(1.1)
                r = http.get("/api/collections")
                assert r.status_code == 401, r.text
                assert r.json()["error"]["code"] == "invalid_key"
                other = _keys(home, "create", "--team", "alpha")
            with server.client(other) as http:  # only found keys are kept: a new one works
                assert http.get("/api/collections").status_code == 200
    finally:
        client.close()

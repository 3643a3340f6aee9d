"""Keyless access is the workspace's explicit setting: revoking the last API key does not turn
it back on (it did: "no active key" meant keyless); only ``tansaku keys keyless on`` does, and
creating a key turns it off again. The server reads the setting again at most half a second
after it changed (``tansaku.server.keys``), so each change here is followed by a pause past it."""

from __future__ import annotations

import json
import shutil
import time

import pytest
from typer.testing import CliRunner

import tansaku
from tansaku.cli.main import app as cli
from tansaku.server import ServerSettings, create_app
from tansaku.testing import HashEmbedder

from .support import live_server

pytestmark = pytest.mark.integration


def _cli(*args: str) -> str:
    result = CliRunner().invoke(cli, list(args))
    assert result.exit_code == 0, result.output
    time.sleep(1.1)  # past the server's key cache (changes are honoured within a second)
    return result.stdout


def test_revoking_the_last_key_keeps_keys_required(template_workspace, tmp_path, monkeypatch):
    monkeypatch.delenv("TANSAKU_DATABASE_URL", raising=False)
    home = tmp_path / "ws"
    shutil.copytree(template_workspace, home)
    client = tansaku.connect(home, embedder=HashEmbedder(32))
    app = create_app(client, settings=ServerSettings(), warm_up=False, ui=False)
    try:
        with live_server(app) as server, server.client() as anonymous:
            assert anonymous.get("/api/collections").status_code == 200  # fresh: keyless
            assert json.loads(_cli("keys", "keyless", "--json", "--home", str(home))) == {
                "keyless": True,
                "active_keys": 0,
            }
            key = _cli("keys", "create", "--team", "beta", "--home", str(home)).strip()
            assert anonymous.get("/api/collections").status_code == 401
            _cli("keys", "revoke", key[:12], "--home", str(home))
            r = anonymous.get("/api/collections")
            assert r.status_code == 401, r.text  # the last key revoked: still no keyless access
            assert r.json()["error"]["code"] == "unauthorized"
            assert "off" in _cli("keys", "keyless", "--home", str(home))

            assert "on" in _cli("keys", "keyless", "on", "--home", str(home))
            assert anonymous.get("/api/collections").status_code == 200
            _cli("keys", "create", "--team", "alpha", "--home", str(home))
            assert anonymous.get("/api/collections").status_code == 401
    finally:
        client.close()


def test_keyless_takes_on_or_off_only(tmp_path):
    result = CliRunner().invoke(cli, ["keys", "keyless", "maybe", "--home", str(tmp_path)])
    assert result.exit_code == 2
    assert "on か off" in result.output

"""DNS rebinding and cross-origin writes against a keyless server: while requests without a
key are served, only loopback ``Host`` names (and the configured ones) are answered — anything
else is 421 — and a browser's write from another origin is 403. A server that requires keys
accepts any ``Host`` (a key authenticates there)."""

from __future__ import annotations

import shutil
from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient

import tansaku
from tansaku.server.hostguard import allowed_host, host_name
from tansaku.testing import HashEmbedder

from .support import KEY_ALPHA, DictKeys, Live, live_server, make_app

pytestmark = pytest.mark.integration
SEARCH = {"query": "冷蔵庫", "collection": "manuals"}


@pytest.fixture
def keyless(template_workspace, tmp_path) -> Iterator[Live]:
    """A keyless loopback server (no key exists) that also accepts ``tansaku.lan``."""
    home = tmp_path / "ws"
    shutil.copytree(template_workspace, home)
    client = tansaku.connect(home, embedder=HashEmbedder(32))
    try:
        with live_server(make_app(client, {}, allowed_hosts=("tansaku.lan",))) as server:
            yield server
    finally:
        client.close()


def _port(live: Live) -> str:
    return live.base_url.rsplit(":", 1)[1]


def test_a_keyless_server_answers_only_loopback_and_configured_host_names(keyless):
    port = _port(keyless)
    with keyless.client() as http:
        for host in (f"127.0.0.1:{port}", f"localhost:{port}", f"[::1]:{port}", "LOCALHOST"):
            r = http.get("/api/collections", headers={"Host": host})
            assert r.status_code == 200, (host, r.text)
        assert http.get("/healthz", headers={"Host": f"tansaku.lan:{port}"}).status_code == 200
        for host in (
            f"attacker.example:{port}",  # a rebound name: the browser sends the page's host
            "127.0.0.1.attacker.example",
            "localhost.attacker.example",
            "tansaku.lan.attacker.example",
        ):
            r = http.get("/api/collections", headers={"Host": host})
            assert r.status_code == 421, (host, r.text)
            error = r.json()["error"]
            assert error["code"] == "host_not_allowed"
            assert "--allow-host" in error["message"]
            assert r.headers["x-content-type-options"] == "nosniff"
        rebound_write = http.post("/api/search", json=SEARCH, headers={"Host": "attacker.example"})
        assert rebound_write.status_code == 421


def test_a_keyless_server_refuses_cross_origin_writes(keyless):
    own = keyless.base_url
    with keyless.client() as http:
        for headers in (
            {"Origin": "http://attacker.example"},
            {"Origin": f"http://localhost:{_port(keyless)}"},  # another origin of this machine
            {"Origin": "null"},
            {"Sec-Fetch-Site": "cross-site"},
        ):
            r = http.post("/api/collections", json={"name": "planted"}, headers=headers)
            assert r.status_code == 403, (headers, r.text)
            assert r.json()["error"]["code"] == "cross_site_request"
        # reads from anywhere are still answered (a browser's same-origin policy hides them)
        assert http.get(
            "/api/collections", headers={"Origin": "http://attacker.example"}
        ).is_success
        # the same origin, a browser's own same-origin form post, and curl are served
        for headers in (
            {"Origin": own},
            {"Origin": "null", "Sec-Fetch-Site": "same-origin"},
            {"Sec-Fetch-Site": "same-origin"},
            {},
        ):
            r = http.post("/api/search", json={**SEARCH, "collection": "nothing"}, headers=headers)
            assert r.status_code == 404, (headers, r.text)  # reached the route
        names = [c["name"] for c in http.get("/api/collections").json()["collections"]]
        assert "planted" not in names


def test_a_server_that_requires_keys_accepts_any_host(live):
    with live.client(KEY_ALPHA) as http:
        r = http.post("/api/search", json=SEARCH, headers={"Host": "search.example.com"})
        assert r.status_code == 200, r.text
    with live.client() as anonymous:
        r = anonymous.get("/api/collections", headers={"Host": "search.example.com"})
        assert r.status_code == 401


def test_the_guard_follows_the_keys_created_while_running(keyless):
    keys: DictKeys = keyless.state.keys
    with keyless.client() as http:
        assert http.get("/healthz", headers={"Host": "attacker.example"}).status_code == 421
        keys.add(KEY_ALPHA, "alpha")
        r = http.get(
            "/api/collections",
            headers={"Host": "attacker.example", "Authorization": f"Bearer {KEY_ALPHA}"},
        )
        assert r.status_code == 200, r.text


def test_in_process_clients_name_their_host_explicitly(template_workspace, tmp_path):
    """Starlette's TestClient sends ``Host: testserver``: a test allows that name through the
    setting, as an operator would, rather than the check being loosened."""
    home = tmp_path / "ws"
    shutil.copytree(template_workspace, home)
    with tansaku.connect(home, embedder=HashEmbedder(32)) as client:
        with TestClient(make_app(client, None)) as http:
            assert http.get("/healthz").status_code == 421
        with TestClient(make_app(client, None, allowed_hosts=("testserver",))) as http:
            assert http.get("/healthz").status_code == 200


@pytest.mark.parametrize(
    ("host", "name", "allowed"),
    [
        ("127.0.0.1:8000", "127.0.0.1", True),
        ("127.1.2.3", "127.1.2.3", True),
        ("[::1]:8000", "::1", True),
        ("LocalHost.:80", "localhost", True),
        ("tansaku.lan:8000", "tansaku.lan", True),
        ("0.0.0.0:8000", "0.0.0.0", False),
        ("192.168.1.5:8000", "192.168.1.5", False),
        ("[::1", "", False),
        ("", "", False),
    ],
)
def test_host_names(host, name, allowed):
    assert host_name(host) == name
    assert allowed_host(host, ("tansaku.lan",)) is allowed

"""``/healthz`` and ``/metrics`` do not give counts over every team to anyone who asks: without
a key ``/healthz`` says only ok/degraded, a team's key sees its own collections' count, an admin
key (``admin_teams``) or the keyless local server the workspace's; ``/metrics`` needs an admin
key (or the keyless local server)."""

from __future__ import annotations

import shutil
from collections.abc import Iterator

import pytest

import tansaku
from tansaku.testing import HashEmbedder

from .support import KEY_ALPHA, KEY_BETA, Live, live_server, make_app

pytestmark = pytest.mark.integration
KEY_OPS = "tsk_ops_00112233445566778899"


@pytest.fixture(scope="module")
def keyed(template_workspace, tmp_path_factory) -> Iterator[Live]:
    home = tmp_path_factory.mktemp("health") / "ws"
    shutil.copytree(template_workspace, home)
    client = tansaku.connect(home, embedder=HashEmbedder(32))
    keys = {KEY_ALPHA: "alpha", KEY_BETA: "beta", KEY_OPS: "ops"}
    try:
        with live_server(make_app(client, keys, admin_teams=("ops",))) as server:
            yield server
    finally:
        client.close()


def test_healthz_without_a_key_says_only_the_status(keyed):
    with keyed.client() as anonymous:
        r = anonymous.get("/healthz")
        assert r.status_code == 200
        assert r.json() == {"status": "ok"}
        wrong = anonymous.get("/healthz", headers={"Authorization": "Bearer tsk_wrong"})
        assert wrong.status_code == 401


def test_healthz_counts_what_the_key_may_see(keyed):
    counts = {}
    for name, key in (("alpha", KEY_ALPHA), ("beta", KEY_BETA), ("ops", KEY_OPS)):
        with keyed.client(key) as http:
            body = http.get("/healthz").json()
            assert body["status"] == "ok"
            assert body["checks"]["appdb"]["ok"] is True
            counts[name] = body["checks"]["engine"]["collections"]
    # alpha sees manuals; beta manuals and secret; the admin the whole workspace
    assert counts == {"alpha": 1, "beta": 2, "ops": 2}


def test_metrics_need_an_admin_key(keyed):
    with keyed.client() as anonymous:
        r = anonymous.get("/metrics")
        assert r.status_code == 401 and r.json()["error"]["code"] == "unauthorized"
    with keyed.client(KEY_BETA) as team:
        r = team.get("/metrics")
        assert r.status_code == 403
        assert r.json()["error"]["code"] == "admin_only"
        assert "--admin-team" in r.json()["error"]["message"]
        assert "tansaku_search_total" not in r.text
    with keyed.client(KEY_OPS) as admin:
        r = admin.get("/metrics")
        assert r.status_code == 200 and "tansaku_search_total" in r.text


def test_the_keyless_local_server_shows_both(template_workspace, tmp_path):
    home = tmp_path / "ws"
    shutil.copytree(template_workspace, home)
    client = tansaku.connect(home, embedder=HashEmbedder(32))
    try:
        with live_server(make_app(client, None)) as server, server.client() as http:
            body = http.get("/healthz").json()
            assert body["checks"]["engine"]["collections"] == 2
            assert http.get("/metrics").status_code == 200
    finally:
        client.close()

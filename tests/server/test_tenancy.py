"""The team comes from the API key, never from the body or the query string: team alpha's key
cannot reach team beta's collections, records, events, feedback, unanswered questions or jobs
on any route. Keyless access only on loopback while no key exists."""

from __future__ import annotations

import time

import pytest

import tansaku
from tansaku.server import ServerNotSecured, ServerSettings, create_app
from tansaku.testing import HashEmbedder

from .support import KEY_ALPHA, KEY_BETA, DictKeys, live_server, make_app

pytestmark = pytest.mark.integration


def test_alpha_cannot_reach_betas_data_on_any_route(live):
    state = live.state
    with live.client(KEY_BETA) as beta:
        searched = beta.post("/api/search", json={"query": "金庫", "collection": "secret"})
        assert searched.status_code == 200
        beta_qid = searched.json()["query_id"]
        beta_fb = beta.post("/api/feedback", json={"query_id": beta_qid, "rating": 1})
        assert beta_fb.status_code == 201, beta_fb.text
    unanswered = state.appdb.unanswered.add(
        team="beta", collection="secret", question="金庫の番号は?", reason="出典なし", tools=[]
    )
    beta_job = state.jobs.submit(
        kind="ingest", team="beta", collection="secret", files=[], work=lambda j: {"failed": []}
    )
    state.jobs.wait(beta_job.id, 60)
    beta_conversation = state.appdb.conversations.create("beta").id

    with live.client(KEY_ALPHA) as alpha:
        checks = {
            "search": alpha.post("/api/search", json={"query": "金庫", "collection": "secret"}),
            "records": alpha.get("/api/collections/secret/records"),
            "records q": alpha.get("/api/collections/secret/records", params={"q": "金庫"}),
            "config": alpha.get("/api/collections/secret/config"),
            "delete": alpha.delete("/api/collections/secret"),
            "ask": alpha.post(
                "/api/ask", json={"question": "金庫の管理は?", "collections": {"manuals": "secret"}}
            ),
            "feedback": alpha.post("/api/feedback", json={"query_id": beta_qid, "rating": -1}),
            "job": alpha.get(f"/api/jobs/{beta_job.id}"),
            "resolve": alpha.post(f"/api/unanswered/{unanswered.id}/resolve", json={}),
            "qa": alpha.post("/api/qa/generate", json={"source": "secret", "target": "x_qa"}),
            "cancel": alpha.post(f"/api/jobs/{beta_job.id}/cancel"),
            "conversation": alpha.get(f"/api/conversations/{beta_conversation}"),
        }
        for name, r in checks.items():
            assert r.status_code == 404, (name, r.text)
            assert "金庫" not in r.text.replace("金庫の管理は", ""), name
        upload = alpha.post(
            "/api/ingest",
            data={"collection": "secret"},
            files={"files": ("a.md", "# 見出し\n本文".encode(), "text/markdown")},
        )
        assert upload.status_code == 409
        # a preview naming beta's collection gets no mapping of it (nor a hint that it exists)
        preview = alpha.post(
            "/api/ingest/preview",
            data={"collection": "secret"},
            files={"file": ("店舗.csv", "店舗名,住所\n新宿店,東京都新宿区".encode(), "text/csv")},
        )
        assert preview.status_code == 200 and preview.json()["current"] is None
        listed_conversations = alpha.get("/api/conversations").json()
        assert beta_conversation not in str(listed_conversations)
        listed = alpha.get("/api/collections").json()["collections"]
        assert [c["name"] for c in listed] == ["manuals"]
        assert listed[0]["records"] == 3  # beta's record in the shared collection not counted
        hits = alpha.post(
            "/api/search", json={"query": "冷蔵庫の霜取り", "collection": "manuals", "top_k": 10}
        ).json()["hits"]
        assert hits and all(h["doc_id"] != "beta-fridge" for h in hits)
        page = alpha.get("/api/collections/manuals/records", params={"limit": 200}).json()
        assert "beta-fridge" not in {r["doc_id"] for r in page["records"]}
        assert alpha.get("/api/unanswered").json()["unanswered"] == []
        stats = alpha.get("/api/feedback/stats").json()
        assert "金庫" not in str(stats)
        # a team named in the query string or the body changes nothing
        forced = alpha.post(
            "/api/search?team=beta&tenant=beta",
            json={"query": "金庫", "collection": "manuals"},
        )
        assert forced.status_code == 200 and forced.json()["plan"]["tenant"] == "alpha"
        smuggled = alpha.post(
            "/api/search", json={"query": "金庫", "collection": "secret", "tenant": "beta"}
        )
        assert smuggled.status_code == 422
    assert state.appdb.unanswered.get("beta", unanswered.id).resolved is False


def test_keys_are_required_and_checked(live):
    with live.client() as anonymous:
        r = anonymous.get("/api/collections")
        assert r.status_code == 401 and r.json()["error"]["code"] == "unauthorized"
        assert r.headers["www-authenticate"] == "Bearer"
        assert anonymous.get("/healthz").status_code == 200  # health needs no key
        bad = anonymous.get("/api/collections", headers={"Authorization": "Bearer tsk_wrong_key"})
        assert bad.status_code == 401 and bad.json()["error"]["code"] == "invalid_key"
        basic = anonymous.get("/api/collections", headers={"Authorization": "Basic eDp5"})
        assert basic.status_code == 401
        header = anonymous.get("/api/collections", headers={"X-API-Key": KEY_BETA})
        assert [c["name"] for c in header.json()["collections"]] == ["manuals", "secret"]
        in_query = anonymous.get("/api/collections", params={"api_key": KEY_BETA})
        assert in_query.status_code == 401


def test_keyless_on_loopback_until_a_key_exists(workspace_copy):
    keys = DictKeys({})
    app = create_app(workspace_copy, keys=keys, warm_up=False, ui=False)
    with live_server(app) as server, server.client() as http:
        assert http.get("/api/collections").json() == {"collections": []}  # the default team
        r = http.post("/api/search", json={"query": "金庫", "collection": "secret"})
        assert r.status_code == 404
        keys.add("tsk_new_key_000000000000", "alpha")
        assert http.get("/api/collections").status_code == 401


def test_refuses_to_listen_beyond_loopback_without_keys(workspace_copy):
    for host in ("0.0.0.0", "192.168.1.10", "::"):
        with pytest.raises(ServerNotSecured, match="API キーが必要"):
            create_app(
                workspace_copy,
                settings=ServerSettings(host=host),
                keys=DictKeys({}),
                warm_up=False,
                ui=False,
            )
    app = make_app(workspace_copy, {KEY_ALPHA: "alpha"}, host="0.0.0.0")
    assert app.state.tansaku.settings.loopback is False


@pytest.fixture
def workspace_copy(template_workspace, tmp_path):
    import shutil

    shutil.copytree(template_workspace, tmp_path / "ws")
    client = tansaku.connect(tmp_path / "ws", embedder=HashEmbedder(32))
    yield client
    client.close()


def test_keys_from_appdb(workspace_copy):
    app = create_app(workspace_copy, warm_up=False, ui=False)  # keys: the workspace's appdb
    db = app.state.tansaku.appdb
    with live_server(app) as server:
        with server.client() as http:
            assert http.get("/api/collections").status_code == 200  # no key yet: keyless
        key, _ = db.keys.create_key("beta", "テスト")
        time.sleep(1.1)  # the server reads keyless access again within a second
        with server.client() as http:
            assert http.get("/api/collections").status_code == 401
        with server.client(key) as http:
            names = [c["name"] for c in http.get("/api/collections").json()["collections"]]
            assert names == ["manuals", "secret"]


def test_unanswered_listing_and_resolving(live):
    repo = live.state.appdb.unanswered
    first = repo.add(
        team="alpha", collection="manuals", question="床の清掃は?", reason="出典なし", tools=[]
    )
    repo.add(team="alpha", collection="reports", question="先月の売上予測", reason="予測", tools=[])
    with live.client(KEY_ALPHA) as http:
        listed = http.get("/api/unanswered", params={"collection": "manuals"}).json()
        assert [u["question"] for u in listed["unanswered"]] == ["床の清掃は?"]
        assert listed["total"] == 1
        r = http.post(
            f"/api/unanswered/{first.id}/resolve", json={"resolution": "マニュアルに追記した"}
        )
        assert r.status_code == 200 and r.json()["resolved"] is True
        still = http.get("/api/unanswered", params={"resolved": "false"}).json()["unanswered"]
        assert [u["question"] for u in still] == ["先月の売上予測"]
        assert http.post("/api/unanswered/999999/resolve").status_code == 404
        assert http.post("/api/unanswered/abc/resolve").status_code == 422
        assert http.get("/api/unanswered", params={"from": "昨日"}).status_code == 400

"""``POST /api/collections/{name}/fetch`` over real HTTP: a Japanese JSONL dataset on a local
fake dataset host (allowed by ``[fetch] allow_hosts``) is downloaded and ingested as a job into
the caller's team's collection; a disallowed host, a redirect to an internal address, a too large
file, a wrong type and an unreachable URL are 4xx with a Japanese message and start no job."""

from __future__ import annotations

import io
import json
import time
import zipfile
from typing import Any

import httpx
import pytest

from tansaku.testing.fake_dataset_server import FakeDatasetServer

from .support import KEY_ALPHA, KEY_BETA

pytestmark = pytest.mark.integration

FAQ = [
    {"id": "kyuka", "title": "有給休暇の申請", "text": "有給休暇は勤怠システムから申請します。"},
    {"id": "keihi", "title": "経費精算の締め日", "text": "経費精算の締め日は毎月25日です。"},
]
JSONL = "\n".join(json.dumps(r, ensure_ascii=False) for r in FAQ).encode("utf-8") + b"\n"


@pytest.fixture
def site():
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("総務/faq.jsonl", JSONL)
        zf.writestr("README.html", b"<p>x</p>")
    files = {
        "/faq-ja.jsonl": JSONL,
        "/big.jsonl": JSONL * 400,
        "/page.html": b"<p>x</p>",
        "/faq.zip": buf.getvalue(),
    }
    with FakeDatasetServer(
        files, redirects={"/meta.jsonl": "http://169.254.169.254/latest/meta-data/"}
    ) as fake:
        yield fake


@pytest.fixture
def server(fresh):
    home = fresh.state.client.workspace.home
    with (home / "tansaku.toml").open("a", encoding="utf-8") as fh:
        fh.write('\n[fetch]\nallow_hosts = ["127.0.0.1"]\nmax_mb = 0.01\ntimeout_s = 10\n')
    return fresh


def finished(http: httpx.Client, job_id: str) -> dict[str, Any]:
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        job = http.get(f"/api/jobs/{job_id}").json()
        if job["status"] in ("done", "failed", "cancelled"):
            return job
        time.sleep(0.05)
    raise AssertionError(f"job {job_id} did not finish")


def test_a_japanese_dataset_is_fetched_and_searchable_by_its_team_only(server, site):
    with server.client(KEY_ALPHA) as http:
        r = http.post("/api/collections/faq-web/fetch", json={"url": f"{site.url}/faq-ja.jsonl"})
        assert r.status_code == 202, r.text
        job = finished(http, r.json()["id"])
        assert job["status"] == "done", job
        assert job["files"] == ["faq-ja.jsonl"]
        assert job["params"]["url"].endswith("/faq-ja.jsonl")
        assert job["result"]["inserted"] >= 2
        hits = http.post(
            "/api/search", json={"collection": "faq-web", "query": "経費精算の締め日"}
        ).json()["hits"]
        assert any("25日" in h["text"] for h in hits)
    with server.client(KEY_BETA) as http:
        r = http.post("/api/search", json={"collection": "faq-web", "query": "有給休暇"})
        assert r.status_code == 404
    assert list((server.state.client.workspace.home / "server" / "uploads").iterdir()) == []


@pytest.mark.parametrize(
    ("path", "status", "code", "words"),
    [
        ("/meta.jsonl", 403, "fetch_host_refused", "公開されていないアドレス"),
        ("/big.jsonl", 413, "file_too_large", "大きすぎます"),
        ("/page.html", 415, "unsupported_type", "取り込めない形式"),
        ("/missing.jsonl", 422, "fetch_unreachable", "404"),
    ],
)
def test_refusals_are_japanese_4xx_and_start_no_job(server, site, path, status, code, words):
    with server.client(KEY_ALPHA) as http:
        r = http.post("/api/collections/faq-web/fetch", json={"url": f"{site.url}{path}"})
    assert r.status_code == status, r.text
    assert r.json()["error"]["code"] == code
    assert words in r.json()["error"]["message"]
    assert list((server.state.client.workspace.home / "server" / "uploads").iterdir()) == []


def test_a_host_not_allowed_is_refused_before_any_connection(server, site):
    port = site.url.rsplit(":", 1)[1]
    with server.client(KEY_ALPHA) as http:
        r = http.post(
            "/api/collections/faq-web/fetch", json={"url": f"http://localhost:{port}/faq-ja.jsonl"}
        )
        bad = http.post("/api/collections/faq-web/fetch", json={"url": "file:///etc/passwd"})
        extra = http.post(
            "/api/collections/faq-web/fetch",
            json={"url": f"{site.url}/faq-ja.jsonl", "team": "beta"},
        )
    assert r.status_code == 403 and r.json()["error"]["code"] == "fetch_host_refused"
    assert bad.status_code == 400 and "https://" in bad.json()["error"]["message"]
    assert extra.status_code == 422  # the team comes from the key, never from the body
    assert site.requests == []


def test_a_zip_is_unpacked_and_only_its_data_files_ingested(server, site):
    with server.client(KEY_ALPHA) as http:
        r = http.post("/api/collections/faq-zip/fetch", json={"url": f"{site.url}/faq.zip"})
        assert r.status_code == 202, r.text
        job = finished(http, r.json()["id"])
        assert job["status"] == "done", job
        assert job["files"] == ["faq/総務/faq.jsonl"]
        hits = http.post(
            "/api/search", json={"collection": "faq-zip", "query": "有給休暇の申請"}
        ).json()["hits"]
    assert {h["doc_id"] for h in hits} == {"kyuka", "keihi"}  # the rows' own ids

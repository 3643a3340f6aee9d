"""``tansaku fetch``: a Japanese JSONL dataset downloaded from a local fake dataset host
(allowed by ``[fetch] allow_hosts``) and ingested like ``tansaku ingest``; a host not allowed
ends the command non-zero with a Japanese message and no connection."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from tansaku.cli.main import app
from tansaku.testing.fake_dataset_server import FakeDatasetServer

runner = CliRunner()
FAQ = [
    {"id": "kyuka", "title": "有給休暇の申請", "text": "有給休暇は勤怠システムから申請します。"},
    {"id": "keihi", "title": "経費精算の締め日", "text": "経費精算の締め日は毎月25日です。"},
]
JSONL = "\n".join(json.dumps(r, ensure_ascii=False) for r in FAQ).encode("utf-8") + b"\n"


@pytest.fixture
def home(tmp_path, monkeypatch):
    monkeypatch.setenv("TANSAKU_EMBEDDER", "hash")
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "tansaku.toml").write_text('[fetch]\nallow_hosts = ["127.0.0.1"]\n', encoding="utf-8")
    return ws


def test_fetch_ingests_a_japanese_dataset(home):
    with FakeDatasetServer({"/faq-ja.jsonl": JSONL}) as site:
        args = ["fetch", f"{site.url}/faq-ja.jsonl", "-c", "faq", "--home", str(home), "--json"]
        res = runner.invoke(app, args)
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["inserted"] >= 2
    found = runner.invoke(app, ["search", "経費精算", "-c", "faq", "--home", str(home), "--json"])
    assert "25日" in found.stdout
    assert list((home / "server" / "uploads").iterdir()) == []


def test_fetch_refuses_a_host_not_allowed(home):
    with FakeDatasetServer({"/faq-ja.jsonl": JSONL}) as site:
        port = site.url.rsplit(":", 1)[1]
        url = f"http://localhost:{port}/faq-ja.jsonl"
        res = runner.invoke(app, ["fetch", url, "-c", "faq", "--home", str(home)])
        assert site.requests == []
    assert res.exit_code != 0
    assert "取り込めません" in res.output and "allow_hosts" in res.output

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


@pytest.mark.integration
def test_a_served_folder_embeds_queries_with_its_configured_embedder(tmp_path, monkeypatch):
    """``create_app(folder)`` (what ``tansaku serve`` runs) opens the workspace with its
    ``[embedder]``, the model its collections were built with — not the bundled default."""
    import tansaku
    from tansaku.embed import load_embedder
    from tansaku.server import ServerSettings, create_app
    from tansaku.testing.fake_embedding_server import FakeEmbeddingServer

    from .support import ALPHA_MANUALS, live_server, records

    for name in ("TANSAKU_EMBEDDER", "TANSAKU_EMBED_BASE_URL", "TANSAKU_EMBED_MODEL"):
        monkeypatch.delenv(name, raising=False)
    home = tmp_path / "ws"
    home.mkdir()
    with FakeEmbeddingServer(dim=48) as srv:
        (home / "tansaku.toml").write_text(
            f'[embedder]\nprovider = "tei"\nbase_url = "{srv.url}/v1"\nmodel = "fake-e5"\n',
            encoding="utf-8",
        )
        with tansaku.connect(home, embedder=load_embedder(home)) as ts:
            ts.ingest_records(records(ALPHA_MANUALS), collection="manuals")
        embedded = len(srv.embedding_requests)
        app = create_app(home, settings=ServerSettings(), warm_up=False, ui=False)
        with live_server(app) as live, live.client() as http:
            r = http.post("/api/search", json={"query": "冷蔵庫の温度", "collection": "manuals"})
            assert r.status_code == 200, r.text
            assert r.json()["hits"][0]["doc_id"] == "fridge"
        asked = [q.body["input"] for q in srv.embedding_requests[embedded:]]
        assert any("冷蔵庫の温度" in str(texts) for texts in asked)

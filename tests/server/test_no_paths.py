"""No message a client receives names the server's absolute paths: a library error whose text
holds one (a damaged collection config names its file) is answered with the path relative to
the workspace."""

from __future__ import annotations

import pytest

from .support import KEY_ALPHA

pytestmark = pytest.mark.integration


def test_a_library_error_with_a_path_is_answered_without_it(fresh):
    home = fresh.state.client.workspace.home
    (home / "collections" / "manuals" / "config.toml").write_text("[search\n", encoding="utf-8")
    with fresh.client(KEY_ALPHA) as http:
        for r in (
            http.get("/api/collections"),
            http.post("/api/search", json={"query": "冷蔵庫", "collection": "manuals"}),
        ):
            assert r.status_code == 400, r.text
            message = r.json()["error"]["message"]
            assert "TOML が不正です" in message
            assert "collections/manuals/config.toml" in message
            assert str(home) not in r.text and str(home.parent) not in r.text
            assert str(home.resolve()) not in r.text

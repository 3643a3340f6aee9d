"""Listing collections while another process deletes one: the vanished collection is left out
(it failed — 2 listings in 1,098 through ``tansaku mcp`` — with the engine's message naming the
server's absolute path), and no message for a client keeps an absolute path."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

import tansaku
from tansaku.backends.embedded.views import info_of, list_infos, unless_gone
from tansaku.errors import public_message
from tansaku.testing import HashEmbedder

from .support import ok_json, run, start

pytestmark = pytest.mark.e2e


def _record(text: str) -> tansaku.Record:
    return tansaku.Record(id="a:body", doc_id="a", field="body", text=text)


def test_a_collection_deleted_by_another_process_under_a_view_is_left_out(tmp_path: Path):
    home = tmp_path / "ws"
    with tansaku.connect(home, embedder=HashEmbedder(32)) as ts:
        ts.ingest_records([_record("冷蔵庫の温度")], collection="keep")
        ts.ingest_records([_record("製氷機の故障")], collection="gone")
        names = ts.backend.names()
        view = ts.collection("gone")  # what a listing holds when the other process deletes
        ok_json(run("delete", str(home), "--collection", "gone"))

        assert info_of("gone", view).points == 1  # a snapshot: its counts need no shard
        with pytest.raises(Exception) as failure:  # the engine's own words, with the path
            view.store.total()
        assert str(home) in str(failure.value)
        shown = public_message(str(failure.value), home=home)
        assert str(home) not in shown and str(tmp_path) not in shown
        assert "collections/gone" in shown  # the workspace part stays, relative

        assert unless_gone("gone", lambda name: view.store.total(), ts.backend.exists) is None
        listed = list_infos(names, lambda n: info_of(n, ts.collection(n)), ts.backend.exists)
        assert [i.name for i in listed] == ["keep"]
        assert [i.name for i in ts.collections()] == ["keep"]


def test_listings_while_another_process_creates_and_deletes_collections(tmp_path: Path):
    home = tmp_path / "ws"
    with tansaku.connect(home, embedder=HashEmbedder(32)) as ts:
        ts.ingest_records([_record("冷蔵庫の温度")], collection="keep")
        churn = start("churn", str(home), "8")
        listings, failures = 0, []
        try:
            deadline = time.monotonic() + 60
            while churn.poll() is None and time.monotonic() < deadline:
                try:
                    names = {i.name for i in ts.collections()}
                    assert "keep" in names
                except Exception as exc:  # every failure is the finding
                    failures.append(f"{type(exc).__name__}: {exc}")
                listings += 1
            _, err = churn.communicate(timeout=60)
        finally:
            if churn.poll() is None:
                churn.kill()
        assert churn.returncode == 0, err
        assert "Traceback" not in err, err
        assert failures == [], failures[:3]
        assert listings > 100

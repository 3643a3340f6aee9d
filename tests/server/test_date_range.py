"""Dates outside the supported range (1900-01-01〜2999-12-31) are a 422 naming the parameter
and the range, on every route that takes a date — never a 500 (they were an OverflowError in
the feedback statistics, the unanswered log and its CSV, and the daily-report statistics)."""

from __future__ import annotations

import shutil
from collections.abc import Iterator

import pytest

import tansaku
from tansaku.server import ServerSettings, create_app
from tansaku.testing import HashEmbedder

from .support import KEY_ALPHA, DictKeys, Live, live_server

pytestmark = pytest.mark.integration
RANGE = {"min": "1900-01-01", "max": "2999-12-31"}


@pytest.fixture(scope="module")
def with_ui(template_workspace, tmp_path_factory) -> Iterator[Live]:
    """The API and the web UI (``/unanswered.csv`` is a UI route) on a real server."""
    home = tmp_path_factory.mktemp("dates") / "ws"
    shutil.copytree(template_workspace, home)
    client = tansaku.connect(home, embedder=HashEmbedder(32))
    app = create_app(
        client, settings=ServerSettings(), keys=DictKeys({KEY_ALPHA: "alpha"}), warm_up=False
    )
    try:
        with live_server(app) as server:
            yield server
    finally:
        client.close()


def _refused(r, parameter: str) -> None:
    assert r.status_code == 422, r.text
    error = r.json()["error"]
    assert error["code"] == "date_out_of_range"
    assert error["parameter"] == parameter
    assert error["range"] == RANGE
    expected = f"{parameter}: 日付は 1900-01-01〜2999-12-31 の範囲で指定してください"
    assert expected in error["message"]


@pytest.mark.parametrize(
    ("path", "params", "parameter"),
    [
        ("/api/feedback/stats", {"to": "9999-12-31"}, "to"),
        ("/api/feedback/stats", {"from": "0001-01-01"}, "from"),
        ("/api/feedback/stats", {"to": "9999-12-31T23:59:59+14:00"}, "to"),
        ("/api/unanswered", {"to": "9999-12-31"}, "to"),
        ("/api/unanswered", {"from": "0001-01-01"}, "from"),
        ("/unanswered.csv", {"to": "9999-12-31"}, "to"),
        ("/api/stats/claims", {"from": "9999-12-31", "days": "30"}, "from"),
        ("/api/stats/claims", {"to": "0001-01-01", "days": "30"}, "to"),
        ("/api/stats/claims", {"now": "0001-01-01"}, "now"),
        ("/api/stats/sales", {"period": "先月", "now": "9999-12-31"}, "now"),
        (
            "/api/stats/compare",
            {
                "metric": "sales",
                "current_start": "2025-11-01",
                "current_end": "9999-12-31",
                "previous_start": "2025-10-01",
                "previous_end": "2025-10-31",
            },
            "current_end",
        ),
    ],
)
def test_query_dates_out_of_range_are_422(with_ui, path, params, parameter):
    with with_ui.client(KEY_ALPHA) as http:
        _refused(http.get(path, params=params), parameter)


@pytest.mark.parametrize(
    ("extra", "parameter"),
    [
        ({"now": "9999-12-31"}, "now"),
        ({"now": "0001-01-01T00:00+14:00"}, "now"),
        ({"filter": {"date_from": "0001-01-01"}}, "filter.date_from"),
        ({"filter": {"date_to": "9999-12-31"}}, "filter.date_to"),
    ],
)
def test_body_dates_out_of_range_are_422(with_ui, extra, parameter):
    body = {"query": "先月の冷蔵庫", "collection": "manuals", **extra}
    with with_ui.client(KEY_ALPHA) as http:
        _refused(http.post("/api/search", json=body), parameter)


def test_dates_at_the_edges_of_the_range_are_served(with_ui):
    with with_ui.client(KEY_ALPHA) as http:
        for path, params in (
            ("/api/feedback/stats", {"from": "1900-01-01", "to": "2999-12-31"}),
            ("/api/unanswered", {"from": "1900-01-01", "to": "2999-12-31"}),
            ("/unanswered.csv", {"to": "2999-12-31"}),
            ("/api/stats/claims", {"from": "2999-12-01", "to": "2999-12-31"}),
            ("/api/stats/claims", {"period": "先月", "now": "1900-02-01"}),
        ):
            r = http.get(path, params=params)
            assert r.status_code == 200, (path, r.text)
        r = http.post(
            "/api/search",
            json={"query": "昨日の冷蔵庫", "collection": "manuals", "now": "2999-12-31T23:59"},
        )
        assert r.status_code == 200, r.text

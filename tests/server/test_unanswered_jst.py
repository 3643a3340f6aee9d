"""The unanswered log in Japan time: ``/unanswered.csv`` writes Asia/Tokyo with its offset (as
the page shows), and ``from``/``to`` days are Tokyo days in the CSV, the list and the feedback
statistics — over a real server."""

from __future__ import annotations

import csv
import io
import shutil
from collections.abc import Iterator
from datetime import UTC, datetime

import pytest

import tansaku
from tansaku.server import ServerSettings, create_app
from tansaku.testing import HashEmbedder

from .support import KEY_ALPHA, DictKeys, Live, live_server

pytestmark = pytest.mark.integration

MORNING = datetime(2025, 12, 10, 23, 30, tzinfo=UTC)  # 2025-12-11 08:30 in Tokyo
MIDNIGHT = datetime(2025, 12, 11, 15, 30, tzinfo=UTC)  # 2025-12-12 00:30 in Tokyo


@pytest.fixture
def fresh(template_workspace, tmp_path) -> Iterator[Live]:
    """The API and the web UI (``/unanswered.csv`` is a UI route) on a real server."""
    shutil.copytree(template_workspace, tmp_path / "ws")
    client = tansaku.connect(tmp_path / "ws", embedder=HashEmbedder(32))
    app = create_app(
        client, settings=ServerSettings(), keys=DictKeys({KEY_ALPHA: "alpha"}), warm_up=False
    )
    try:
        with live_server(app) as server:
            yield server
    finally:
        client.close()


def test_csv_times_are_tokyo_with_offset_and_days_are_tokyo_days(fresh):
    log = fresh.state.appdb.unanswered
    log.add("alpha", collection="manuals", question="朝の質問", reason="なし", asked_at=MORNING)
    log.add("alpha", collection="manuals", question="深夜の質問", reason="なし", asked_at=MIDNIGHT)
    day = {"from": "2025-12-11", "to": "2025-12-11"}
    with fresh.client(KEY_ALPHA) as http:
        every = http.get("/unanswered.csv")
        assert every.status_code == 200, every.text
        rows = list(csv.reader(io.StringIO(every.content.decode("utf-8-sig"))))
        assert rows[0][1] == "日時"
        when = {r[3]: r[1] for r in rows[1:]}
        assert when == {
            "朝の質問": "2025-12-11T08:30:00+09:00",
            "深夜の質問": "2025-12-12T00:30:00+09:00",
        }
        assert datetime.fromisoformat(when["朝の質問"]) == MORNING
        one_day = list(csv.reader(io.StringIO(http.get("/unanswered.csv", params=day).text)))
        assert [r[3] for r in one_day[1:]] == ["朝の質問"]
        listed = http.get("/api/unanswered", params=day).json()
        assert [q["question"] for q in listed["unanswered"]] == ["朝の質問"]
        naive = {"from": "2025-12-11T08:00", "to": "2025-12-11T09:00"}  # Tokyo time too
        listed = http.get("/api/unanswered", params=naive).json()
        assert [q["question"] for q in listed["unanswered"]] == ["朝の質問"]
        stats = http.get("/api/feedback/stats", params=day).json()
        assert stats["start"] == "2025-12-11T00:00:00+09:00"
        assert stats["end"] == "2025-12-12T00:00:00+09:00"

"""Every search the server runs — the API's and the agent tools' — recorded where feedback and
the dashboard read it: the SEARCH_EVENT line (as before), a row in appdb, and the metrics.

Installed on the shared client with ``Tansaku.with_services(events=…)`` (an atomic swap of its
frozen services) and swapped back when the app shuts down.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from tansaku.search.events import SearchEventLog
from tansaku.search.types import SearchResult
from tansaku.server.metrics import Metrics

log = logging.getLogger("tansaku.server")


class RecordingEventLog(SearchEventLog):
    def __init__(self, path: Path | None, *, appdb: Any, metrics: Metrics) -> None:
        super().__init__(path)
        self.appdb = appdb
        self.metrics = metrics

    def emit(self, result: SearchResult) -> dict[str, Any]:
        event = super().emit(result)
        self.metrics.observe_search(result, float(result.timings_ms.get("total", 0.0)) / 1000)
        team = event.get("tenant")
        if self.appdb is not None and team:
            try:
                self.appdb.events.record_result(str(team), result)
            except Exception:  # the search answered; a lost row must not fail it
                log.exception("search event %s not recorded in appdb", result.query_id)
        return event
